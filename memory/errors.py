"""Errors raised by the memory kernel, each carrying a message fit to show a user."""


class KernelError(Exception):
    """Base of every error the memory kernel reports; ``str()`` is the user-facing text."""

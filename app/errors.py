"""The app's own error: what a command tells the user in one line."""

from __future__ import annotations


class CommandError(Exception):
    """A command could not do what was asked: ``huichat: error: <message>``, exit ``status``.

    Commands raise it (and let the kernel's and the providers' errors through); the one
    error boundary, in ``huichat.app.wiring.main``, prints it.
    """

    def __init__(self, message: str, status: int = 1) -> None:
        super().__init__(message)
        self.status = status

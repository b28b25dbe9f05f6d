"""Errors raised by the memory kernel, each carrying a message fit to show a user."""


class KernelError(Exception):
    """Base of every error the memory kernel reports; ``str()`` is the user-facing text."""


class DeadlinePassed(KernelError):
    """Work given up at its deadline (it may still finish in the background); it may succeed later."""


class TooLong(KernelError):
    """Input over its configured length, refused before any work is done on it."""


class IndexUnavailable(KernelError):
    """The index cannot be read or written right now; the transcripts are unaffected.

    Memory then degrades instead of failing: turns still reach their transcripts and are
    reconciled into the index once it opens again.
    """


class EmbeddingInterrupted(KernelError):
    """Embedding stopped on request (``MemoryKernel.stop_embedding``): what was finished before is kept."""


class UnknownTurn(KernelError):
    """No transcript holds a turn with this id (the HTTP API answers 404)."""


class BadTurnId(KernelError):
    """Text that is not a turn id (the HTTP API answers 400)."""

"""Errors raised by providers, each with a one-line message fit to show a user."""


class ProviderError(Exception):
    """A provider failed; ``str()`` is the user-facing one-line reason.

    ``transient`` errors (rate limits, timeouts, dropped connections) may succeed when
    tried again; the others (bad key, unknown model, context too long) will not.
    """

    def __init__(self, message: str, *, transient: bool = False, provider: str = "") -> None:
        super().__init__(message)
        self.transient = transient
        self.provider = provider

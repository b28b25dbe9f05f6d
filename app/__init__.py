"""huichat: a terminal chat client whose memory never forgets a turn."""

from __future__ import annotations


def __getattr__(name: str) -> str:
    """``__version__``, read from the installed metadata only when asked (importlib.metadata is slow to load)."""
    if name != "__version__":
        raise AttributeError(f"module 'app' has no attribute {name!r}")
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("huichat")
    except PackageNotFoundError:  # running from a source tree without installing
        return "0.0.0+source"

"""huichat: a terminal chat client whose memory never forgets a turn.

One installed namespace: ``huichat.app`` (the faces and the conversation loop),
``huichat.memory`` (the kernel), ``huichat.providers`` (LLM access), and the styles and
default configuration as package data. In the repository these are the top-level folders
``app/``, ``memory/``, ``providers/``, ``styles/`` and ``configs/``; ``huichat/`` links them.
"""

from __future__ import annotations


def __getattr__(name: str) -> str:
    """``__version__``, read from the installed metadata only when asked (importlib.metadata is slow to load)."""
    if name != "__version__":
        raise AttributeError(f"module 'huichat' has no attribute {name!r}")
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("huichat")
    except PackageNotFoundError:  # running from a source tree without installing
        return "0.0.0+source"

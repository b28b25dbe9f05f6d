"""How the memory index is doing: one value the kernel owns and every face shows.

The transcripts are the source of truth, so a failing index never loses a turn; it only
changes what memory can do. ``OK``: every turn written is searchable. ``BEHIND``: some
turns reached their transcripts but not the index (a write failed while the index could
still be read); searches go on and the next ``maintain`` indexes them. ``UNAVAILABLE``: the
index cannot be opened or read; turns go to their transcripts only, searches raise
``IndexUnavailable``, and reopening memory reconciles what was written meanwhile.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from huichat.memory.errors import IndexUnavailable


class IndexState(StrEnum):
    """What the index can do now (see the module)."""

    OK = "ok"
    BEHIND = "behind"
    UNAVAILABLE = "unavailable"


@dataclass(frozen=True)
class IndexHealth:
    """The index's state and, unless it is ``OK``, why (one line, fit to show a user)."""

    state: IndexState = IndexState.OK
    reason: str = ""

    @classmethod
    def behind(cls, reason: str) -> IndexHealth:
        """Turns wait in their transcripts to be indexed, because of ``reason``."""
        return cls(IndexState.BEHIND, reason)

    @classmethod
    def unavailable(cls, reason: str) -> IndexHealth:
        """The index cannot be used, because of ``reason``."""
        return cls(IndexState.UNAVAILABLE, reason)

    @property
    def usable(self) -> bool:
        """True while the index can be searched (``OK`` or ``BEHIND``)."""
        return self.state is not IndexState.UNAVAILABLE

    def error(self) -> IndexUnavailable:
        """What a search (or any use of the index) raises while it is unavailable: one line, the reason."""
        return IndexUnavailable(f"memory is unavailable: {self.reason}")


OK = IndexHealth()

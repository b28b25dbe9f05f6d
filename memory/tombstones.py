"""Forgetting and correcting turns: records appended to a session's transcript.

A transcript is append-only, so what the user later says about a turn is a record after it,
never an edit of it: a **tombstone** marks a turn forgotten (or restores it), a
**correction** attaches a note to it. Both are session markers (``<!-- huichat:session
{"tombstone": …} -->``), which every version of the reader accepts at the end of a file.
Reading applies them in order: a forgotten turn keeps its place in the anchor chain (its
neighbours' links do not change) but is left out of the turns read — so reconcile removes
it from the index, and a reindex never brings it back. A purged turn has lost its text for
good: its block in the transcript is a tombstone of its own (``"purged": true``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

TOMBSTONE = "tombstone"
CORRECTION = "correction"
FORGOTTEN = "forgotten"
RESTORED = "restored"
PURGED = "purged"
"""A turn block whose text was removed for good (``huichat forget --purge``)."""


@dataclass(frozen=True)
class Correction:
    """A note the user attached to a turn later: recalled with it, marked as a later correction."""

    turn_id: str
    text: str
    at: datetime

    def to_record(self) -> dict[str, str]:
        """The marker's data."""
        return {"id": self.turn_id, "text": self.text, "at": self.at.isoformat()}


@dataclass
class Marks:
    """What a transcript's tombstones and corrections say, applied in the order written."""

    forgotten: set[str] = field(default_factory=set)
    corrections: dict[str, list[Correction]] = field(default_factory=dict)

    def read(self, meta: Mapping[str, Any]) -> bool:
        """Apply a session marker's data if it is a tombstone or a correction; True when it was one."""
        tombstone = meta.get(TOMBSTONE)
        if isinstance(tombstone, dict):
            turn_id = str(tombstone.get("id") or "")
            if tombstone.get("state") == RESTORED:
                self.forgotten.discard(turn_id)
            else:
                self.forgotten.add(turn_id)
            return True
        correction = meta.get(CORRECTION)
        if isinstance(correction, dict):
            try:
                note = Correction(
                    str(correction["id"]), str(correction["text"]), datetime.fromisoformat(correction["at"])
                )
            except (KeyError, TypeError, ValueError):
                return True  # a mangled note is no session fact either
            self.corrections.setdefault(note.turn_id, []).append(note)
            return True
        return False


def tombstone(turn_id: str, at: datetime, *, restore: bool = False) -> dict[str, Any]:
    """The session marker's data that forgets a turn (or restores it)."""
    return {TOMBSTONE: {"id": turn_id, "state": RESTORED if restore else FORGOTTEN, "at": at.isoformat()}}


def correction(note: Correction) -> dict[str, Any]:
    """The session marker's data that attaches ``note`` to its turn."""
    return {CORRECTION: note.to_record()}

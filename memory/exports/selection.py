"""Which sessions an export holds, read whole from the transcripts, optionally redacted."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, replace
from datetime import datetime
from pathlib import Path
from typing import Any

from huichat.memory.imports.stored import SessionLocator, StoredSession
from huichat.memory.turns import Message

Redactor = Callable[[str], str]
_IDS = frozenset({"id", "parent_id", "after", "current", "session_id", "message_id", "type", "kind", "v"})


@dataclass(frozen=True)
class Selection:
    """Sessions to export: all, one, or those with a turn in ``[since, until)``.

    A session is exported whole or not at all: a conversation cut in half would not be a
    faithful copy, and a branch could lose the message it follows.
    """

    since: datetime | None = None
    until: datetime | None = None
    session_id: str | None = None

    def wants(self, stored: StoredSession) -> bool:
        """True when ``stored`` belongs in the export."""
        if self.session_id is not None and stored.session_id != self.session_id:
            return False
        return any(
            (self.since is None or t.timestamp >= self.since) and (self.until is None or t.timestamp < self.until)
            for t in stored.turns
        )


def select(sessions_dir: Path, selection: Selection) -> Iterator[StoredSession]:
    """The chosen sessions with turns, in path order (by date), one at a time."""
    locator = SessionLocator(sessions_dir)
    for session_file in locator.session_files():
        stem = session_file.rsplit("/", 1)[-1].removeprefix("chat_").removesuffix(".md")
        if selection.session_id is not None and stem != selection.session_id:
            continue
        stored = locator.load(session_file)
        if stored.turns and selection.wants(stored):
            yield stored


def _scrub(value: Any, redact: Redactor) -> Any:
    if isinstance(value, str):
        return redact(value)
    if isinstance(value, Mapping):
        return {k: (v if k in _IDS else _scrub(v, redact)) for k, v in value.items()}
    if isinstance(value, list):
        return [_scrub(v, redact) for v in value]
    return value


def redacted(stored: StoredSession, redact: Redactor) -> StoredSession:
    """``stored`` with every text that could hold a secret passed through ``redact``.

    Message texts, topics and titles, and the import record's texts and raw source objects;
    ids, times and the source ids in turns' ``extra`` are left as they are.
    """
    turns = [
        replace(
            turn,
            topic=redact(turn.topic),
            messages=tuple(Message(m.role, redact(m.text), m.speaker, m.kind) for m in turn.messages),
        )
        for turn in stored.turns
    ]
    meta = dict(stored.meta)
    if isinstance(meta.get("title"), str):
        meta["title"] = redact(meta["title"])
    return replace(stored, meta=meta, turns=turns, records=[_scrub(r, redact) for r in stored.records])

"""huichat's own JSONL export (``huichat export --format jsonl``), written and read back.

One JSON object per line, grouped by session, each with a ``record`` field:

- ``session``: ``format`` (this layout's version), ``session_id``, ``session_file`` and the
  header's ``meta`` (title, source block);
- ``turn``: one turn with every field (``Turn.to_record()``);
- ``beside``: one turn kept beside the current branch (a message edited and sent again, a reply
  asked again: ``memory.branches``), with every field, in the order written;
- ``source``: one record of the session's import record (alternatives, skipped nodes, part
  details, imports), with its ``session_id``.

Read back, each session is the conversation it holds (``stored.restore``): an imported one
keeps its source's ids, so exporting and importing again — here or on another machine —
duplicates nothing and loses no branch. Detected by shape: a ``record`` and a ``session_id``.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from huichat.memory.imports.model import ImportedConversation, ImportFormatError
from huichat.memory.imports.sources import Source, json_values
from huichat.memory.imports.stored import StoredSession, restore
from huichat.memory.turns import Turn

EXPECTED = "a huichat JSONL export (one record per line: session, turn, source)"
FORMAT_VERSION = 1
SESSION = "session"
TURN = "turn"
BESIDE = "beside"
SOURCE = "source"


def session_lines(stored: StoredSession) -> Iterator[dict[str, Any]]:
    """The records of one session, in order: its header, its turns, its import record."""
    yield {
        "record": SESSION,
        "format": FORMAT_VERSION,
        "session_id": stored.session_id,
        "session_file": stored.session_file,
        "meta": dict(stored.meta),
    }
    for turn in stored.turns:
        yield {"record": TURN, **turn.to_record()}
    for turn in stored.beside:  # read before this record kind existed, they are passed over
        yield {"record": BESIDE, **turn.to_record()}
    for entry in stored.records:
        yield {"record": SOURCE, "session_id": stored.session_id, **entry}


class _Session:
    def __init__(self, session_id: str, session_file: str, meta: Mapping[str, Any]) -> None:
        self.session_id = session_id
        self.session_file = session_file
        self.meta = dict(meta)
        self.turns: list[Turn] = []
        self.beside: list[Turn] = []
        self.records: list[dict[str, Any]] = []

    def conversation(self, label: str) -> ImportedConversation | None:
        if not self.turns:
            return None
        stored = StoredSession(self.session_id, self.session_file, self.meta, self.turns, self.records, self.beside)
        return restore(stored, f"{label}#{self.session_id}")


def read(source: Source) -> Iterator[ImportedConversation]:
    """The conversations of a huichat JSONL export, one session at a time."""
    current: _Session | None = None
    for index, item in json_values(source, EXPECTED):
        if not isinstance(item, dict) or "session_id" not in item:
            raise ImportFormatError(f"{source.label}: line {index + 1} is not a huichat record; expected {EXPECTED}")
        session_id = str(item["session_id"])
        kind = item.get("record")
        if current is None or current.session_id != session_id:
            if current is not None and (done := current.conversation(source.label)) is not None:
                yield done
            meta = item.get("meta")
            header = meta if kind == SESSION and isinstance(meta, dict) else {}
            current = _Session(session_id, str(item.get("session_file") or ""), header)
        if kind == SESSION and item.get("format", FORMAT_VERSION) > FORMAT_VERSION:
            raise ImportFormatError(
                f"{source.label}: written by a newer huichat (format {item['format']}); upgrade huichat to import it"
            )
        if kind in (TURN, BESIDE):
            try:
                turn = Turn.from_record(item)
            except (KeyError, ValueError, TypeError) as exc:
                raise ImportFormatError(
                    f"{source.label}: line {index + 1}: not a turn ({exc}); expected {EXPECTED}"
                ) from exc
            current.session_file = current.session_file or turn.session_file
            (current.turns if kind == TURN else current.beside).append(turn)
        elif kind == SOURCE:
            current.records.append({k: v for k, v in item.items() if k not in ("record", "session_id")})
    if current is not None and (done := current.conversation(source.label)) is not None:
        yield done

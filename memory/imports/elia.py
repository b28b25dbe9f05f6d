"""elia's SQLite database (``chat`` and ``message`` tables), opened read-only.

elia shows a chat as all its messages in id order, so that is the visible branch here too
(``parent_id`` is kept as the source parent). Its datetimes are naive: elia itself writes
UTC (``datetime.now(UTC)`` and SQLite's ``now()``), but its ChatGPT importer wrote local
times. They are read as UTC and every conversation carries a note saying so.

elia's ids are small integers that repeat across databases, so a conversation's id is the
chat id with its start time (``12@2024-05-01T10:00:00``).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator

from huichat.memory.imports import model
from huichat.memory.imports.sources import Source, column, open_sqlite
from huichat.memory.imports.text import as_text, to_json
from huichat.memory.imports.times import from_iso
from huichat.memory.imports.tree import Header, Node, assemble, skip_reason

_NAIVE = model.Note(model.NoteKind.TIME_ASSUMED_UTC, "elia stores times without a zone; they were read as UTC")


def _time(value: object) -> model.SourceTime | None:
    instant = from_iso(str(value)) if value is not None else None
    return model.SourceTime(str(value), instant) if instant else None


def _node(row: sqlite3.Row) -> Node:
    role = model.Role.from_chat(as_text(row["role"]))
    text = as_text(row["content"])
    parts = (model.Part(model.PartKind.TEXT, text),) if text else ()
    skip = skip_reason(role, bool(text.strip()))
    time = _time(row["timestamp"])
    return Node(
        id=as_text(row["id"]),
        parent_id=as_text(row["parent_id"]) if row["parent_id"] is not None else None,
        role=role,
        parts=parts,
        time_raw=as_text(row["timestamp"]),
        instant=time.instant if time else None,
        model=as_text(row["model"]) if role is model.Role.ASSISTANT else "",
        skip=skip,
        raw=to_json(dict(zip(row.keys(), tuple(row), strict=True))) if skip else "",
    )


def read(source: Source) -> Iterator[model.ImportedConversation]:
    """Every chat in an elia database."""
    with open_sqlite(source, "elia database") as connection:
        for chat in connection.execute("select * from chat order by id").fetchall():
            rows = connection.execute("select * from message where chat_id = ? order by id", (chat["id"],)).fetchall()
            started = _time(chat["started_at"])
            head = Header(
                source=model.SourceFormat.ELIA,
                conversation_id=f"{chat['id']}@{started.instant.isoformat() if started else ''}",
                title=as_text(chat["title"]),
                origin=source.label,
                created=started,
                updated=None,
                fallback_time=source.modified,
                model=as_text(chat["model"]),
                notes=(_NAIVE,),
                extra=(("archived", "true"),) if column(chat, "archived") else (),
            )
            yield assemble(head, [_node(r) for r in rows], None, linear=True)

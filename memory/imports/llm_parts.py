"""The parts of a message in llm 0.32's content-addressed tables, as typed parts.

Text may be stored by reference (``payload.text_ref``: fragments and literal pieces); a
fragment becomes an attachment part that carries the fragment's text, the literal pieces
the message's own text. Unknown part types are kept raw.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Collection

from huichat.memory.imports.model import Part, PartKind
from huichat.memory.imports.sources import column
from huichat.memory.imports.text import as_dict, as_list, as_text, placeholder


def _payload(row: sqlite3.Row) -> object:
    try:
        return json.loads(row["payload"]) if row["payload"] else None
    except ValueError:
        return None


def fragment_part(content: str, name: str) -> Part:
    """A fragment (text llm stores once and refers to, such as a file's) as an attachment that carries it."""
    return Part(PartKind.ATTACHMENT, placeholder("fragment", name, f"{len(content)} chars"), name=name, content=content)


class PartReader:
    """Reads message parts from one open database."""

    def __init__(self, connection: sqlite3.Connection, tables: Collection[str]) -> None:
        self.db = connection
        self.tables = frozenset(tables)

    def _text(self, row: sqlite3.Row) -> list[Part]:
        """A text part's pieces: literal text, and fragments (as attachments with their content)."""
        if row["text"] is not None:
            return [Part(PartKind.TEXT, as_text(row["text"]))]
        parts: list[Part] = []
        for piece in as_list(as_dict(_payload(row)).get("text_ref")):
            piece = as_dict(piece)
            if "literal" in piece:
                parts.append(Part(PartKind.TEXT, as_text(piece["literal"])))
            elif "fragment" in piece:
                found = self.db.execute(
                    "select content, source from fragments where id = ?", (piece["fragment"],)
                ).fetchone()
                content, name = (as_text(found["content"]), as_text(found["source"])) if found else ("", "")
                parts.append(fragment_part(content, name))
        return parts

    def _attachments(self, row: sqlite3.Row) -> list[Part]:
        """An attachment part, named from the ``attachments`` table where the junction says which."""
        found = []
        if {"part_attachments", "attachments"} <= self.tables:
            found = self.db.execute(
                "select a.type, a.path, a.url from part_attachments p join attachments a on a.id = p.attachment_id "
                'where p.part_id = ? order by p."order"',
                (row["id"],),
            ).fetchall()
        if not found:
            return [Part(PartKind.ATTACHMENT, placeholder("attachment"), raw=as_text(row["payload"]))]
        return [
            Part(
                PartKind.ATTACHMENT,
                placeholder("attachment", as_text(a["path"] or a["url"]), as_text(a["type"])),
                name=as_text(a["path"] or a["url"]),
            )
            for a in found
        ]

    def read(self, message_hash: str) -> list[Part]:
        """The parts of one message in order; a part type this reader does not know is kept raw."""
        parts: list[Part] = []
        for row in self.db.execute("select * from parts where message_hash = ? order by position", (message_hash,)):
            kind = as_text(row["type"])
            payload = as_dict(_payload(row))
            tool = as_text(column(row, "tool_name") or payload.get("name"))
            call_id = as_text(payload.get("tool_call_id"))
            if kind == "text":
                parts += self._text(row)
            elif kind == "reasoning":
                parts += [Part(PartKind.REASONING, p.text) for p in self._text(row)]
            elif kind == "tool_call":
                parts.append(Part(PartKind.TOOL_CALL, as_text(payload.get("arguments")), name=tool, call_id=call_id))
            elif kind == "tool_result":
                output = as_text(row["text"]) if row["text"] is not None else as_text(payload.get("output"))
                parts.append(
                    Part(PartKind.TOOL_RESULT, output, name=tool, call_id=call_id, raw=as_text(row["payload"]))
                )
            elif kind == "attachment":
                parts += self._attachments(row)
            else:
                parts.append(
                    Part(
                        PartKind.UNKNOWN, placeholder("unsupported part", kind), name=kind, raw=as_text(row["payload"])
                    )
                )
        return parts

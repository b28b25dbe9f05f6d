"""simonw/llm ``logs.db``, the ``responses`` generation (llm 0.5 to 0.31).

One row is one model call: the prompt, optional tool results sent with it, the reply with
its reasoning and tool calls. Rows of a conversation are ordered by id (ULIDs, issued in
time order). ``datetime_utc`` is when the request started; the reply is dated start +
``duration_ms``, and its raw time says so.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Collection, Iterator
from datetime import datetime, timedelta

from huichat.memory.imports import model
from huichat.memory.imports.llm_parts import fragment_part
from huichat.memory.imports.sources import Source, column
from huichat.memory.imports.text import as_text, placeholder, to_json
from huichat.memory.imports.times import parse_stamp
from huichat.memory.imports.tree import Header, Node, assemble, skip_reason

_TOOL_TABLES = {
    "tool_calls": (model.PartKind.TOOL_CALL, "arguments"),
    "tool_results": (model.PartKind.TOOL_RESULT, "output"),
}
"""The kind of part a row of each tool table is, and the column that holds its text (only
results have an ``exception``)."""


class LegacyReader:
    """Reads the ``responses`` tables of one open database."""

    def __init__(self, connection: sqlite3.Connection, source: Source, tables: Collection[str]) -> None:
        self.db = connection
        self.source = source
        self.tables = tables

    def _rows(self, sql: str, *args: object) -> list[sqlite3.Row]:
        return self.db.execute(sql, args).fetchall()

    def _user_parts(self, response_id: str, prompt: str) -> list[model.Part]:
        parts: list[model.Part] = []
        if "prompt_fragments" in self.tables and "fragments" in self.tables:
            for row in self._rows(
                "select f.content, f.source from prompt_fragments p join fragments f on f.id = p.fragment_id "
                'where p.response_id = ? order by p."order"',
                response_id,
            ):
                parts.append(fragment_part(as_text(row["content"]), as_text(row["source"])))
        if "prompt_attachments" in self.tables and "attachments" in self.tables:
            for row in self._rows(
                "select a.type, a.path, a.url from prompt_attachments p join attachments a on a.id = p.attachment_id "
                'where p.response_id = ? order by p."order"',
                response_id,
            ):
                name = as_text(row["path"] or row["url"])
                parts.append(
                    model.Part(
                        model.PartKind.ATTACHMENT, placeholder("attachment", name, as_text(row["type"])), name=name
                    )
                )
        if prompt:
            parts.append(model.Part(model.PartKind.TEXT, prompt))
        return parts

    def _tool_parts(self, table: str, response_id: str) -> list[model.Part]:
        if table not in self.tables:
            return []
        kind, text = _TOOL_TABLES[table]
        rows = self._rows(f"select * from {table} where response_id = ? order by id", response_id)  # a fixed name
        return [
            model.Part(
                kind,
                as_text(r[text]),
                name=as_text(r["name"]),
                call_id=as_text(r["tool_call_id"]),
                raw=to_json({"exception": column(r, "exception")}) if column(r, "exception") else "",
            )
            for r in rows
        ]

    def _nodes(self, row: sqlite3.Row, parent: str | None, system_before: str) -> list[Node]:
        rid = as_text(row["id"])
        start_raw = as_text(row["datetime_utc"])
        start = parse_stamp(start_raw)
        nodes: list[Node] = []

        def add(
            suffix: str,
            role: model.Role,
            parts: list[model.Part],
            raw: str,
            instant: datetime | None,
        ) -> None:
            node_id = f"{rid}:{suffix}"
            reason = skip_reason(role, any(p.text or p.content for p in parts))
            nodes.append(
                Node(
                    id=node_id,
                    parent_id=nodes[-1].id if nodes else parent,
                    role=role,
                    parts=tuple(parts),
                    time_raw=raw,
                    instant=instant,
                    model=as_text(row["model"]) if role is model.Role.ASSISTANT else "",
                    skip=reason,
                    raw=to_json(dict(zip(row.keys(), tuple(row), strict=True))) if reason else "",
                )
            )

        system = as_text(row["system"])
        if system and system != system_before:
            add("system", model.Role.SYSTEM, [model.Part(model.PartKind.TEXT, system)], start_raw, start)
        results = self._tool_parts("tool_results", rid)
        if results:
            add("tool_results", model.Role.TOOL, results, start_raw, start)
        prompt_parts = self._user_parts(rid, as_text(row["prompt"]))
        if prompt_parts or not results:
            add("prompt", model.Role.USER, prompt_parts, start_raw, start)
        reply: list[model.Part] = []
        if column(row, "reasoning"):
            reply.append(model.Part(model.PartKind.REASONING, as_text(column(row, "reasoning"))))
        if row["response"]:
            reply.append(model.Part(model.PartKind.TEXT, as_text(row["response"])))
        reply += self._tool_parts("tool_calls", rid)
        duration = column(row, "duration_ms")
        if isinstance(duration, int) and start is not None:
            add(
                "response",
                model.Role.ASSISTANT,
                reply,
                f"{start_raw} + {duration} ms",
                start + timedelta(milliseconds=duration),
            )
        else:
            add("response", model.Role.ASSISTANT, reply, start_raw, start)
        return nodes

    def conversation(self, conversation_id: str, rows: list[sqlite3.Row], name: str) -> model.ImportedConversation:
        """The conversation of ``rows`` (ordered by id)."""
        order: list[Node] = []
        system = ""
        for row in rows:
            order += self._nodes(row, order[-1].id if order else None, system)
            system = as_text(row["system"]) or system
        start = parse_stamp(as_text(rows[0]["datetime_utc"])) if rows else None
        head = Header(
            source=model.SourceFormat.LLM,
            conversation_id=conversation_id,
            title=name,
            origin=self.source.label,
            created=model.SourceTime(as_text(rows[0]["datetime_utc"]), start) if rows and start else None,
            updated=None,
            fallback_time=self.source.modified,
            model=as_text(rows[0]["model"]) if rows else "",
        )
        return assemble(head, order, None, linear=True)

    def read(self, skip_ids: Collection[str]) -> Iterator[model.ImportedConversation]:
        """Every conversation, leaving out responses in ``skip_ids`` (already read from the newer tables)."""
        names = {}
        if "conversations" in self.tables:
            names = {as_text(r["id"]): as_text(r["name"]) for r in self._rows("select id, name from conversations")}
        firsts = self._rows(
            "select conversation_id, min(id) as first from responses where conversation_id is not null "
            "group by conversation_id order by first"
        )
        for first in firsts:
            conversation_id = as_text(first["conversation_id"])
            rows = [
                r
                for r in self._rows("select * from responses where conversation_id = ? order by id", conversation_id)
                if as_text(r["id"]) not in skip_ids
            ]
            if rows:
                yield self.conversation(conversation_id, rows, names.get(conversation_id, ""))
        for row in self._rows("select * from responses where conversation_id is null order by id"):
            if as_text(row["id"]) not in skip_ids:
                yield self.conversation(as_text(row["id"]), [row], "")

"""simonw/llm ``logs.db``, opened read-only; the 0.32 content-addressed tables first.

In 0.32 a thread points at the tip of a chain of messages (``messages.parent_hash``); a
turn is one model call that brackets its output between ``parent_message_hash`` and
``tip_message_hash``. Messages have no time of their own: each takes the time of the
earliest turn that reached it (its start for the input, start + duration for the output).
Messages are shared between threads (forks, re-sent histories): each is read once, in the
first thread that reaches it, and a later thread links to it (a ``continues`` note).

When both generations are in the file, the legacy ``responses`` rows that are also turns
(the same ULID) or whose prompt and reply the thread's chain already holds are not read
again; the others are read from the legacy tables.
"""

from __future__ import annotations

import itertools
import sqlite3
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime, timedelta

from huichat.memory.imports import model
from huichat.memory.imports.llm_legacy import LegacyReader
from huichat.memory.imports.llm_parts import PartReader
from huichat.memory.imports.sources import Source, open_sqlite, sqlite_tables
from huichat.memory.imports.text import as_text, to_json
from huichat.memory.imports.times import parse_stamp
from huichat.memory.imports.tree import Header, Node, assemble, skip_reason, unknown_notes


@dataclass(frozen=True)
class _Thread:
    id: str
    name: str
    tip: str | None
    created: str
    forked_from: str
    orphan: bool = False
    """A turn that belongs to no thread, read as its own conversation."""


class ThreadReader:
    """Reads the content-addressed tables of one open database."""

    def __init__(self, connection: sqlite3.Connection, source: Source, tables: frozenset[str]) -> None:
        self.db = connection
        self.source = source
        self.parts = PartReader(connection, tables)
        self.legacy = "responses" in tables
        """The file also holds the older ``responses`` tables."""
        self.read_hashes: set[str] = set()
        self.covered_responses: set[str] = set()
        """Legacy response ids whose content was read here (turn ids, matched prompts)."""

    def _walk(self, tip: str | None, found: dict[str, sqlite3.Row]) -> list[str]:
        """Hashes from ``tip`` back to the root (or to a message another thread read), newest first."""
        chain: list[str] = []
        seen: set[str] = set()
        current = tip
        while current is not None and current not in self.read_hashes and current not in seen:
            row = (
                found.get(current)
                or self.db.execute("select rowid as row_number, * from messages where hash = ?", (current,)).fetchone()
            )
            if row is None:
                break
            found[current] = row
            seen.add(current)
            chain.append(current)
            current = row["parent_hash"]
        return chain

    def _turn_times(
        self, turns: list[sqlite3.Row], found: dict[str, sqlite3.Row]
    ) -> dict[str, tuple[str, datetime | None, str]]:
        """Each message's (raw time, instant, model) from the earliest turn that reached it."""
        times: dict[str, tuple[str, datetime | None, str]] = {}
        for turn in turns:
            self.covered_responses.add(as_text(turn["id"]))
            start_raw = as_text(turn["datetime_utc"])
            start = parse_stamp(start_raw)
            duration = turn["duration_ms"] if isinstance(turn["duration_ms"], int) else 0
            output = True
            for message_hash in self._walk(turn["tip_message_hash"], found):
                output = output and message_hash != turn["parent_message_hash"]
                if message_hash in times:
                    break  # an earlier turn reached it, and everything before it
                if output and start is not None:
                    end = start + timedelta(milliseconds=duration)
                    times[message_hash] = (f"{start_raw} + {duration} ms", end, as_text(turn["model"]))
                else:
                    times[message_hash] = (start_raw, start, "")
        return times

    def _legacy_times(
        self, thread_id: str, visible: list[str], texts: dict[str, tuple[model.Role, str]]
    ) -> dict[str, tuple[str, datetime | None, str]]:
        """Times of a history logged by an older llm and re-sent into this thread's chain."""
        if not self.legacy:
            return {}
        pairs: dict[tuple[str, str], list[tuple[str, str]]] = {}
        chain = list(reversed(visible))
        for asked, answered in itertools.pairwise(chain):
            if texts[asked][0] is model.Role.USER and texts[answered][0] is model.Role.ASSISTANT:
                pairs.setdefault((texts[asked][1], texts[answered][1]), []).append((asked, answered))
        times: dict[str, tuple[str, datetime | None, str]] = {}
        for row in self.db.execute("select * from responses where conversation_id = ? order by id", (thread_id,)):
            rid = as_text(row["id"])
            matches = pairs.get((as_text(row["prompt"]), as_text(row["response"])))
            if rid in self.covered_responses or not matches:
                continue
            asked, answered = matches.pop(0)
            self.covered_responses.add(rid)
            start_raw = as_text(row["datetime_utc"])
            start = parse_stamp(start_raw)
            duration = row["duration_ms"] if isinstance(row["duration_ms"], int) else 0
            times[asked] = (start_raw, start, "")
            end = start + timedelta(milliseconds=duration) if start else None
            times[answered] = (f"{start_raw} + {duration} ms", end, as_text(row["model"]))
        return times

    def thread(self, thread: _Thread) -> model.ImportedConversation:
        """One thread as a conversation: its tip's chain visible, other turns' outputs alternatives."""
        where = "id = ?" if thread.orphan else "thread_id = ?"
        turns = self.db.execute(f"select * from turns where {where} order by datetime_utc, id", (thread.id,)).fetchall()
        found: dict[str, sqlite3.Row] = {}
        visible = self._walk(thread.tip, found)
        times = self._turn_times(turns, found)
        notes: list[model.Note] = []
        parts_of: dict[str, list[model.Part]] = {}
        texts: dict[str, tuple[model.Role, str]] = {}
        for message_hash, row in found.items():
            parts = self.parts.read(message_hash)
            notes += unknown_notes(parts, "part type", message_hash)
            role = model.Role.from_chat(as_text(row["role"]))
            if role is model.Role.USER and parts and all(p.kind is model.PartKind.TOOL_RESULT for p in parts):
                role = model.Role.TOOL  # tool output sent back to the model is not the user speaking
            parts_of[message_hash] = parts
            texts[message_hash] = (role, "".join(p.text for p in parts if p.kind is model.PartKind.TEXT))
        times.update(self._legacy_times(thread.id, visible, texts))
        order: list[Node] = []
        for message_hash, row in sorted(found.items(), key=lambda item: int(item[1]["row_number"])):
            parts = parts_of[message_hash]
            role = texts[message_hash][0]
            raw_time, instant, answered_by = times.get(message_hash, ("", None, ""))
            skip = skip_reason(role, any(p.text or p.content or p.raw for p in parts))
            order.append(
                Node(
                    id=message_hash,
                    parent_id=as_text(row["parent_hash"]) or None,
                    role=role,
                    parts=tuple(parts),
                    time_raw=raw_time,
                    instant=instant,
                    model=answered_by,
                    skip=skip,
                    raw=to_json({"role": row["role"], "parts": [p.text for p in parts]}) if skip else "",
                )
            )
        # parents read with an earlier thread: linked, not repeated
        outside: dict[str, str | None] = {n.parent_id: None for n in order if n.parent_id in self.read_hashes}
        if outside:
            notes.append(
                model.Note(model.NoteKind.CONTINUES, f"continues {len(outside)} message(s) read with an earlier thread")
            )
        self.read_hashes.update(found)
        created = parse_stamp(thread.created)
        head = Header(
            source=model.SourceFormat.LLM,
            conversation_id=thread.id,
            title=thread.name,
            origin=self.source.label,
            created=model.SourceTime(thread.created, created) if created else None,
            updated=None,
            fallback_time=self.source.modified,
            model=as_text(turns[0]["model"]) if turns else "",
            notes=tuple(notes),
            extra=(("forked_from", thread.forked_from),) if thread.forked_from else (),
        )
        return assemble(head, order, visible[0] if visible else None, links=outside)

    def threads(self) -> Iterator[_Thread]:
        """Threads in creation order, then turns that belong to no thread (each its own)."""
        for row in self.db.execute("select * from threads order by datetime_utc, id").fetchall():
            yield _Thread(
                as_text(row["id"]),
                as_text(row["name"]),
                row["tip_message_hash"],
                as_text(row["datetime_utc"]),
                as_text(row["forked_from"]),
            )
        for row in self.db.execute(
            "select * from turns where thread_id is null or thread_id not in (select id from threads) order by datetime_utc, id"
        ).fetchall():
            yield _Thread(
                as_text(row["id"]), "", row["tip_message_hash"], as_text(row["datetime_utc"]), "", orphan=True
            )


def read(source: Source) -> Iterator[model.ImportedConversation]:
    """Every conversation in an llm ``logs.db``, whichever generations it holds."""
    with open_sqlite(source, "llm database") as connection:
        tables = sqlite_tables(connection)
        covered: set[str] = set()
        if {"threads", "turns", "messages", "parts"} <= tables:
            reader = ThreadReader(connection, source, tables)
            for thread in reader.threads():
                yield reader.thread(thread)
            covered = reader.covered_responses
        if "responses" in tables:
            yield from LegacyReader(connection, source, tables).read(covered)

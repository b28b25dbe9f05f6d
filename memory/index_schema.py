"""The index's layout: its columns, its version, and how a turn becomes a row and back.

The layout is versioned. An index written by an older huichat is brought up to date at
open when every missing column can be filled in place (each column says how); when it
cannot — the derived data changed (what is embedded, how text is tokenised) — the user is
told to run ``huichat reindex``, which rebuilds the index from the transcripts.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from functools import lru_cache, partial
from typing import Any

import numpy as np
import numpy.typing as npt
import pyarrow as pa

from huichat.memory.filters import About, All, Any_, Compare, Filter, In, Not, clamp_utc, normalise
from huichat.memory.timeparse.ranges import TimeRange
from huichat.memory.turns import Message, Turn, index_digest, is_turn_id
from huichat.memory.words import index_words

SCHEMA_VERSION = 7
"""This code's layout. 3: one turn encoding (``Turn.to_record``) for every JSON column.
4: ``embedded`` — a turn can be indexed (and found by its words) before its vector exists.
5: ``words`` — the terms the full-text index sees (``memory.words``: CJK characters and pairs).
6: the lifecycle — ``tier``, ``importance`` and its parts, consolidation ``cluster_id``/``cluster_role``.
7: ``events`` and the event slots — the times a turn talks about (``memory.timeparse``)."""
REBUILD_BELOW = 2
"""Indexes with an older layout hold derived data this code cannot use: they are rebuilt."""
REINDEX = "run `huichat reindex` to rebuild it from the transcripts"
"""What to tell a user whose index cannot be used as it is."""

META_DIM = b"huichat.dim"
META_MODEL = b"huichat.embedder"
META_INSTANCE = b"huichat.instance"
"""A random name given to a table when it is made: a rebuilt or replaced index has another one."""
META_SCHEMA = "huichat.schema"
VERSION_FIELD = "id"
"""The field whose metadata carries the layout version (field metadata can be updated in place)."""

UTC_TS = pa.timestamp("us", tz="UTC")


EventReader = Callable[[str, datetime], tuple[TimeRange, ...]]
"""The times a text talks about, resolved against when it was said (``TimeResolver.event_ranges``)."""

EVENT_SLOTS = 3
"""Event ranges a search filter can test, as ``event<i>_start``/``event<i>_end`` column pairs.

The first ``EVENT_SLOTS - 1`` ranges of a turn each have their own pair; the last pair
covers all the rest (from the earliest start to the latest end), so a filter never misses
a range and may over-match only for a turn with more ranges than slots — the exact ranges
(the ``events`` column, read with every turn) decide after the filter. Measured in
BENCHMARKS.md: 99.96 % of LoCoMo's turns have at most two ranges.
"""


@dataclass(frozen=True)
class Source:
    """What a derived column is computed from: a row's text, when it was said, the times it talks about."""

    text: str
    timestamp: datetime
    events: tuple[TimeRange, ...]

    @classmethod
    def of(cls, text: str, timestamp: datetime, read_events: EventReader) -> Source:
        """The source of a row, its event times read from ``text`` against ``timestamp``."""
        return cls(text, timestamp, read_events(text, timestamp))


@dataclass(frozen=True)
class Column:
    """One column of the index."""

    name: str
    type: pa.DataType
    nullable: bool = True
    fill: str | None = None
    """SQL that fills this column in an index written before it existed (None: see ``derive``)."""
    derive: Callable[[Source], Any] | None = None
    """Computes this column from a row's text and time; used for every write, and to fill the
    column in an index written before it existed (in batches at open)."""
    light: bool = True
    """Read with every turn (False for the heavy ones: vector, searchable text, digests)."""


def _slot(source: Source, *, slot: int, side: str) -> datetime | None:
    """One end of one event slot (see ``EVENT_SLOTS``), in UTC; None when the turn has fewer ranges."""
    ranges = source.events[slot:] if slot == EVENT_SLOTS - 1 else source.events[slot : slot + 1]
    if not ranges:
        return None
    moment = min(r.start for r in ranges) if side == "start" else max(r.end for r in ranges)
    return clamp_utc(moment)


COLUMNS: tuple[Column, ...] = (
    Column("id", pa.string(), nullable=False),
    Column("session_id", pa.string(), nullable=False),
    Column("session_file", pa.string(), nullable=False),
    Column("turn_index", pa.int32(), nullable=False),
    Column("position", pa.string(), nullable=False, light=False),
    Column("timestamp", UTC_TS, nullable=False),
    Column("topic", pa.string()),
    Column("text", pa.string(), light=False),
    Column("words", pa.string(), light=False, derive=lambda source: index_words(source.text)),
    Column("messages", pa.string()),
    Column("recalled_ids", pa.string()),
    Column("status", pa.string()),
    Column("prev_id", pa.string()),
    Column("access_count", pa.int64()),
    Column("last_accessed_at", UTC_TS),
    Column("text_hash", pa.string(), light=False),
    Column("extra", pa.string()),
    Column("embedded", pa.bool_(), fill="true", light=False),
    Column("tier", pa.string(), fill="'working'"),
    Column("importance", pa.float64(), fill="CAST(NULL AS DOUBLE)"),
    Column("importance_parts", pa.string(), fill="CAST(NULL AS STRING)"),
    Column("cluster_id", pa.string(), fill="''"),
    Column("cluster_role", pa.string(), fill="''"),
    Column(
        "events",
        pa.string(),
        derive=lambda source: json.dumps([r.to_record() for r in source.events], ensure_ascii=False),
    ),
    *(
        Column(f"event{slot}_{side}", UTC_TS, light=False, derive=partial(_slot, slot=slot, side=side))
        for slot in range(EVENT_SLOTS)
        for side in ("start", "end")
    ),
)
JSON_COLUMNS = frozenset({"messages", "recalled_ids", "extra", "importance_parts"})
DERIVED = tuple(c for c in COLUMNS if c.derive is not None)
LIGHT_COLUMNS = [c.name for c in COLUMNS if c.light]
KEPT_COLUMNS = (
    "access_count",
    "last_accessed_at",
    "tier",
    "importance",
    "importance_parts",
    "cluster_id",
    "cluster_role",
)
"""What the index knows that the transcripts do not (how a turn was used and ranked): kept when
a turn is re-indexed after an edit and across ``huichat reindex``."""


def schema(dim: int, embedder: str, columns: Sequence[Column] = COLUMNS, instance: str = "") -> pa.Schema:
    """The Arrow schema of the table, stamped with the vector size, the model and the layout
    (and, when the table is made, its ``instance``)."""
    fields = [pa.field(c.name, c.type, nullable=c.nullable) for c in columns]
    fields[[c.name for c in columns].index(VERSION_FIELD)] = pa.field(
        VERSION_FIELD, pa.string(), nullable=False, metadata={META_SCHEMA: str(SCHEMA_VERSION)}
    )
    fields.append(pa.field("vector", pa.list_(pa.float32(), dim)))
    metadata = {META_DIM: str(dim).encode(), META_MODEL: embedder.encode()}
    if instance:
        metadata[META_INSTANCE] = instance.encode()
    return pa.schema(fields, metadata=metadata)


def stored_version(table_schema: pa.Schema) -> int:
    """The layout version an index was written with (1 for the first layout, which had none)."""
    field_meta = table_schema.field(VERSION_FIELD).metadata or {}
    raw = field_meta.get(META_SCHEMA.encode()) or (table_schema.metadata or {}).get(META_SCHEMA.encode()) or b"1"
    try:
        return int(raw)
    except ValueError:
        return 0


def position_key(session_id: str, turn_index: int) -> str:
    """The indexed key of a place in a session: neighbours are found with one lookup."""
    return f"{session_id}#{turn_index}"


@dataclass(frozen=True, eq=False)
class IndexEntry:
    """One turn on its way into the index, made once and passed on (``memory.indexing``).

    ``text`` is what is embedded for the turn (``memory.turns.search_text``: with its
    predecessor's tail when in context); the full-text index holds the turn's own words only,
    so that a turn outranks its successor on the words it actually contains. ``vector`` is
    None until the turn is embedded: it is then found by its words (``embedded`` false).
    """

    turn: Turn
    text: str
    vector: npt.NDArray[np.float32] | None = None

    @property
    def digest(self) -> str:
        """What the index keeps of the entry to notice an edited transcript (``index_digest``)."""
        return index_digest(self.text, self.turn)


def rows(entries: Sequence[IndexEntry], table_schema: pa.Schema) -> pa.Table:
    """Entries as an Arrow table: each turn's own record plus what the index derives from it.

    The times a turn talks about are its ``events``; a turn not embedded yet gets a
    placeholder vector.
    """
    dim = table_schema.field("vector").type.list_size
    placeholder = np.zeros(dim, dtype=np.float32)
    columns: dict[str, list[Any]] = {c.name: [] for c in COLUMNS}
    for entry in entries:
        turn = entry.turn
        text = turn.text
        record = turn.to_record()
        for name in JSON_COLUMNS:
            record[name] = json.dumps(record[name], ensure_ascii=False)
        source = Source(text, turn.timestamp, turn.events)
        record.update({c.name: c.derive(source) for c in DERIVED if c.derive is not None})
        record.update(
            timestamp=turn.timestamp,
            last_accessed_at=turn.last_accessed_at,
            position=position_key(turn.session_id, turn.turn_index),
            text=text,
            text_hash=entry.digest,
            embedded=entry.vector is not None,
        )
        for name, values in columns.items():
            values.append(record[name])
    arrays = [pa.array(columns[f.name], type=f.type) for f in table_schema if f.name != "vector"]
    vectors = np.stack([placeholder if e.vector is None else e.vector for e in entries]).astype(np.float32, copy=False)
    flat = pa.array(vectors.reshape(-1), type=pa.float32())
    arrays.append(pa.FixedSizeListArray.from_arrays(flat, dim))
    return pa.Table.from_arrays(arrays, schema=table_schema)


def _messages(raw: str | None) -> list[dict[str, Any]]:
    decoded = json.loads(raw or "[]")
    # layouts before 3 stored each message as [role, speaker, text]
    return [m if isinstance(m, dict) else {"role": m[0], "speaker": m[1], "text": m[2]} for m in decoded]


def messages_from(raw: str | None) -> tuple[Message, ...]:
    """A row's ``messages`` column as the turn's messages."""
    return tuple(Message.from_record(m) for m in _messages(raw))


def turns_from(table: pa.Table) -> list[Turn]:
    """Rows back as turns (``next_id`` is not stored; see ``TurnStore.with_next``).

    A search reads ~200 rows (both candidate lists and the neighbours of the best), and most
    of them were read by the searches before it: a row whose values are all unchanged becomes
    the turn it became last time (``_turn``'s cache) instead of decoding its JSON again.
    """
    names = tuple(table.column_names)
    columns = [table.column(name).to_pylist() for name in names]
    turns = []
    for values in zip(*columns, strict=True):
        try:
            turns.append(_turn(names, values))
        except TypeError:  # an unhashable value (a column no light read selects): decode it uncached
            turns.append(_decoded(names, values))
    return turns


@lru_cache(maxsize=4_096)
def _turn(names: tuple[str, ...], values: tuple[Any, ...]) -> Turn:
    return _decoded(names, values)


def _decoded(names: tuple[str, ...], values: tuple[Any, ...]) -> Turn:
    row = dict(zip(names, values, strict=True))
    row["messages"] = _messages(row.get("messages"))
    row["recalled_ids"] = json.loads(row.get("recalled_ids") or "[]")
    row["extra"] = json.loads(row["extra"]) if row.get("extra") else {}
    row["events"] = json.loads(row.get("events") or "[]")
    row["importance_parts"] = json.loads(row.get("importance_parts") or "null")
    return Turn.from_record(row)


def kept_fields(row: dict[str, Any]) -> dict[str, Any]:
    """The ``KEPT_COLUMNS`` of one row as ``Turn`` field values (for ``dataclasses.replace``)."""
    kept = Turn.from_record(
        {
            "id": "",
            "session_id": "",
            "session_file": "",
            "turn_index": 0,
            "timestamp": _EPOCH,
            **{name: row.get(name) for name in KEPT_COLUMNS},
            "importance_parts": json.loads(row.get("importance_parts") or "null"),
        }
    )
    return {name: getattr(kept, name) for name in KEPT_COLUMNS}


def kept_table(kept: dict[str, dict[str, Any]], table_schema: pa.Schema) -> pa.Table:
    """``id`` plus the kept columns of several turns, ready to merge into the index."""
    columns: dict[str, list[Any]] = {"id": list(kept), **{name: [] for name in KEPT_COLUMNS}}
    for fields in kept.values():
        for name in KEPT_COLUMNS:
            value = fields[name]
            if name == "importance_parts":
                value = json.dumps(value.to_record()) if value is not None else None
            columns[name].append(value)
    return pa.table({name: pa.array(values, type=table_schema.field(name).type) for name, values in columns.items()})


_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


def first_message(raw: str | None) -> str:
    """The text of the first message in a ``messages`` column value."""
    messages = _messages(raw)
    return Message.from_record(messages[0]).text if messages else ""


# ------------------------------------------------------------------------ filters


def quote(value: str) -> str:
    """A SQL string literal."""
    return "'" + value.replace("'", "''") + "'"


def sql_time(moment: datetime) -> str:
    """A typed timestamp literal in UTC, always with a four-digit year (``%Y`` gives ``499``)."""
    return f"TIMESTAMP '{clamp_utc(moment).replace(tzinfo=None).isoformat(' ', 'microseconds')}'"


def id_list(ids: Iterable[str]) -> str:
    """``('a3f2c7', …)`` of the well-formed ids only; ``()`` when none."""
    safe = sorted({i for i in ids if is_turn_id(i)})
    return "(" + ", ".join(quote(i) for i in safe) + ")"


_FILTER_COLUMNS = {
    "timestamp": "timestamp",
    "topic": "topic",
    "session_id": "session_id",
    "turn_index": "turn_index",
    "status": "status",
    "id": "id",
    "text": "text",
    "tier": "tier",
    "cluster_id": "cluster_id",
    "cluster_role": "cluster_role",
}


def compile_filter(node: Filter) -> str:
    """SQL for a typed filter (normalised first); every value is formatted here from its type."""
    return _compile(normalise(node))


def _compile(node: Filter) -> str:
    if isinstance(node, In):
        values = [v for v in node.values if node.field != "id" or is_turn_id(v)]
        if not values:
            return "(FALSE)"
        return f"({_FILTER_COLUMNS[node.field]} IN ({', '.join(quote(v) for v in values)}))"
    if isinstance(node, Compare):
        column = _FILTER_COLUMNS[node.field]
        op = "LIKE" if node.op == "like" else node.op
        value = node.value
        if isinstance(value, datetime):
            literal = sql_time(value)
        elif isinstance(value, int):
            literal = str(int(value))
        else:
            literal = quote(str(value))
        return f"({column} {op} {literal})"
    if isinstance(node, All):
        return "(" + " AND ".join(_compile(p) for p in node.parts) + ")"
    if isinstance(node, Any_):
        return "(" + " OR ".join(_compile(p) for p in node.parts) + ")"
    if isinstance(node, Not):
        return f"(NOT {_compile(node.part)})"
    if isinstance(node, About):
        # NULL-safe (a turn without events is simply not about the range), so NOT works too
        start, end = sql_time(node.start), sql_time(node.end)
        slots = [
            f"(event{i}_start IS NOT NULL AND event{i}_start < {end} AND event{i}_end > {start})"
            for i in range(EVENT_SLOTS)
        ]
        return "(" + " OR ".join(slots) + ")"
    raise TypeError(f"not a filter: {node!r}")

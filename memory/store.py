"""The LanceDB index of turns (the only module that imports lancedb).

The index can always be rebuilt from the transcripts. It holds one row per turn: the
anchor fields, the text and its full-text index terms (``memory.words``), a real UTC
timestamp, access statistics and the vector. ``next_id`` is not stored: it is derived from the successor's ``prev_id``, so a
live write is one append and never rewrites an older row.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from datetime import UTC, datetime, timedelta
from typing import Any, cast

os.environ.setdefault("LANCEDB_LOG", "error")

import lancedb
import numpy as np
import numpy.typing as npt
import pyarrow as pa
from lancedb.index import FTS, IvfHnswSq
from lancedb.query import MatchQuery

from memory.errors import KernelError
from memory.filters import All, Any_, Compare, Filter, Not
from memory.turns import Message, Turn, index_digest, is_turn_id
from memory.words import index_words

TABLE = "turns"
SCHEMA_VERSION = "3"
"""3: full text indexes the ``words`` column (CJK characters and pairs) instead of ICU words."""
_META_DIM = b"huichat.dim"
_META_MODEL = b"huichat.embedder"
_META_SCHEMA = b"huichat.schema"
_UTC_TS = pa.timestamp("us", tz="UTC")
_LIGHT_COLUMNS = [
    "id",
    "session_id",
    "session_file",
    "turn_index",
    "timestamp",
    "topic",
    "messages",
    "recalled_ids",
    "status",
    "prev_id",
    "access_count",
    "last_accessed_at",
    "extra",
]


def _schema(dim: int, embedder: str) -> pa.Schema:
    return pa.schema(
        [
            pa.field("id", pa.string(), nullable=False),
            pa.field("session_id", pa.string(), nullable=False),
            pa.field("session_file", pa.string(), nullable=False),
            pa.field("turn_index", pa.int32(), nullable=False),
            pa.field("position", pa.string(), nullable=False),
            pa.field("timestamp", _UTC_TS, nullable=False),
            pa.field("topic", pa.string()),
            pa.field("text", pa.string()),
            pa.field("words", pa.string()),
            pa.field("messages", pa.string()),
            pa.field("recalled_ids", pa.string()),
            pa.field("status", pa.string()),
            pa.field("prev_id", pa.string()),
            pa.field("access_count", pa.int64()),
            pa.field("last_accessed_at", _UTC_TS),
            pa.field("text_hash", pa.string()),
            pa.field("extra", pa.string()),
            pa.field("vector", pa.list_(pa.float32(), dim)),
        ],
        metadata={
            _META_DIM: str(dim).encode(),
            _META_MODEL: embedder.encode(),
            _META_SCHEMA: SCHEMA_VERSION.encode(),
        },
    )


def _quote(value: str) -> str:
    return "'" + value.replace("'", "''") + "'"


def _sql_time(moment: datetime) -> str:
    return f"TIMESTAMP '{moment.astimezone(UTC):%Y-%m-%d %H:%M:%S.%f}'"


def compile_filter(node: Filter) -> str:
    """SQL for a typed filter; every value is formatted here from its type."""
    if isinstance(node, Compare):
        column = {
            "timestamp": "timestamp",
            "topic": "topic",
            "session_id": "session_id",
            "turn_index": "turn_index",
        }[node.field]
        op = "LIKE" if node.op == "like" else node.op
        value = node.value
        if isinstance(value, datetime):
            literal = _sql_time(value)
        elif isinstance(value, int):
            literal = str(int(value))
        else:
            literal = _quote(str(value))
        return f"({column} {op} {literal})"
    if isinstance(node, All):
        return "(" + " AND ".join(compile_filter(p) for p in node.parts) + ")"
    if isinstance(node, Any_):
        return "(" + " OR ".join(compile_filter(p) for p in node.parts) + ")"
    if isinstance(node, Not):
        return f"(NOT {compile_filter(node.part)})"
    raise TypeError(f"not a filter: {node!r}")


def position_key(session_id: str, turn_index: int) -> str:
    """The indexed key of a place in a session: neighbours are found with one lookup."""
    return f"{session_id}#{turn_index}"


def _id_list(ids: Iterable[str]) -> str:
    safe = sorted({i for i in ids if is_turn_id(i)})
    return "(" + ", ".join(_quote(i) for i in safe) + ")"


@dataclass(frozen=True)
class Scored:
    """A turn with the raw score a search gave it."""

    turn: Turn
    score: float


@dataclass(frozen=True)
class SessionInfo:
    """A summary of one stored session."""

    session_id: str
    session_file: str
    started: datetime
    last: datetime
    turns: int
    first_text: str


class TurnStore:
    """Turns in one LanceDB table, with vector, full-text and time indexes."""

    def __init__(
        self,
        uri: str,
        dim: int,
        embedder_name: str,
        *,
        consistency_seconds: float = 0.0,
        for_rebuild: bool = False,
    ) -> None:
        self.uri = uri
        self.dim = dim
        self.embedder_name = embedder_name
        try:
            self._db: Any = lancedb.connect(uri, read_consistency_interval=timedelta(seconds=consistency_seconds))
            if TABLE in self._db.table_names():
                self._table: Any = self._db.open_table(TABLE)
                if not for_rebuild:
                    self._check_compatible()
            else:
                self._table = self._create()
        except KernelError:
            raise
        except (OSError, ValueError, RuntimeError) as exc:
            raise KernelError(f"cannot open the memory index at {uri}: {exc}") from exc
        self._fts_ready = any(i.index_type == "FTS" for i in self._table.list_indices())

    def _create(self) -> Any:
        try:
            return self._db.create_table(TABLE, schema=_schema(self.dim, self.embedder_name))
        except (OSError, ValueError, RuntimeError):
            # another process created it first
            return self._db.open_table(TABLE)

    def reset(self) -> None:
        """Drop every row and start an empty table for the current embedder."""
        self._db.drop_table(TABLE)
        self._table = self._create()
        self._fts_ready = False

    def restore_access(self, saved: dict[str, tuple[int, datetime | None]]) -> None:
        """Put back access statistics saved before a rebuild."""
        for turn_id, (count, last) in saved.items():
            if not is_turn_id(turn_id):
                continue
            values = {"access_count": str(int(count))}
            if last is not None:
                values["last_accessed_at"] = _sql_time(last)
            self._table.update(where=f"id = {_quote(turn_id)}", values_sql=values)

    def _check_compatible(self) -> None:
        schema = self._table.schema
        meta = schema.metadata or {}
        stored_dim = int(meta.get(_META_DIM, b"0") or 0) or schema.field("vector").type.list_size
        stored_model = meta.get(_META_MODEL, b"").decode()
        stored_schema = meta.get(_META_SCHEMA, b"").decode()
        if stored_schema != SCHEMA_VERSION:
            raise KernelError(
                f"the memory index has layout {stored_schema or '1'}, this huichat uses {SCHEMA_VERSION}; "
                "run `huichat reindex` to rebuild it from the transcripts"
            )
        if stored_dim != self.dim:
            raise KernelError(
                f"the memory index holds {stored_dim}-dimensional vectors but the embedding model "
                f"{self.embedder_name} makes {self.dim}; run `huichat reindex` to rebuild it from the transcripts"
            )
        if stored_model and stored_model != self.embedder_name:
            raise KernelError(
                f"the memory index was built with {stored_model}, not {self.embedder_name}; "
                "run `huichat reindex` to rebuild it from the transcripts"
            )

    # ----------------------------------------------------------------- writing

    def _rows(self, turns: Sequence[Turn], texts: Sequence[str], vectors: npt.NDArray[np.float32]) -> pa.Table:
        if not len(turns) == len(texts) == len(vectors):
            raise ValueError("one search text and one vector per turn")
        if len(turns) and vectors.shape[1] != self.dim:
            raise KernelError(f"vector size {vectors.shape[1]} does not match the index ({self.dim})")
        columns: dict[str, list[Any]] = {name: [] for name in _schema(self.dim, "").names if name != "vector"}
        for turn, text in zip(turns, texts, strict=True):
            columns["id"].append(turn.id)
            columns["session_id"].append(turn.session_id)
            columns["session_file"].append(turn.session_file)
            columns["turn_index"].append(turn.turn_index)
            columns["position"].append(position_key(turn.session_id, turn.turn_index))
            columns["timestamp"].append(turn.timestamp)
            columns["topic"].append(turn.topic)
            columns["text"].append(turn.text)
            columns["words"].append(index_words(turn.text))
            columns["messages"].append(
                json.dumps([[m.role, m.speaker, m.text] for m in turn.messages], ensure_ascii=False)
            )
            columns["recalled_ids"].append(json.dumps(list(turn.recalled_ids)))
            columns["status"].append(turn.status)
            columns["prev_id"].append(turn.prev_id)
            columns["access_count"].append(turn.access_count)
            columns["last_accessed_at"].append(turn.last_accessed_at)
            columns["text_hash"].append(index_digest(text, turn))
            columns["extra"].append(json.dumps(dict(turn.extra), ensure_ascii=False) if turn.extra else "")
        schema = _schema(self.dim, self.embedder_name)
        arrays = [pa.array(columns[f.name], type=f.type) for f in schema if f.name != "vector"]
        flat = pa.array(np.ascontiguousarray(vectors, dtype=np.float32).reshape(-1), type=pa.float32())
        arrays.append(pa.FixedSizeListArray.from_arrays(flat, self.dim))
        return pa.Table.from_arrays(arrays, schema=schema)

    def add(self, turns: Sequence[Turn], texts: Sequence[str], vectors: npt.NDArray[np.float32]) -> None:
        """Append turns in one commit (one LanceDB version).

        ``texts`` are what was embedded (the turn with its conversational context); the
        full-text index holds the turn's own words only, so that a turn outranks its
        successor on the words it actually contains.
        """
        if not turns:
            return
        try:
            self._table.add(self._rows(turns, texts, vectors))
        except (OSError, ValueError, RuntimeError) as exc:
            raise KernelError(f"cannot write to the memory index: {exc}") from exc

    def upsert(self, turns: Sequence[Turn], texts: Sequence[str], vectors: npt.NDArray[np.float32]) -> None:
        """Insert or replace turns by id (used when a transcript was edited)."""
        if not turns:
            return
        try:
            (
                self._table.merge_insert("id")
                .when_matched_update_all()
                .when_not_matched_insert_all()
                .execute(self._rows(turns, texts, vectors))
            )
        except (OSError, ValueError, RuntimeError) as exc:
            raise KernelError(f"cannot update the memory index: {exc}") from exc

    def delete(self, ids: Iterable[str]) -> None:
        """Remove turns by id."""
        id_list = _id_list(ids)
        if id_list != "()":
            self._table.delete(f"id IN {id_list}")

    def record_access(self, counts: dict[str, int], now: datetime) -> None:
        """Add to ``access_count`` and set ``last_accessed_at`` for the given ids."""
        by_increment: dict[int, list[str]] = {}
        for turn_id, n in counts.items():
            by_increment.setdefault(n, []).append(turn_id)
        for n, ids in by_increment.items():
            id_list = _id_list(ids)
            if id_list == "()":
                continue
            self._table.update(
                where=f"id IN {id_list}",
                values_sql={
                    "access_count": f"access_count + {int(n)}",
                    "last_accessed_at": _sql_time(now),
                },
            )

    # ----------------------------------------------------------------- reading

    def count(self, where: Filter | None = None) -> int:
        """Number of turns (matching ``where``)."""
        return int(self._table.count_rows(compile_filter(where) if where is not None else None))

    def _turns_from(self, table: pa.Table, *, with_next: bool = True) -> list[Turn]:
        rows = table.to_pylist()
        turns = []
        for row in rows:
            messages = tuple(Message(r, t, s) for r, s, t in json.loads(row["messages"] or "[]"))
            extra = json.loads(row["extra"]) if row.get("extra") else {}
            turns.append(
                Turn(
                    id=row["id"],
                    session_id=row["session_id"],
                    session_file=row["session_file"],
                    turn_index=int(row["turn_index"]),
                    timestamp=row["timestamp"],
                    messages=messages,
                    topic=row["topic"] or "",
                    prev_id=row["prev_id"],
                    recalled_ids=tuple(json.loads(row["recalled_ids"] or "[]")),
                    status=row["status"] or "ok",
                    access_count=int(row["access_count"] or 0),
                    last_accessed_at=row["last_accessed_at"],
                    extra=tuple(sorted(extra.items())),
                )
            )
        return self.with_next(turns) if with_next else turns

    def with_next(self, turns: list[Turn]) -> list[Turn]:
        """The turns with ``next_id`` filled in from their successors."""
        if not turns:
            return turns
        successors = (
            self._table.search()
            .where(f"prev_id IN {_id_list(t.id for t in turns)}")
            .select(["id", "prev_id"])
            .limit(None)
            .to_arrow()
            .to_pylist()
        )
        following = {row["prev_id"]: row["id"] for row in successors}
        return [replace(t, next_id=following.get(t.id)) for t in turns]

    def where(self, node: Filter | None, limit: int | None = None) -> list[Turn]:
        """Turns matching a filter, in time order."""
        query = self._table.search().select(_LIGHT_COLUMNS).limit(limit)
        if node is not None:
            query = query.where(compile_filter(node))
        turns = self._turns_from(query.to_arrow())
        return sorted(turns, key=lambda t: (t.timestamp, t.turn_index))

    def get(self, ids: Iterable[str]) -> dict[str, Turn]:
        """Turns by id (unknown or malformed ids are simply absent)."""
        id_list = _id_list(ids)
        if id_list == "()":
            return {}
        table = self._table.search().where(f"id IN {id_list}").select(_LIGHT_COLUMNS).limit(None).to_arrow()
        return {t.id: t for t in self._turns_from(table)}

    def neighbours(self, hits: Sequence[Turn], window: int, where: Filter | None = None) -> list[Turn]:
        """The turns within ±``window`` positions of each hit in its session (matching ``where``)."""
        if window <= 0 or not hits:
            return []
        keys = sorted(
            {
                position_key(hit.session_id, index)
                for hit in hits
                for index in range(max(0, hit.turn_index - window), hit.turn_index + window + 1)
            }
        )
        condition = "position IN (" + ", ".join(_quote(k) for k in keys) + ")"
        if where is not None:
            condition += f" AND {compile_filter(where)}"
        table = self._table.search().where(condition).select(_LIGHT_COLUMNS).limit(None).to_arrow()
        return self._turns_from(table, with_next=False)

    def vector_search(self, vector: npt.NDArray[np.float32], limit: int, where: Filter | None = None) -> list[Scored]:
        """Nearest turns by cosine; the score is the cosine similarity."""
        query = (
            self._table.search(vector.astype(np.float32), vector_column_name="vector")
            .distance_type("cosine")
            .select([*_LIGHT_COLUMNS, "_distance"])
            .limit(limit)
        )
        if where is not None:
            query = query.where(compile_filter(where), prefilter=True)
        table = query.to_arrow()
        distances = table.column("_distance").to_pylist()
        turns = self._turns_from(table.drop_columns(["_distance"]), with_next=False)
        return [Scored(t, 1.0 - float(d)) for t, d in zip(turns, distances, strict=True)]

    def text_search(self, text: str, limit: int, where: Filter | None = None) -> list[Scored]:
        """Full-text (BM25) matches; the score is BM25's."""
        words = index_words(text)
        if not words:
            return []
        if not self._fts_ready:
            self.ensure_indexes()
            if not self._fts_ready:
                return []
        query = (
            self._table.search(cast(Any, MatchQuery)(words, "words"), query_type="fts")
            .select(_LIGHT_COLUMNS)
            .limit(limit)
        )
        if where is not None:
            query = query.where(compile_filter(where), prefilter=True)
        try:
            table = query.to_arrow()
        except (ValueError, RuntimeError) as exc:
            if "no tokens" in str(exc).lower() or "empty" in str(exc).lower():
                return []
            raise KernelError(f"full-text search failed: {exc}") from exc
        scores = table.column("_score").to_pylist() if "_score" in table.column_names else [0.0] * table.num_rows
        keep = [c for c in table.column_names if c not in ("_score", "_relevance_score")]
        turns = self._turns_from(table.select(keep), with_next=False)
        return [Scored(t, float(s)) for t, s in zip(turns, scores, strict=True)]

    def hashes(self, session_file: str | None = None) -> dict[str, tuple[str, str, int, datetime | None]]:
        """``id -> (session_file, text_hash, access_count, last_accessed_at)`` for reconciliation."""
        query = (
            self._table.search()
            .select(["id", "session_file", "text_hash", "access_count", "last_accessed_at"])
            .limit(None)
        )
        if session_file is not None:
            query = query.where(f"session_file = {_quote(session_file)}")
        return {
            r["id"]: (
                r["session_file"],
                r["text_hash"],
                int(r["access_count"] or 0),
                r["last_accessed_at"],
            )
            for r in query.to_arrow().to_pylist()
        }

    def all_ids(self) -> set[str]:
        """Every stored turn id."""
        table = self._table.search().select(["id"]).limit(None).to_arrow()
        return set(table.column("id").to_pylist())

    def sessions(self) -> list[SessionInfo]:
        """Stored sessions, most recent first."""
        table = (
            self._table.search()
            .select(["session_id", "session_file", "timestamp", "turn_index", "messages"])
            .limit(None)
            .to_arrow()
        )
        grouped: dict[str, dict[str, Any]] = {}
        for row in table.to_pylist():
            entry = grouped.setdefault(
                row["session_id"],
                {
                    "file": row["session_file"],
                    "start": row["timestamp"],
                    "last": row["timestamp"],
                    "n": 0,
                    "first": (1 << 31, ""),
                },
            )
            entry["n"] += 1
            entry["start"] = min(entry["start"], row["timestamp"])
            entry["last"] = max(entry["last"], row["timestamp"])
            if row["turn_index"] < entry["first"][0]:
                messages = json.loads(row["messages"] or "[]")
                entry["first"] = (row["turn_index"], messages[0][2] if messages else "")
        infos = [
            SessionInfo(sid, e["file"], e["start"], e["last"], e["n"], e["first"][1]) for sid, e in grouped.items()
        ]
        return sorted(infos, key=lambda s: s.last, reverse=True)

    # ------------------------------------------------------------- maintenance

    def ensure_indexes(self, ann_min_rows: int = 50_000) -> list[str]:
        """Create missing indexes; return what was created (for reports)."""
        created: list[str] = []
        existing = {i.name: i for i in self._table.list_indices()}
        rows = self._table.count_rows()
        if rows == 0:
            return created
        kinds = {i.index_type for i in existing.values()}
        if "FTS" not in kinds:
            # the terms are cut by memory.words; the index splits on spaces and stems English
            self._table.create_index(
                "words",
                config=FTS(base_tokenizer="whitespace", with_position=False, stem=True, remove_stop_words=True),
                replace=True,
            )
            created.append("fts(words)")
        columns = {tuple(i.columns) for i in existing.values()}
        for column in ("timestamp", "id", "prev_id", "session_id", "position"):
            if (column,) not in columns:
                self._table.create_scalar_index(column, index_type="BTREE", replace=True)
                created.append(f"btree({column})")
        if rows >= ann_min_rows and not self.has_ann_index():
            partitions = max(16, int(rows**0.5))
            self._table.create_index(
                "vector", config=IvfHnswSq(distance_type="cosine", num_partitions=partitions), replace=True
            )
            created.append(f"ann(IVF_HNSW_SQ, {partitions} partitions at {rows} rows)")
        self._fts_ready = True
        return created

    def has_ann_index(self) -> bool:
        """True once an ANN vector index exists."""
        return any(list(i.columns) == ["vector"] for i in self._table.list_indices())

    def optimize(self, *, cleanup_unverified: bool = False) -> None:
        """Compact small fragments, bring indexes up to date, drop old versions.

        ``cleanup_unverified`` also deletes files left by a writer that was killed
        mid-commit; only safe when no other process is writing.
        """
        self._table.optimize(cleanup_older_than=timedelta(hours=1), delete_unverified=cleanup_unverified)

    def fragments(self) -> int:
        """Number of data fragments (a flood of tiny writes makes many)."""
        return int(self._table.stats()["fragment_stats"]["num_fragments"])

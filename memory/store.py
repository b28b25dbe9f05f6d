"""The LanceDB index of turns (the only module that imports lancedb).

The index can always be rebuilt from the transcripts. It holds one row per turn: the
anchor fields, the searchable text, a real UTC timestamp, access statistics and the
vector (the layout is in ``memory.index_schema``). ``next_id`` is not stored: it is
derived from the successor's ``prev_id``, so a live write is one append and never
rewrites an older row.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from dataclasses import replace
from datetime import datetime, timedelta
from typing import Any, cast

os.environ.setdefault("LANCEDB_LOG", "error")


import numpy as np
import numpy.typing as npt
import pyarrow as pa

from memory.errors import KernelError
from memory.filters import Filter
from memory.index_schema import (
    COLUMNS,
    LIGHT_COLUMNS,
    META_DIM,
    META_MODEL,
    META_SCHEMA,
    REBUILD_BELOW,
    SCHEMA_VERSION,
    VERSION_FIELD,
    Column,
    EventReader,
    Source,
    compile_filter,
    id_list,
    position_key,
    quote,
    rows,
    schema,
    sql_time,
    stored_version,
    turns_from,
)
from memory.results import Scored
from memory.turns import Turn, is_turn_id
from memory.words import index_words


def _import_lancedb() -> Any:
    """lancedb, imported with pydantic's schema building deferred.

    Importing lancedb defines hundreds of pydantic models for its REST namespace client,
    which huichat never uses; building their validators eagerly is half of the import's
    cost (≈2 s of CPU here), paid by every command. pydantic's own ``defer_build`` makes
    a model build them on first use instead; it is the default only while lancedb is
    imported, and a pydantic without that setting simply imports the slow way.
    """
    try:
        from pydantic._internal import _config

        defaults: dict[str, Any] = _config.config_defaults  # type: ignore[assignment]
    except (ImportError, AttributeError):
        defaults = {}
    previous = defaults.get("defer_build", False)
    if "defer_build" in defaults:
        defaults["defer_build"] = True
    try:
        import lancedb as module
    finally:
        if "defer_build" in defaults:
            defaults["defer_build"] = previous
    return module


lancedb = _import_lancedb()

TABLE = "turns"
_DERIVE_BATCH = 5000
_REINDEX = "run `huichat reindex` to rebuild it from the transcripts"


class TurnStore:
    """Turns in one LanceDB table, with vector, full-text and time indexes."""

    def __init__(
        self,
        uri: str,
        dim: int,
        embedder_name: str,
        read_events: EventReader,
        *,
        consistency_seconds: float = 0.0,
        for_rebuild: bool = False,
    ) -> None:
        self.uri = uri
        self.dim = dim
        self.embedder_name = embedder_name
        self.read_events = read_events
        """Reads the times a turn talks about (written with each row, derived for older indexes)."""
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
        self._fts_ready = any(
            i.index_type == "FTS" and list(i.columns) == ["words"] for i in self._table.list_indices()
        )
        has_flag = "embedded" in self._table.schema.names  # an old index opened for rebuilding may lack it
        self._pending = int(self._table.count_rows("embedded = false")) if has_flag else 0

    def _create(self) -> Any:
        try:
            return self._db.create_table(TABLE, schema=schema(self.dim, self.embedder_name))
        except (OSError, ValueError, RuntimeError):
            # another process created it first
            return self._db.open_table(TABLE)

    def reset(self) -> None:
        """Drop every row and start an empty table for the current embedder."""
        self._db.drop_table(TABLE)
        self._table = self._create()
        self._fts_ready = False
        self._pending = 0

    def restore_access(self, saved: dict[str, tuple[int, datetime | None]]) -> None:
        """Put back access statistics saved before a rebuild."""
        for turn_id, (count, last) in saved.items():
            if not is_turn_id(turn_id):
                continue
            values = {"access_count": str(int(count))}
            if last is not None:
                values["last_accessed_at"] = sql_time(last)
            self._table.update(where=f"id = {quote(turn_id)}", values_sql=values)

    def _check_compatible(self) -> None:
        table_schema = self._table.schema
        meta = table_schema.metadata or {}
        stored_dim = int(meta.get(META_DIM, b"0") or 0) or table_schema.field("vector").type.list_size
        stored_model = meta.get(META_MODEL, b"").decode()
        if stored_dim != self.dim:
            raise KernelError(
                f"the memory index holds {stored_dim}-dimensional vectors but the embedding model "
                f"{self.embedder_name} makes {self.dim}; {_REINDEX}"
            )
        if stored_model and stored_model != self.embedder_name:
            raise KernelError(f"the memory index was built with {stored_model}, not {self.embedder_name}; {_REINDEX}")
        self._migrate(stored_version(table_schema))

    def _migrate(self, version: int) -> None:
        """Bring an index written by an older huichat up to this layout, or say what to run."""
        if version > SCHEMA_VERSION:
            raise KernelError(
                f"the memory index was written by a newer huichat (layout {version}; this one knows up to "
                f"{SCHEMA_VERSION}); upgrade huichat, or {_REINDEX}"
            )
        present = set(self._table.schema.names)
        missing = [c for c in COLUMNS if c.name not in present]
        if version < REBUILD_BELOW or any(c.fill is None and c.derive is None for c in missing):
            raise KernelError(f"the memory index has an older layout ({version}, now {SCHEMA_VERSION}); {_REINDEX}")
        if missing:
            self._add_columns(missing)
            derived = [c for c in missing if c.derive is not None]
            if derived:
                self._derive(derived)
        if version < SCHEMA_VERSION:
            self._table.update_field_metadata({"path": VERSION_FIELD, "metadata": {META_SCHEMA: str(SCHEMA_VERSION)}})

    def _add_columns(self, missing: list[Column]) -> None:
        """Add columns an older index lacks: filled by SQL, or empty until derived."""
        try:
            filled = {c.name: c.fill for c in missing if c.fill is not None}
            if filled:
                self._table.add_columns(filled)
            empty = [pa.field(c.name, c.type) for c in missing if c.fill is None]
            if empty:
                self._table.add_columns(empty)
        except (OSError, ValueError, RuntimeError):
            # another process migrated it first
            self._table = self._db.open_table(TABLE)
            if {c.name for c in missing} - set(self._table.schema.names):
                raise

    def _derive(self, columns: list[Column]) -> None:
        """Fill new columns computed from each row's text and time, in batches (no re-embedding)."""
        table = self._table.search().select(["id", "text", "timestamp"]).limit(None).to_arrow()
        ids = table.column("id").to_pylist()
        texts, times = table.column("text").to_pylist(), table.column("timestamp").to_pylist()
        for start in range(0, len(ids), _DERIVE_BATCH):
            chunk = slice(start, start + _DERIVE_BATCH)
            sources = [
                Source.of(t or "", when, self.read_events) for t, when in zip(texts[chunk], times[chunk], strict=True)
            ]
            update = pa.table(
                {"id": ids[chunk]}
                | {c.name: pa.array([c.derive(s) for s in sources], type=c.type) for c in columns if c.derive}
            )
            self._table.merge_insert("id").when_matched_update_all().execute(update)

    @property
    def version(self) -> int:
        """The layout version of the open index."""
        return stored_version(self._table.schema)

    # ----------------------------------------------------------------- writing

    def _rows(self, turns: Sequence[Turn], texts: Sequence[str], vectors: npt.NDArray[np.float32] | None) -> pa.Table:
        if len(turns) != len(texts) or (vectors is not None and len(vectors) != len(turns)):
            raise ValueError("one search text and one vector per turn")
        if vectors is not None and len(turns) and vectors.shape[1] != self.dim:
            raise KernelError(f"vector size {vectors.shape[1]} does not match the index ({self.dim})")
        embedded = vectors is not None
        if vectors is None:
            vectors = np.zeros((len(turns), self.dim), dtype=np.float32)
        return rows(turns, texts, vectors, schema(self.dim, self.embedder_name), self.read_events, embedded=embedded)

    def add(self, turns: Sequence[Turn], texts: Sequence[str], vectors: npt.NDArray[np.float32] | None) -> None:
        """Append turns in one commit (one LanceDB version).

        ``texts`` are what was embedded (the turn with its conversational context); the
        full-text index holds the turn's own words only, so that a turn outranks its
        successor on the words it actually contains. ``vectors`` None: the turns are found
        by their words now and get their vectors later (``pending``, ``set_vectors``).
        """
        if not turns:
            return
        try:
            self._table.add(self._rows(turns, texts, vectors))
        except (OSError, ValueError, RuntimeError) as exc:
            raise KernelError(f"cannot write to the memory index: {exc}") from exc
        if vectors is None:
            self._pending += len(turns)

    def upsert(self, turns: Sequence[Turn], texts: Sequence[str], vectors: npt.NDArray[np.float32] | None) -> None:
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
        if vectors is None:
            self._pending += len(turns)

    def pending(self, limit: int) -> list[Turn]:
        """Turns indexed without their vector yet (oldest first, at most ``limit``)."""
        if not self._pending:
            return []
        table = self._table.search().where("embedded = false").select(LIGHT_COLUMNS).limit(limit).to_arrow()
        found = sorted(turns_from(table), key=lambda t: (t.timestamp, t.turn_index))
        if not found:
            self._pending = 0
        return found

    def set_vectors(self, ids: Sequence[str], vectors: npt.NDArray[np.float32]) -> None:
        """Give turns indexed earlier their vectors (one commit)."""
        if not len(ids):
            return
        flat = pa.array(np.ascontiguousarray(vectors, dtype=np.float32).reshape(-1), type=pa.float32())
        update = pa.table(
            {
                "id": pa.array(list(ids), type=pa.string()),
                "embedded": pa.array([True] * len(ids), type=pa.bool_()),
                "vector": pa.FixedSizeListArray.from_arrays(flat, self.dim),
            }
        )
        try:
            self._table.merge_insert("id").when_matched_update_all().execute(update)
        except (OSError, ValueError, RuntimeError) as exc:
            raise KernelError(f"cannot update the memory index: {exc}") from exc
        self._pending = max(0, self._pending - len(ids))

    @property
    def pending_count(self) -> int:
        """How many turns wait for their vector (counted at open, kept up to date by this process)."""
        return self._pending

    def delete(self, ids: Iterable[str]) -> None:
        """Remove turns by id."""
        ids_sql = id_list(ids)
        if ids_sql != "()":
            self._table.delete(f"id IN {ids_sql}")

    def record_access(self, counts: dict[str, int], now: datetime) -> None:
        """Add to ``access_count`` and set ``last_accessed_at`` for the given ids."""
        by_increment: dict[int, list[str]] = {}
        for turn_id, n in counts.items():
            by_increment.setdefault(n, []).append(turn_id)
        for n, ids in by_increment.items():
            ids_sql = id_list(ids)
            if ids_sql == "()":
                continue
            self._table.update(
                where=f"id IN {ids_sql}",
                values_sql={
                    "access_count": f"access_count + {int(n)}",
                    "last_accessed_at": sql_time(now),
                },
            )

    # ----------------------------------------------------------------- reading

    def count(self, where: Filter | None = None) -> int:
        """Number of turns (matching ``where``)."""
        return int(self._table.count_rows(compile_filter(where) if where is not None else None))

    def _turns_from(self, table: pa.Table, *, with_next: bool = True) -> list[Turn]:
        turns = turns_from(table)
        return self.with_next(turns) if with_next else turns

    def with_next(self, turns: list[Turn]) -> list[Turn]:
        """The turns with ``next_id`` filled in from their successors."""
        if not turns:
            return turns
        successors = (
            self._table.search()
            .where(f"prev_id IN {id_list(t.id for t in turns)}")
            .select(["id", "prev_id"])
            .limit(None)
            .to_arrow()
            .to_pylist()
        )
        following = {row["prev_id"]: row["id"] for row in successors}
        return [replace(t, next_id=following.get(t.id)) for t in turns]

    def where(self, node: Filter | None, limit: int | None = None) -> list[Turn]:
        """Turns matching a filter, in time order."""
        query = self._table.search().select(LIGHT_COLUMNS).limit(limit)
        if node is not None:
            query = query.where(compile_filter(node))
        turns = self._turns_from(query.to_arrow())
        return sorted(turns, key=lambda t: (t.timestamp, t.turn_index))

    def get(self, ids: Iterable[str]) -> dict[str, Turn]:
        """Turns by id (unknown or malformed ids are simply absent)."""
        ids_sql = id_list(ids)
        if ids_sql == "()":
            return {}
        table = self._table.search().where(f"id IN {ids_sql}").select(LIGHT_COLUMNS).limit(None).to_arrow()
        return {t.id: t for t in self._turns_from(table)}

    def vectors(self, ids: Iterable[str]) -> dict[str, npt.NDArray[np.float32]]:
        """The stored vectors of turns (only those already embedded)."""
        ids_sql = id_list(ids)
        if ids_sql == "()":
            return {}
        table = (
            self._table.search()
            .where(f"id IN {ids_sql} AND embedded = true")
            .select(["id", "vector"])
            .limit(None)
            .to_arrow()
        )
        vectors = table.column("vector").to_numpy(zero_copy_only=False)
        return {
            i: np.asarray(v, dtype=np.float32) for i, v in zip(table.column("id").to_pylist(), vectors, strict=True)
        }

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
        condition = "position IN (" + ", ".join(quote(k) for k in keys) + ")"
        if where is not None:
            condition += f" AND {compile_filter(where)}"
        table = self._table.search().where(condition).select(LIGHT_COLUMNS).limit(None).to_arrow()
        return self._turns_from(table, with_next=False)

    def vector_search(self, vector: npt.NDArray[np.float32], limit: int, where: Filter | None = None) -> list[Scored]:
        """Nearest turns by cosine; the score is the cosine similarity."""
        query = (
            self._table.search(vector.astype(np.float32), vector_column_name="vector")
            .distance_type("cosine")
            .select([*LIGHT_COLUMNS, "_distance"])
            .limit(limit)
        )
        condition = compile_filter(where) if where is not None else ""
        if self._pending:
            # placeholder vectors of turns not embedded yet must not look like matches
            condition = f"{condition} AND embedded = true" if condition else "embedded = true"
        if condition:
            query = query.where(condition, prefilter=True)
        table = query.to_arrow()
        distances = table.column("_distance").to_pylist()
        turns = self._turns_from(table.drop_columns(["_distance"]), with_next=False)
        return [Scored(t, 1.0 - float(d)) for t, d in zip(turns, distances, strict=True)]

    def text_search(self, text: str, limit: int, where: Filter | None = None) -> list[Scored]:
        """Full-text (BM25) matches over the turns' terms (``memory.words``); the score is BM25's."""
        words = index_words(text)
        if not words:
            return []
        if not self._fts_ready:
            self.ensure_indexes()
            if not self._fts_ready:
                return []
        query = (
            self._table.search(cast(Any, lancedb.query.MatchQuery)(words, "words"), query_type="fts")
            .select(LIGHT_COLUMNS)
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
            query = query.where(f"session_file = {quote(session_file)}")
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

    # ------------------------------------------------------------- maintenance

    def ensure_indexes(self, ann_min_rows: int = 50_000) -> list[str]:
        """Create missing indexes; return what was created (for reports)."""
        created: list[str] = []
        existing = {i.name: i for i in self._table.list_indices()}
        rows = self._table.count_rows()
        if rows == 0:
            return created
        for name, index in existing.items():
            if index.index_type == "FTS" and list(index.columns) != ["words"]:
                self._table.drop_index(name)  # the full text of layouts before 5 (ICU over ``text``)
        if not any(i.index_type == "FTS" and list(i.columns) == ["words"] for i in existing.values()):
            # the terms are cut by memory.words; the index splits on spaces and stems English
            self._table.create_index(
                "words",
                config=lancedb.index.FTS(
                    base_tokenizer="whitespace", with_position=False, stem=True, remove_stop_words=True
                ),
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
                "vector",
                config=lancedb.index.IvfHnswSq(distance_type="cosine", num_partitions=partitions),
                replace=True,
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

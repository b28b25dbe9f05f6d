"""The LanceDB index of turns (the only module that imports lancedb).

The index can always be rebuilt from the transcripts. It holds one row per turn: the
anchor fields, the searchable text, a real UTC timestamp, access statistics and the
vector (the layout is in ``memory.index_schema``). ``next_id`` is not stored: it is
derived from the successor's ``prev_id``, so a live write is one append and never
rewrites an older row.

Several processes may use one index. LanceDB then refuses some commits as conflicting
("Retryable commit conflict"); those are retried with a growing, jittered pause and never
surfaced. Every other failure of the vendor becomes a ``KernelError`` with one line; a
damaged index says so and names the command that rebuilds it.
"""

from __future__ import annotations

import importlib.util
import json
import os
import secrets
import shutil
import sys
import threading
import time
import warnings
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime, timedelta
from functools import partial
from pathlib import Path
from typing import Any, TypeVar, cast

os.environ.setdefault("LANCEDB_LOG", "error")


import numpy as np
import numpy.typing as npt
import pyarrow as pa
import pyarrow.compute as pc

from huichat.memory.errors import IndexUnavailable, KernelError
from huichat.memory.filters import Filter
from huichat.memory.health import OK, IndexHealth
from huichat.memory.held_rows import READ_COLUMNS, HeldRows
from huichat.memory.index_schema import (
    KEPT_COLUMNS,
    LIGHT_COLUMNS,
    META_INSTANCE,
    REINDEX,
    EventReader,
    IndexEntry,
    compile_filter,
    id_list,
    kept_fields,
    kept_table,
    messages_from,
    position_key,
    quote,
    rows,
    schema,
    stored_version,
    turns_from,
)
from huichat.memory.migrations import migrated
from huichat.memory.results import Scored, TurnState
from huichat.memory.turns import ImportanceParts, Message, Turn, is_turn_id
from huichat.memory.vector_matrix import VectorMatrix
from huichat.memory.vendor_errors import VENDOR_ERRORS, one_line, retry_conflicts, translated
from huichat.memory.words import index_words


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
    _defer_rest_client()
    try:
        import lancedb as module
    finally:
        if "defer_build" in defaults:
            defaults["defer_build"] = previous
    return module


_REST_CLIENT = "lance_namespace_urllib3_client"


def _defer_rest_client() -> None:
    """Make the REST namespace client's package load its ``__init__`` only when something of it is used.

    lancedb imports a few model classes from ``lance_namespace_urllib3_client``, whose
    package ``__init__`` eagerly imports its whole generated REST API (hundreds of
    ``validate_call`` methods: about a third of a second of CPU, before memory can open),
    which a local index never calls. The package is registered as a module whose
    submodules import as usual and whose own names (``ApiClient``, …) run the real
    ``__init__`` the first time one is asked for; nothing is lost, only postponed.
    """
    if _REST_CLIENT in sys.modules:
        return
    spec = importlib.util.find_spec(_REST_CLIENT)
    if spec is None or spec.loader is None or not spec.submodule_search_locations:
        return
    package = importlib.util.module_from_spec(spec)
    loader = spec.loader
    state = {"loaded": False}

    def load_package(name: str) -> Any:
        if state["loaded"] or name.startswith("__"):
            raise AttributeError(f"module {_REST_CLIENT!r} has no attribute {name!r}")
        state["loaded"] = True
        del package.__dict__["__getattr__"]
        loader.exec_module(package)
        return getattr(package, name)

    package.__dict__["__getattr__"] = load_package
    sys.modules[_REST_CLIENT] = package


lancedb = _import_lancedb()
_LOOP: Any = importlib.import_module("lancedb.background_loop").LOOP
"""LanceDB's own event-loop thread, which every synchronous call of the table crosses to."""

TABLE = "turns"
_CHUNK = 4096
"""Rows converted at a time in whole-table scans (the conversion holds the GIL)."""
_STATE_COLUMNS = (
    "id",
    "session_id",
    "timestamp",
    "status",
    "embedded",
    *KEPT_COLUMNS,
)
KEEP_VERSIONS = timedelta(minutes=2)
"""Old table versions kept for readers in other processes (a query takes well under a second)."""
ANN_MAX_PARTS = 8
"""Parts the ANN vector index may be in before a maintenance builds it again over every row (``merge_ann_parts``).

Each maintenance indexes the turns written since the last one as a part of its own (LanceDB's
``optimize`` adds a delta index; its Python API cannot merge them), and every search by the index
searches every part: at 100k turns written as a chat writes them (a maintenance every 32 writes)
the index was in 33 parts and a search by it cost twice what it costs in one part. Building it
again takes ~17 CPU-seconds at 100k, once per ~8 maintenances; it also sizes the partitions to
the rows there are now (BENCHMARKS.md, "Search latency", fifth pass)."""
T = TypeVar("T")
_TRACE_COLUMNS = ["id", "timestamp", "turn_index", "recalled_ids"]
"""What ``recalling`` reads of each row."""


@dataclass(frozen=True, eq=False)
class _Held:
    """What the store holds in memory of one table version (no matrix while an ANN index searches)."""

    version: tuple[int, int]
    """Which table (its object's id: a rebuilt table starts its versions again) and its version."""
    matrix: VectorMatrix | None
    rows: HeldRows | None

    def appended(
        self,
        version: tuple[int, int],
        appended: Sequence[tuple[str, npt.NDArray[np.float32] | None]],
        data: pa.Table,
    ) -> _Held:
        """These at ``version``, after turns (id, its vector or None) were appended as ``data``."""
        matrix = self.matrix.extended(appended) if self.matrix is not None else None
        return _Held(version, matrix, self.rows.extended(data) if self.rows is not None else None)

    def embedded(
        self, version: tuple[int, int], vectors: dict[str, npt.NDArray[np.float32]], changes: dict[str, dict[str, Any]]
    ) -> _Held | None:
        """These at ``version``, after turns waiting for their vector got it (and their light
        columns ``changes``); None (read them again) for a turn not held or already embedded."""
        rows = self.rows
        if rows is None or not all(rows.holds(turn_id) for turn_id in vectors):
            return None
        matrix = self.matrix
        if matrix is not None:
            if len(matrix.rows_of(vectors)):
                return None
            matrix = matrix.extended(list(vectors.items()))
        return _Held(version, matrix, rows.updated(changes))

    def accessed(self, version: tuple[int, int], counts: dict[str, int], now: datetime) -> _Held:
        """These at ``version``, after ``record_access`` counted ``counts`` at ``now`` (no vector changed)."""
        return _Held(version, self.matrix, self.rows.accessed(counts, now) if self.rows is not None else None)


@dataclass(eq=False)
class _Pin:
    """One search's held state (``TurnStore.one_version``), shared with the threads its parts run in."""

    held: _Held | None = None
    lock: threading.Lock = field(default_factory=threading.Lock)


def _stored(name: str, values: Sequence[Any]) -> list[Any]:
    """A column's values as the index stores them (importance parts as JSON)."""
    if name == "importance_parts":
        return [json.dumps(v.to_record()) if isinstance(v, ImportanceParts) else v for v in values]
    return list(values)


class TurnStore:
    """Turns in one LanceDB table, with vector, full-text and time indexes.

    Every LanceDB call runs under ``memory.vendor_errors.translated``: a read that fails
    says the index cannot be read and what to run (``_reading``), a commit that fails says
    what could not be written (``_write``, which retries conflicting commits first).
    """

    def __init__(
        self,
        uri: str,
        dim: int,
        embedder_name: str,
        read_events: EventReader,
        *,
        consistency_seconds: float = 0.0,
        for_rebuild: bool = False,
        keep_versions: timedelta = KEEP_VERSIONS,
        storage_options: Mapping[str, str] | None = None,
    ) -> None:
        self.uri = uri
        self.dim = dim
        self.embedder_name = embedder_name
        self.read_events = read_events
        """Reads the times a turn talks about (written with each row, derived for older indexes)."""
        self.keep_versions = keep_versions
        self.conflicts_retried = 0
        """Commits that raced another process and were tried again (for reports and benchmarks)."""
        self.vector_reads = 0
        """How often every row (and vector, without an ANN index) of the table was read into memory
        (once per table version changed by another process, ideally)."""
        self.health = OK
        """How this open found the index: ``BEHIND`` when a damaged table was dropped to be rebuilt."""
        self._pending: int | None = None
        """Turns waiting for their vector; counted at first need (a damaged table fails there, in one line)."""
        self._held: _Held | None = None
        """The vectors and light rows in memory for exact search, with the table version they were read at."""
        self._matrix_lock = threading.Lock()  # searches of several threads (serve) share the matrix
        self._pinned = threading.local()
        """Per thread, within ``one_version``: the ``_Pin`` of its search (``pin``)."""
        self.set_aside = ""
        """Where the last rebuild moved the old table (``reset``), unread and never deleted."""
        with translated(lambda detail: IndexUnavailable(f"cannot open the memory index at {uri}: {detail}")):
            self._db: Any = lancedb.connect(
                uri,
                read_consistency_interval=timedelta(seconds=consistency_seconds),
                storage_options=dict(storage_options) if storage_options else None,
            )
            # a table made by this open holds nothing, whatever a manifest says
            self.created = TABLE not in self._db.table_names()
            if not self.created:
                self._table: Any = self._open_existing(for_rebuild)
            else:
                self._table = self._create()
            self._fts_ready = any(
                i.index_type == "FTS" and list(i.columns) == ["words"] for i in self._table.list_indices()
            )

    def _open_existing(self, for_rebuild: bool) -> Any:
        def damaged(detail: str) -> KernelError:
            return IndexUnavailable(f"the memory index at {self.uri} cannot be opened ({detail}); {REINDEX}")

        with translated(damaged):
            try:
                table = self._db.open_table(TABLE)
                table.list_indices()
            except VENDOR_ERRORS as exc:
                if self._never_committed():
                    # its creation was cut short (a full disk, a crash): there is nothing to lose
                    self._drop()
                    return self._create()
                if not for_rebuild:
                    raise
                # a rebuild does not need the old table: it starts from the transcripts
                self.health = IndexHealth.behind(
                    f"the old memory index could not be opened ({one_line(exc)}); it is rebuilt from the transcripts"
                )
                self.set_aside = self._set_aside()
                self.created = True
                return self._create()
        if for_rebuild:
            return table
        return migrated(table, partial(self._db.open_table, TABLE), self.dim, self.embedder_name, self.read_events)

    def _never_committed(self) -> bool:
        versions = Path(self.uri) / f"{TABLE}.lance" / "_versions"
        return "://" not in self.uri and not (versions.is_dir() and any(versions.iterdir()))

    def _create(self) -> Any:
        layout = schema(self.dim, self.embedder_name, instance=secrets.token_hex(8))
        try:
            return self._db.create_table(TABLE, schema=layout)
        except VENDOR_ERRORS:
            # another process created it first
            return self._db.open_table(TABLE)

    @property
    def instance(self) -> str:
        """The table's random name, given when it was made ('' for tables made before it existed)."""
        return bytes((self._table.schema.metadata or {}).get(META_INSTANCE, b"")).decode()

    def _set_aside(self) -> str:
        """Move the table's folder aside, unread, to ``turns-<time>-set-aside.lance`` beside it (so
        LanceDB still opens it, as a table of another name): returns that folder ("" when there
        is none to move, or the index is remote, where it is dropped)."""
        folder = Path(self.uri) / f"{TABLE}.lance"
        if "://" in self.uri or not folder.exists():
            self._drop()
            return ""
        stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")  # a name for people, like a torn part's
        target = folder.with_name(f"{TABLE}-{stamp}-set-aside.lance")
        number = 1
        while target.exists():
            number += 1
            target = folder.with_name(f"{TABLE}-{stamp}-{number}-set-aside.lance")
        folder.rename(target)
        return str(target)

    def _drop(self) -> None:
        """Remove the table, even one too damaged for LanceDB to drop."""
        try:
            self._db.drop_table(TABLE)
        except VENDOR_ERRORS:
            folder = Path(self.uri) / f"{TABLE}.lance"
            if "://" in self.uri or not folder.exists():
                raise
            shutil.rmtree(folder)

    def _holds_data(self) -> bool:
        """Whether the table has data files (a remote one is taken to have)."""
        data = Path(self.uri) / f"{TABLE}.lance" / "data"
        return "://" in self.uri or (data.is_dir() and any(data.iterdir()))

    def reset(self) -> str:
        """Start an empty table for the current embedder, the old one moved aside unread (see
        ``_set_aside``; one without data is dropped): returns where it went."""
        with translated(lambda detail: KernelError(f"cannot rebuild the memory index at {self.uri}: {detail}")):
            if self._holds_data():
                self.set_aside = self._set_aside()
            else:
                self._drop()
            self._table = self._create()
        self.created = True
        self.health = OK
        self._fts_ready = False
        self._pending = 0
        return self.set_aside

    def _write(self, what: str, action: Callable[[], T]) -> T:
        """Run a commit, retrying it while it conflicts with another process's commit."""
        with translated(lambda detail: IndexUnavailable(f"cannot {what} the memory index: {detail}")):
            return retry_conflicts(action, self._conflict_retried)

    def _conflict_retried(self) -> None:
        self.conflicts_retried += 1

    def _reading(self) -> AbstractContextManager[None]:
        """The net under a read: a failure means the index is damaged (or gone) and says what to run."""
        return translated(
            lambda detail: IndexUnavailable(f"the memory index at {self.uri} cannot be read ({detail}); {REINDEX}")
        )

    def restore_kept(self, saved: dict[str, dict[str, Any]]) -> None:
        """Put back what only the index knew (access statistics, tier, importance, clusters) after a rebuild."""
        if saved:
            self._merge(kept_table(saved, self._table.schema))

    @property
    def version(self) -> int:
        """The layout version of the open index."""
        return stored_version(self._table.schema)

    # ----------------------------------------------------------------- writing

    def _rows(self, entries: Sequence[IndexEntry]) -> pa.Table:
        for entry in entries:
            if entry.vector is not None and len(entry.vector) != self.dim:
                raise KernelError(f"vector size {len(entry.vector)} does not match the index ({self.dim})")
        return rows(entries, schema(self.dim, self.embedder_name))

    def add(self, entries: Sequence[IndexEntry]) -> None:
        """Append turns in one commit (one LanceDB version).

        An entry without its vector is found by its words now and gets its vector later
        (``pending``, ``set_vectors``).
        """
        if not entries:
            return
        data = self._rows(entries)
        appended = [(e.turn.id, e.vector) for e in entries]
        with self._held_kept(lambda held, version: held.appended(version, appended, data)):
            self._commit("write to", entries, data, lambda data: self._table.add(data))

    def upsert(self, entries: Sequence[IndexEntry]) -> None:
        """Insert or replace turns by id (used when a transcript was edited)."""
        if not entries:
            return
        self._commit(
            "update",
            entries,
            self._rows(entries),
            lambda data: (
                self._table.merge_insert("id").when_matched_update_all().when_not_matched_insert_all().execute(data)
            ),
        )

    def _commit(
        self, what: str, entries: Sequence[IndexEntry], data: pa.Table, write: Callable[[pa.Table], object]
    ) -> None:
        unembedded = sum(e.vector is None for e in entries)
        waiting = self.pending_count if unembedded else 0  # counted before the write adds to it
        self._write(what, lambda: write(data))
        if unembedded:
            self._pending = waiting + unembedded

    def set_topics(self, entries: Sequence[IndexEntry]) -> None:
        """Give stored turns their new topic (a session's new title) in place, without re-embedding.

        The digest follows the topic; the topic travels as Arrow data, never inside a query string.
        """
        if not entries:
            return
        update = pa.table(
            {
                "id": pa.array([e.turn.id for e in entries], type=pa.string()),
                "topic": pa.array([e.turn.topic for e in entries], type=pa.string()),
                "text_hash": pa.array([e.digest for e in entries], type=pa.string()),
            }
        )
        self._write("update", lambda: self._table.merge_insert("id").when_matched_update_all().execute(update))

    def pending(self, limit: int) -> list[Turn]:
        """Turns indexed without their vector yet (oldest first, at most ``limit``)."""
        with self._reading():
            if not self.pending_count:
                return []
            query = self._table.search().where("embedded = false").select(LIGHT_COLUMNS).limit(limit)
            table = query.to_arrow()
            found = sorted(turns_from(table), key=lambda t: (t.timestamp, t.turn_index))
            if not found:
                self._pending = 0
            return found

    def set_vectors(self, entries: Sequence[IndexEntry], *, importance: bool) -> None:
        """Give turns indexed earlier their vectors (and, with ``importance``, their turns'
        importance scored with them), in one commit."""
        if not entries:
            return
        ids = [e.turn.id for e in entries]
        light: dict[str, Sequence[Any]] = {}
        if importance:
            light = {
                "importance": [e.turn.importance for e in entries],
                "importance_parts": [e.turn.importance_parts for e in entries],
            }
        vectors = {e.turn.id: e.vector for e in entries if e.vector is not None}
        changes = {name: dict(zip(ids, _stored(name, values), strict=True)) for name, values in light.items()}
        # carried across this commit: the catch-up after an import commits a batch every few seconds
        with self._held_kept(lambda held, version: held.embedded(version, vectors, changes)):
            self.update_columns(
                ids, {"embedded": [True] * len(entries), "vector": [e.vector for e in entries], **light}
            )
        self._pending = max(0, self.pending_count - len(entries))

    def still_waiting(self, entries: Sequence[IndexEntry]) -> set[str]:
        """The ids of ``entries`` whose turn still waits for its vector, unchanged (same digest):
        a vector computed outside the kernel's lock is stored only onto the text it was computed from."""
        with self._reading():
            ids_sql = id_list(e.turn.id for e in entries)
            if ids_sql == "()":
                return set()
            query = self._table.search().where(f"id IN {ids_sql} AND embedded = false").select(["id", "text_hash"])
            rows = query.limit(None).to_arrow().to_pylist()
        digests = {row["id"]: row["text_hash"] for row in rows}
        return {e.turn.id for e in entries if digests.get(e.turn.id) == e.digest}

    @property
    def pending_count(self) -> int:
        """How many turns wait for their vector (counted at open, kept up to date by this process)."""
        if self._pending is None:
            with self._reading():
                self._pending = self._count_pending()
        return self._pending

    def _count_pending(self) -> int:
        has_flag = "embedded" in self._table.schema.names  # an old index opened for rebuilding may lack it
        return int(self._table.count_rows("embedded = false")) if has_flag else 0

    @property
    def may_hold_cjk(self) -> bool:
        """False only when the rows held in memory say that no stored text holds a CJK character
        (True while none are held: nothing is read to answer)."""
        with self._reading():
            held = self._current(read=False)
        return held is None or held.rows is None or held.rows.cjk

    def delete(self, ids: Iterable[str]) -> None:
        """Remove turns by id."""
        ids_sql = id_list(ids)
        if ids_sql != "()":
            self._write("delete from", lambda: self._table.delete(f"id IN {ids_sql}"))

    def remove_duplicates(self) -> int:
        """Keep one row per turn id (the most accessed); returns how many extra rows were removed.

        Two processes can index the same turn (one reconciling while the other is between
        its transcript and its index write).
        """
        with self._reading():
            table = self._table.search().select(["id", "access_count"]).with_row_id(True).limit(None).to_arrow()
        rows_by_id: dict[str, list[tuple[int, int]]] = {}
        for row in table.to_pylist():
            rows_by_id.setdefault(row["id"], []).append((int(row["access_count"] or 0), int(row["_rowid"])))
        extra: list[str] = []
        for turn_id, found in rows_by_id.items():
            if len(found) > 1 and is_turn_id(turn_id):
                # the id is repeated in the condition: row ids move when fragments are compacted
                extra.extend(f"(_rowid = {rowid} AND id = {quote(turn_id)})" for _, rowid in sorted(found)[:-1])
        for start in range(0, len(extra), 200):
            condition = " OR ".join(extra[start : start + 200])
            self._write("delete from", partial(self._table.delete, condition))
        return len(extra)

    def record_access(self, counts: dict[str, int], now: datetime) -> None:
        """Add to ``access_count`` and set ``last_accessed_at`` for the given ids, in one commit.

        The counts are read and written back inside the retried commit, so a commit of another
        process in between is read again rather than overwritten.
        """
        ids = [turn_id for turn_id in counts if is_turn_id(turn_id)]
        if not ids:
            return

        def commit() -> None:
            with self._reading():
                current = (
                    self._table.search()
                    .where(f"id IN {id_list(ids)}")
                    .select(["id", "access_count"])
                    .limit(None)
                    .to_arrow()
                )
            found = current.column("id").to_pylist()
            if not found:
                return
            before = current.column("access_count").to_pylist()
            schema = self._table.schema
            update = pa.table(
                {
                    "id": pa.array(found, type=pa.string()),
                    "access_count": pa.array(
                        [(b or 0) + counts[i] for i, b in zip(found, before, strict=True)],
                        type=schema.field("access_count").type,
                    ),
                    "last_accessed_at": pa.array([now] * len(found), type=schema.field("last_accessed_at").type),
                }
            )
            self._table.merge_insert("id").when_matched_update_all().execute(update)

        with self._held_kept(lambda held, version: held.accessed(version, counts, now)):
            self._write("update", commit)

    @contextmanager
    def _held_kept(self, change: Callable[[_Held, tuple[int, int]], _Held | None]) -> Iterator[None]:
        """Carry the vectors and rows held in memory across a commit of ours (``change`` gives
        them after it, or None where they must be read again).

        Without this, every commit of this process — a flush of access statistics, a turn just
        said — made the next search read every vector and row again (they belong to one table
        version). Carried only when the commit is the one version after the held one: a commit
        of another process in between may have changed anything, and then they are read again
        as usual.
        """
        with self._matrix_lock:
            held = self._held
        yield
        if held is None or held.rows is None or held.version[0] != id(self._table):
            return
        with self._matrix_lock, self._reading():
            after = self._version()
            if self._held is held and after == (held.version[0], held.version[1] + 1):
                self._held = change(held, after)

    # ----------------------------------------------------------------- reading

    def count(self, where: Filter | None = None) -> int:
        """Number of turns (matching ``where``)."""
        with self._reading():
            condition = compile_filter(where) if where is not None else None
            return int(self._table.count_rows(condition))

    def check(self) -> int:
        """Read every row's id and run a tiny search: the row count, or ``KernelError`` if damaged."""
        count = self.count()
        with self._reading():
            ids = self._table.search().select(["id"]).limit(None).to_arrow().num_rows
        if ids != count:
            raise KernelError(f"the memory index at {self.uri} is inconsistent ({ids} of {count} rows read); {REINDEX}")
        if count:
            probe = np.zeros(self.dim, dtype=np.float32)
            probe[0] = 1.0
            self.vector_search(probe, 1)
        return count

    def _turns_from(self, table: pa.Table, *, with_next: bool = True) -> list[Turn]:
        turns = turns_from(table)
        return self.with_next(turns) if with_next else turns

    def with_next(self, turns: list[Turn]) -> list[Turn]:
        """The turns with ``next_id`` filled in from their successors (from memory when a search has
        just read the current version's vectors, which come with every turn's successor)."""
        with self._reading():
            current = self._current(read=False)
            if current is not None and current.rows is not None:
                following = current.rows.following
                return [replace(t, next_id=following.get(t.id)) if is_turn_id(t.id) else t for t in turns]
            ids_sql = id_list(t.id for t in turns)
            if ids_sql == "()":  # none (or only ids a hand edit mangled): nothing can follow them
                return turns
            condition = f"prev_id IN {ids_sql}"
            successors = (
                self._table.search().where(condition).select(["id", "prev_id"]).limit(None).to_arrow().to_pylist()
            )
            following = {row["prev_id"]: row["id"] for row in successors}
            return [replace(t, next_id=following.get(t.id)) for t in turns]

    def where(self, node: Filter | None, limit: int | None = None) -> list[Turn]:
        """Turns matching a filter, in time order (from the rows held in memory while they are current)."""
        with self._reading():
            held = self._current(read=False) if node is not None and limit is None else None
            found = held.rows.every(node) if held is not None and held.rows is not None and node is not None else None
            if found is not None:
                return sorted(self.with_next(found), key=lambda t: (t.timestamp, t.turn_index))
            query = self._table.search().select(LIGHT_COLUMNS).limit(limit)
            if node is not None:
                query = query.where(compile_filter(node))
            turns = self._turns_from(query.to_arrow())
            return sorted(turns, key=lambda t: (t.timestamp, t.turn_index))

    def get(self, ids: Iterable[str]) -> dict[str, Turn]:
        """Turns by id (unknown or malformed ids are simply absent)."""
        with self._reading():
            ids_sql = id_list(ids)
            if ids_sql == "()":
                return {}
            query = self._table.search().where(f"id IN {ids_sql}").select(LIGHT_COLUMNS).limit(None)
            return {t.id: t for t in self._turns_from(query.to_arrow())}

    def recalling(self, turn_id: str) -> list[str]:
        """The turns whose tool trace (``recalled_ids``) holds ``turn_id``, in time order: read from the
        rows held in memory while they are current, else the few columns of every row — the id is
        matched here, never put into a query."""
        with self._reading():
            held = self._current(read=False)
            table = (
                held.rows.table
                if held is not None and held.rows is not None
                else self._table.search().select(_TRACE_COLUMNS).limit(None).to_arrow()
            )
        # the JSON list holds the id between quotes; a row named so is then read in full
        named = pc.fill_null(pc.match_substring(table.column("recalled_ids"), f'"{turn_id}"'), False)
        rows = table.filter(named).select(_TRACE_COLUMNS).to_pylist()
        found = [r for r in rows if turn_id in json.loads(r["recalled_ids"] or "[]")]
        return [r["id"] for r in sorted(found, key=lambda r: (r["timestamp"], r["turn_index"]))]

    def vectors(self, ids: Iterable[str]) -> dict[str, npt.NDArray[np.float32]]:
        """The stored vectors of turns (only those already embedded)."""
        with self._reading():
            ids_sql = id_list(ids)
            if ids_sql == "()":
                return {}
            # in one hop, and ``embedded`` tested here: in the condition it cost more than the look-up by id
            query = self._asynchronous().query().where(f"id IN {ids_sql}").select(["id", "vector", "embedded"])
            table = _LOOP.run(query.to_arrow())
            table = table.filter(table.column("embedded"))
            vectors = table.column("vector").to_numpy(zero_copy_only=False)
            return {
                i: np.asarray(v, dtype=np.float32) for i, v in zip(table.column("id").to_pylist(), vectors, strict=True)
            }

    def unit_vectors(self, ids: Sequence[str]) -> dict[str, npt.NDArray[np.float32]]:
        """The unit-length vectors of turns (only those already embedded): from memory while held."""
        with self._reading():
            held = self._current()
            if held is not None and held.matrix is not None:
                return held.matrix.unit_of(ids)
        found = self.vectors(ids)
        return {i: v / max(float(np.linalg.norm(v)), 1e-12) for i, v in found.items()}

    def neighbours(self, hits: Sequence[Turn], window: int, where: Filter | None = None) -> list[Turn]:
        """The turns within ±``window`` positions of each hit in its session (matching ``where``)."""
        with self._reading():
            if window <= 0 or not hits:
                return []
            places = {
                (hit.session_id, index)
                for hit in hits
                for index in range(max(0, hit.turn_index - window), hit.turn_index + window + 1)
            }
            held = self._current()
            found = held.rows.at(places, where) if held is not None and held.rows is not None else None
            if found is not None:
                return found
            keys = sorted(position_key(session, index) for session, index in places)
            condition = "position IN (" + ", ".join(quote(k) for k in keys) + ")"
            if where is not None:
                condition += f" AND {compile_filter(where)}"
            query = self._table.search().where(condition).select(LIGHT_COLUMNS).limit(None)
            return self._turns_from(query.to_arrow(), with_next=False)

    def vector_search(self, vector: npt.NDArray[np.float32], limit: int, where: Filter | None = None) -> list[Scored]:
        """Nearest turns by cosine; the score is the cosine similarity.

        Without an ANN index the search is exact: done on the vectors held in memory
        (``memory.vector_matrix``), the turns then read by id; with one, LanceDB searches it
        (in one hop: ``_asynchronous``), for the hits' ids alone while the rows are held and every
        turn has its vector (``_hits_in_held``).
        """
        with self._reading():
            held = self._current()
            if held is not None and held.matrix is not None:
                return self._nearest_in(held, vector, limit, where)
            query = vector.astype(np.float32)
            return self._by_index(
                None if self.pending_count else held,  # a turn without its vector is no ANN hit
                limit,
                where,
                lambda columns, n, w: self._nearest_by_index(query, columns, n, w),
                _cosines,
            )

    def _nearest_by_index(
        self, vector: npt.NDArray[np.float32], columns: list[str], limit: int, where: Filter | None
    ) -> pa.Table:
        """LanceDB's search of its ANN index, its ``columns`` and ``_distance`` (``where`` before the search)."""
        query = (
            self._asynchronous()
            .query()
            .nearest_to(vector)
            .column("vector")
            .distance_type("cosine")
            .select([*columns, "_distance"])
            .limit(limit)
        )
        condition = compile_filter(where) if where is not None else ""
        if self.pending_count:
            # placeholder vectors of turns not embedded yet must not look like matches
            condition = f"{condition} AND embedded = true" if condition else "embedded = true"
        if condition:
            query = query.where(condition)  # before the search, as every filter here
        table: pa.Table = _LOOP.run(query.to_arrow())
        return table

    @contextmanager
    def one_version(self) -> Iterator[None]:
        """Within this block (one search) the vectors and rows held in memory are those of the
        version its first look-up found: its look-ups see one version and check it once.

        Checking the version is a hop to LanceDB's own thread (each waits behind whatever the
        process's other threads do); a search made three. The next block sees any commit made
        meanwhile, by this process or another. A part of the search run in another thread sees
        the same version through ``in_same_version``.
        """
        pinned = self._pinned
        outer: _Pin | None = getattr(pinned, "pin", None)
        if outer is None:
            pinned.pin = _Pin()
        try:
            yield
        finally:
            if outer is None:
                pinned.pin = None  # the thread is reused: it must not keep an old version alive

    def in_same_version(self, action: Callable[[], T]) -> Callable[[], T]:
        """``action``, to be run in another thread, seeing the version this thread's ``one_version``
        block sees (whichever thread looks first checks it: a search's full text and vector
        search share one check)."""
        pin: _Pin | None = getattr(self._pinned, "pin", None)
        if pin is None:
            return action

        def pinned() -> T:
            before: _Pin | None = getattr(self._pinned, "pin", None)
            self._pinned.pin = pin
            try:
                return action()
            finally:
                self._pinned.pin = before

        return pinned

    def _current(self, *, read: bool = True) -> _Held | None:
        """What is held in memory of the table's current version, read at the first search after a
        change (without ``read``: None unless already held). No vectors once an ANN index exists."""
        pin: _Pin | None = getattr(self._pinned, "pin", None)
        if pin is None:
            return self._latest(read=read)
        with pin.lock:
            if pin.held is None:
                pin.held = self._latest(read=read)
            return pin.held

    def _latest(self, *, read: bool) -> _Held | None:
        version = self._version()
        with self._matrix_lock:
            if self._held is None or self._held.version != version:
                if not read:
                    return None
                self._held = None  # a failed read leaves nothing behind
                ann = any(list(i.columns) == ["vector"] for i in self._table.list_indices())
                self._held = self._read_held(version, vectors=not ann)
            return self._held

    def _read_held(self, version: tuple[int, int], *, vectors: bool) -> _Held:
        """Every light row of ``version`` and, without an ANN index (``vectors``), the embedded turns' vectors."""
        columns = [*READ_COLUMNS, *(["vector", "embedded"] if vectors else [])]
        table = self._table.search().select(columns).limit(None).to_arrow()
        rows = HeldRows.of(table)
        self.vector_reads += 1
        if not vectors:
            return _Held(version, None, rows)
        if self.pending_count:
            table = table.filter(table.column("embedded"))
        flat = table.column("vector").combine_chunks().flatten().to_numpy(zero_copy_only=False)
        return _Held(version, VectorMatrix.of(table.column("id").to_pylist(), flat, self.dim), rows)

    def _version(self) -> tuple[int, int]:
        """Which table (a rebuilt one starts its versions again) at which version."""
        return (id(self._table), int(self._table.version))

    def _nearest_in(
        self, held: _Held, vector: npt.NDArray[np.float32], limit: int, where: Filter | None
    ) -> list[Scored]:
        """The ``limit`` nearest turns matching ``where``, as LanceDB's prefiltered flat search finds them.

        The nearest few are read with ``where`` applied; when too many of them fail it (a time
        range, say), the ids matching ``where`` are read first and only those are ranked.
        """
        matrix = cast(VectorMatrix, held.matrix)
        ranked = matrix.nearest(vector, limit + 8)
        found = self._light(held, ranked, where)
        if len(found) < limit and len(ranked) < len(matrix) and where is not None:
            allowed = held.rows.ids_matching(where) if held.rows is not None else None
            if allowed is None:
                read = self._table.search().select(["id"]).where(compile_filter(where)).limit(None).to_arrow()
                allowed = read.column("id").to_pylist()
            ranked = matrix.nearest(vector, limit, matrix.rows_of(allowed))
            found = self._light(held, ranked, where)
        return found[:limit]

    def _light(self, held: _Held, ranked: list[tuple[str, float]], where: Filter | None) -> list[Scored]:
        """The turns of ``ranked`` (id and cosine) that match ``where``, in that order."""
        if not ranked:
            return []
        turns = held.rows.by_ids([turn_id for turn_id, _ in ranked], where) if held.rows is not None else None
        if turns is not None:
            return [Scored(turns[turn_id], cosine) for turn_id, cosine in ranked if turn_id in turns]
        condition = (
            "id IN ("
            + ", ".join(quote(turn_id) for turn_id, _ in ranked)
            + ")"
            + (f" AND {compile_filter(where)}" if where is not None else "")
        )
        table = self._table.search().where(condition).select(LIGHT_COLUMNS).limit(None).to_arrow()
        turns = {t.id: t for t in self._turns_from(table, with_next=False)}
        return [Scored(turns[turn_id], cosine) for turn_id, cosine in ranked if turn_id in turns]

    def text_search(self, text: str, limit: int, where: Filter | None = None) -> list[Scored]:
        """Full-text (BM25) matches over the turns' terms (``memory.words``); the score is BM25's."""
        with self._reading():
            words = index_words(text)
            if not words:
                return []
            if not self._fts_ready:
                self.ensure_indexes()
                if not self._fts_ready:
                    return []
            return self._by_index(
                self._current(read=False),
                limit,
                where,
                lambda columns, n, w: self._full_text(words, columns, n, w),
                _bm25,
            )

    def _by_index(
        self,
        held: _Held | None,
        limit: int,
        where: Filter | None,
        search: Callable[[list[str], int, Filter | None], pa.Table],
        scores: Callable[[pa.Table], tuple[list[str], list[float]]],
    ) -> list[Scored]:
        """The ``limit`` best hits of one of LanceDB's index searches (``search(columns, limit, where)``,
        ``scores``: its hits' ids and scores): for the ids alone with the turns from ``held`` rows where
        they serve (``_hits_in_held``), else with the turns' columns read by the search."""
        if held is not None and held.rows is not None:
            found = self._hits_in_held(held.rows, limit, where, lambda n, w: scores(search(["id"], n, w)))
            if found is not None:
                return found
        table = search(LIGHT_COLUMNS, limit, where)
        turns = self._turns_from(table.select(LIGHT_COLUMNS), with_next=False)
        return [Scored(t, s) for t, s in zip(turns, scores(table)[1], strict=True)]

    def _hits_in_held(
        self,
        rows: HeldRows,
        limit: int,
        where: Filter | None,
        search: Callable[[int, Filter | None], tuple[list[str], list[float]]],
    ) -> list[Scored] | None:
        """The ``limit`` best hits of one of LanceDB's searches (``search(limit, where)``: the hits'
        ids and scores, best first) that match ``where``, their turns from the held rows (None:
        ``where`` is not evaluable here, or a hit is not held).

        LanceDB then reads one column of its hits, not every light one, and a filter that leaves
        out few rows (the base filter: tool traces, failed turns, the turns in context) is applied
        here, after the search: evaluated before it, it read every row's text on every search. The
        search then asks for as many more hits as rows the filter leaves out, so the ``limit`` best
        that pass are among them; BM25's scores and the index's nearest do not depend on the filter
        (measured: identical hits with and without it). A filter that leaves out more (a time
        range) still goes to LanceDB with the search.
        """
        left_out = rows.left_out(where) if where is not None else 0
        if left_out is None:
            return None
        after = left_out <= limit
        ids, scores = search(limit + left_out if after else limit, None if after else where)
        if not all(rows.holds(turn_id) for turn_id in ids):
            return None  # written since the held version (another process): read as before
        turns = rows.by_ids(ids, where)
        if turns is None:
            return None
        found = [Scored(turns[i], s) for i, s in zip(ids, scores, strict=True) if i in turns]
        return found[:limit]

    def _full_text(self, words: str, columns: list[str], limit: int, where: Filter | None) -> pa.Table:
        """LanceDB's BM25 search of ``words``, its ``columns`` and ``_score`` (``where`` before the search)."""
        query = (
            self._asynchronous()
            .query()
            .nearest_to_text(cast(Any, lancedb.query.MatchQuery)(words, "words"))
            .select(columns)
            .limit(limit)
        )
        if where is not None:
            query = query.where(compile_filter(where))  # before the search, as every filter here
        try:
            table: pa.Table = _LOOP.run(query.to_arrow())
        except VENDOR_ERRORS as exc:
            if "no tokens" in str(exc).lower() or "empty" in str(exc).lower():
                return pa.table({c: pa.array([], type=self._table.schema.field(c).type) for c in columns})
            raise
        return table

    def _asynchronous(self) -> Any:
        """The table's asynchronous face, for a query made in one hop to LanceDB's thread.

        The synchronous query builder crosses to LanceDB's event-loop thread about six times per
        query (the schema twice, the plan, each batch); every crossing waits behind whatever the
        process's other threads do, which is what made a search slow while ``serve`` was busy. The
        asynchronous query runs whole in one crossing (``_LOOP.run``). (``LanceTable._table`` is
        lancedb's own attribute, not its documented API: lancedb is pinned in constraints.txt.)
        """
        return self._table._table

    def hashes(self, session_file: str | None = None) -> dict[str, tuple[str, str, dict[str, Any], str]]:
        """``id -> (session_file, text_hash, kept fields, session_id)`` for reconciliation (see
        ``KEPT_COLUMNS``)."""
        with self._reading():
            columns = ["id", "session_file", "text_hash", "session_id", *KEPT_COLUMNS]
            query = self._table.search().select(columns).limit(None)
            if session_file is not None:
                query = query.where(f"session_file = {quote(session_file)}")
            rows_read = query.to_arrow().to_pylist()
            return {r["id"]: (r["session_file"], r["text_hash"], kept_fields(r), r["session_id"]) for r in rows_read}

    def states(self, where: Filter | None = None) -> list[TurnState]:
        """Every turn's lifecycle state (matching ``where``), without its text or vector."""
        with self._reading():
            query = self._table.search().select(list(_STATE_COLUMNS)).limit(None)
            if where is not None:
                query = query.where(compile_filter(where))
            states = []
            for batch in query.to_arrow().to_batches(max_chunksize=_CHUNK):
                for row in batch.to_pylist():
                    parts = row["importance_parts"]
                    states.append(
                        TurnState(
                            row["id"],
                            row["session_id"],
                            row["timestamp"],
                            row["status"] or "ok",
                            row["tier"] or "working",
                            row["importance"],
                            ImportanceParts.from_record(json.loads(parts)) if parts and parts != "null" else None,
                            int(row["access_count"] or 0),
                            row["last_accessed_at"],
                            row["cluster_id"] or "",
                            row["cluster_role"] or "",
                            bool(row["embedded"]),
                        )
                    )
                time.sleep(0)  # a long scan lets searches in other threads in between chunks
            return states

    def messages(self, where: Filter | None = None) -> dict[str, tuple[Message, ...]]:
        """The messages of every turn (matching ``where``), by id, without the rest of its row."""
        with self._reading():
            query = self._table.search().select(["id", "messages"]).limit(None)
            if where is not None:
                query = query.where(compile_filter(where))
            table = query.to_arrow()
            raw = table.column("messages").to_pylist()
            return dict(zip(table.column("id").to_pylist(), map(messages_from, raw), strict=True))

    def texts(self, where: Filter | None = None) -> dict[str, str]:
        """The searchable text of every turn (matching ``where``), by id."""
        with self._reading():
            query = self._table.search().select(["id", "text"]).limit(None)
            if where is not None:
                query = query.where(compile_filter(where))
            table = query.to_arrow()
            return dict(
                zip(table.column("id").to_pylist(), (t or "" for t in table.column("text").to_pylist()), strict=True)
            )

    def nearest(self, vectors: npt.NDArray[np.float32], limit: int) -> list[list[tuple[str, datetime, float]]]:
        """For each vector, its ``limit`` nearest embedded turns as ``(id, timestamp, cosine)`` (one query)."""
        with self._reading():
            if not len(vectors) or not self._table.count_rows():
                return [[] for _ in range(len(vectors))]
            query = (
                self._table.search(np.ascontiguousarray(vectors, dtype=np.float32), vector_column_name="vector")
                .distance_type("cosine")
                .select(["id", "timestamp", "_distance"])
                .limit(limit)
            )
            if self.pending_count:
                query = query.where("embedded = true", prefilter=True)
            table = query.to_arrow()
            found: list[list[tuple[str, datetime, float]]] = [[] for _ in range(len(vectors))]
            positions = table.column("query_index").to_pylist() if len(vectors) > 1 else [0] * table.num_rows
            for position, turn_id, moment, distance in zip(
                positions,
                table.column("id").to_pylist(),
                table.column("timestamp").to_pylist(),
                table.column("_distance").to_pylist(),
                strict=True,
            ):
                found[position].append((turn_id, moment, 1.0 - float(distance)))
            return found

    def update_columns(self, ids: Sequence[str], columns: dict[str, Sequence[Any]]) -> None:
        """Set some columns of existing turns by id, in one commit (rows that vanished are skipped)."""
        if not ids:
            return
        table_schema = self._table.schema
        data: dict[str, pa.Array] = {"id": pa.array(list(ids), type=pa.string())}
        for name, values in columns.items():
            if name == "vector":
                flat = pa.array(np.asarray(values, dtype=np.float32).reshape(-1), type=pa.float32())
                data[name] = pa.FixedSizeListArray.from_arrays(flat, self.dim)
                continue
            data[name] = pa.array(_stored(name, values), type=table_schema.field(name).type)
        self._merge(pa.table(data))

    def _merge(self, update: pa.Table) -> None:
        self._write("update", lambda: self._table.merge_insert("id").when_matched_update_all().execute(update))

    def disk_bytes(self) -> int:
        """Bytes the index takes on disk (0 for an index on object storage)."""
        if "://" in self.uri:
            return 0
        root = Path(self.uri)
        return sum(f.stat().st_size for f in root.rglob("*") if f.is_file()) if root.exists() else 0

    def all_ids(self) -> set[str]:
        """Every stored turn id."""
        with self._reading():
            table = self._table.search().select(["id"]).limit(None).to_arrow()
            return set(table.column("id").to_pylist())

    # ------------------------------------------------------------- maintenance

    def ensure_indexes(self, ann_min_rows: int = 50_000) -> list[str]:
        """Create missing indexes; return what was created (for reports)."""
        created: list[str] = []
        with self._reading():
            existing = {i.name: i for i in self._table.list_indices()}
        rows = self.count()
        if rows == 0:
            return created
        for name, index in existing.items():
            if index.index_type == "FTS" and list(index.columns) != ["words"]:
                self._write("index", partial(self._table.drop_index, name))  # layouts before 5: ICU over ``text``
        if not any(i.index_type == "FTS" and list(i.columns) == ["words"] for i in existing.values()):
            # the terms are cut by memory.words; the index splits on spaces and stems English
            fts = lancedb.index.FTS(base_tokenizer="whitespace", with_position=False, stem=True, remove_stop_words=True)
            self._write("index", lambda: self._table.create_index("words", config=fts, replace=True))
            created.append("fts(words)")
        columns = {tuple(i.columns) for i in existing.values()}
        for column in ("timestamp", "id", "prev_id", "session_id", "position"):
            if (column,) not in columns:
                self._write("index", partial(self._table.create_scalar_index, column, index_type="BTREE", replace=True))
                created.append(f"btree({column})")
        if rows >= ann_min_rows and not self.has_ann_index():
            created.append(self._build_ann(rows))
        self._fts_ready = True
        return created

    def _build_ann(self, rows: int) -> str:
        """Build the ANN vector index over every row (again, if there is one); what was built, for reports."""
        partitions = max(16, int(rows**0.5))
        ann = lancedb.index.IvfHnswSq(distance_type="cosine", num_partitions=partitions)
        self._write("index", lambda: self._table.create_index("vector", config=ann, replace=True))
        return f"ann(IVF_HNSW_SQ, {partitions} partitions at {rows} rows)"

    def merge_ann_parts(self) -> str | None:
        """Build the ANN index again over every row once it is in more than ``ANN_MAX_PARTS`` parts;
        what was done (None: nothing), for reports."""
        parts = self.ann_parts()
        if parts <= ANN_MAX_PARTS:
            return None
        return f"{self._build_ann(self.count())}: its {parts} parts made one"

    def has_ann_index(self) -> bool:
        """True once an ANN vector index exists."""
        return self.ann_parts() > 0

    def ann_parts(self) -> int:
        """How many parts the ANN vector index is in (0: none); see ``ANN_MAX_PARTS``."""
        with self._reading():
            index = next((i for i in self._table.list_indices() if list(i.columns) == ["vector"]), None)
            if index is None:
                return 0
            stats = self._table.index_stats(index.name)
            return (stats.num_indices or 1) if stats is not None else 1

    def optimize(self, *, cleanup_unverified: bool = False) -> None:
        """Compact small fragments, bring indexes up to date, drop versions older than ``keep_versions``.

        ``cleanup_unverified`` also deletes files left by a writer that was killed
        mid-commit; only safe when no other process is writing.
        """
        keep = self.keep_versions
        self._write(
            "compact", lambda: self._table.optimize(cleanup_older_than=keep, delete_unverified=cleanup_unverified)
        )

    def erase_history(self) -> None:
        """Rewrite the table from the rows it holds now and delete every older version and its files.

        A deleted row stays in its data file (marked deleted) and in older versions until then:
        after a purge the removed text must not stay anywhere on disk. The indexes are rebuilt
        by the next ``ensure_indexes``. Only safe when no other process is reading older versions.
        """
        with self._reading():
            rows = self._table.to_arrow().cast(self._table.schema)
        self._write("rewrite", lambda: self._table.add(rows, mode="overwrite"))
        with warnings.catch_warnings():  # it says what the docstring says: a purge asks for exactly this
            warnings.filterwarnings("ignore", "optimize.cleanup_older_than=0", UserWarning)
            self._write("clean up", lambda: self._table.optimize(cleanup_older_than=timedelta(0)))
        self._fts_ready = False
        self._held = None

    def refresh(self) -> None:
        """Read the newest version now, not once the read-consistency interval passed (a replica
        continuing a session another one wrote a moment ago): one listing of the table's versions."""
        with self._reading():
            self._table.checkout_latest()

    def recount_pending(self) -> int:
        """``pending_count`` counted again on the newest version (another process's vectors count)."""
        with self._reading():
            self._table.checkout_latest()
            counted = self._count_pending()
        self._pending = counted  # only once counted: a failed count leaves the last one
        return counted

    def fragments(self) -> int:
        """Number of data fragments (a flood of tiny writes makes many)."""
        with self._reading():
            return int(self._table.stats()["fragment_stats"]["num_fragments"])


def _bm25(table: pa.Table) -> tuple[list[str], list[float]]:
    """The ids and BM25 scores of a full-text search's hits."""
    ids: list[str] = table.column("id").to_pylist()
    if "_score" not in table.column_names:
        return ids, [0.0] * table.num_rows
    return ids, [float(s) for s in table.column("_score").to_pylist()]


def _cosines(table: pa.Table) -> tuple[list[str], list[float]]:
    """The ids and cosines of a vector search's hits."""
    ids: list[str] = table.column("id").to_pylist()
    return ids, [1.0 - float(d) for d in table.column("_distance").to_pylist()]


def read_every_row(uri: str) -> int:
    """Read every column of every row of the index at ``uri``, a batch at a time, and run one
    vector search: what a command's first reads touch. ``memory.index_probe`` runs this in a
    child process, where a read that aborts ends only the child. Returns the row count."""
    with translated(IndexUnavailable):  # the vendor's words alone: the probe's caller says what they are about
        db = lancedb.connect(uri)
        if TABLE not in db.table_names():
            return 0  # a new memory: nothing to read yet
        table = db.open_table(TABLE)
        rows: int = sum(batch.num_rows for batch in table.search().limit(None).to_batches(_CHUNK))
        dim = table.schema.field("vector").type.list_size
        if rows and dim > 0:
            probe = np.zeros(dim, dtype=np.float32)
            probe[0] = 1.0
            table.search(probe, vector_column_name="vector").select(["id"]).limit(1).to_arrow()
        return rows


def read_set_aside(uri: str, name: str, rank: int) -> tuple[int, pa.Table] | None:
    """Version ``rank`` (0 the newest) of the table ``name`` (one a rebuild set aside): its number
    and the kept columns of every row. None when the table has fewer versions;
    ``IndexUnavailable`` when it does not read."""
    with translated(lambda detail: IndexUnavailable(f"the set-aside index {name} cannot be read ({detail})")):
        table = lancedb.connect(uri).open_table(name)
        versions = sorted((v["version"] for v in table.list_versions()), reverse=True)
        if rank >= len(versions):
            return None
        table.checkout(versions[rank])
        names = table.schema.names
        return versions[rank], table.search().select([c for c in ("id", *KEPT_COLUMNS) if c in names]).limit(
            None
        ).to_arrow()


def read_set_aside_turns(uri: str, name: str, version: int, ids: Sequence[str], files: Sequence[str]) -> pa.Table:
    """Every column but the vector of the rows of ``ids`` and of ``files`` in ``version`` of the table ``name``."""
    with translated(lambda detail: IndexUnavailable(f"the set-aside index {name} cannot be read ({detail})")):
        table = lancedb.connect(uri).open_table(name)
        table.checkout(version)
        wanted = [f"id IN {id_list(ids)}"] if any(is_turn_id(i) for i in ids) else []
        if files:
            wanted.append("session_file IN (" + ", ".join(quote(f) for f in files) + ")")
        query = table.search().select([c for c in table.schema.names if c != "vector"]).limit(None)
        return query.where(" OR ".join(wanted or ["false"])).to_arrow()

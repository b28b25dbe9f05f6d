"""Bringing an index written by an older huichat up to this layout at open, or saying what to run.

An index is checked against the embedder first (its vector size and model): vectors of
another model cannot be compared, so that takes a rebuild. Then its layout version
(``memory.index_schema``) decides: a newer one is refused, one too old to fill in place is
rebuilt, and the missing columns of the rest are added in place — filled by SQL or derived
from each row's text and time in batches, never by re-embedding.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pyarrow as pa

from huichat.memory.errors import KernelError
from huichat.memory.index_schema import (
    COLUMNS,
    META_DIM,
    META_MODEL,
    META_SCHEMA,
    REBUILD_BELOW,
    REINDEX,
    SCHEMA_VERSION,
    VERSION_FIELD,
    Column,
    EventReader,
    Source,
    stored_version,
)
from huichat.memory.vendor_errors import VENDOR_ERRORS

_DERIVE_BATCH = 5000


def migrated(table: Any, reopen: Callable[[], Any], dim: int, embedder: str, read_events: EventReader) -> Any:
    """``table`` checked against the embedder (``dim``, ``embedder``) and brought up to this
    layout: the table to use from now on (``reopen`` gives it again when another process
    migrated it first). ``KernelError`` says what to run when it cannot be used."""
    table_schema = table.schema
    meta = table_schema.metadata or {}
    stored_dim = int(meta.get(META_DIM, b"0") or 0) or table_schema.field("vector").type.list_size
    stored_model = meta.get(META_MODEL, b"").decode()
    if stored_dim != dim:
        raise KernelError(
            f"the memory index holds {stored_dim}-dimensional vectors but the embedding model "
            f"{embedder} makes {dim}; {REINDEX}"
        )
    if stored_model and stored_model != embedder:
        raise KernelError(f"the memory index was built with {stored_model}, not {embedder}; {REINDEX}")
    version = stored_version(table_schema)
    if version > SCHEMA_VERSION:
        raise KernelError(
            f"the memory index was written by a newer huichat (layout {version}; this one knows up to "
            f"{SCHEMA_VERSION}); upgrade huichat, or {REINDEX}"
        )
    present = set(table_schema.names)
    missing = [c for c in COLUMNS if c.name not in present]
    if version < REBUILD_BELOW or any(c.fill is None and c.derive is None for c in missing):
        raise KernelError(f"the memory index has an older layout ({version}, now {SCHEMA_VERSION}); {REINDEX}")
    if missing:
        table = _add_columns(table, reopen, missing)
        derived = [c for c in missing if c.derive is not None]
        if derived:
            _derive(table, derived, read_events)
    if version < SCHEMA_VERSION:
        table.update_field_metadata({"path": VERSION_FIELD, "metadata": {META_SCHEMA: str(SCHEMA_VERSION)}})
    return table


def _add_columns(table: Any, reopen: Callable[[], Any], missing: list[Column]) -> Any:
    """Add columns an older index lacks: filled by SQL, or empty until derived."""
    try:
        filled = {c.name: c.fill for c in missing if c.fill is not None}
        if filled:
            table.add_columns(filled)
        empty = [pa.field(c.name, c.type) for c in missing if c.fill is None]
        if empty:
            table.add_columns(empty)
    except VENDOR_ERRORS:
        # another process migrated it first
        table = reopen()
        if {c.name for c in missing} - set(table.schema.names):
            raise
    return table


def _derive(table: Any, columns: list[Column], read_events: EventReader) -> None:
    """Fill new columns computed from each row's text and time, in batches (no re-embedding)."""
    rows = table.search().select(["id", "text", "timestamp"]).limit(None).to_arrow()
    ids = rows.column("id").to_pylist()
    texts, times = rows.column("text").to_pylist(), rows.column("timestamp").to_pylist()
    for start in range(0, len(ids), _DERIVE_BATCH):
        chunk = slice(start, start + _DERIVE_BATCH)
        sources = [Source.of(t or "", when, read_events) for t, when in zip(texts[chunk], times[chunk], strict=True)]
        update = pa.table(
            {"id": ids[chunk]}
            | {c.name: pa.array([c.derive(s) for s in sources], type=c.type) for c in columns if c.derive}
        )
        table.merge_insert("id").when_matched_update_all().execute(update)

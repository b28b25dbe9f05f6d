"""The index's layout version is read: older indexes are migrated in place or sent to reindex."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

import lancedb
import numpy as np
import pyarrow as pa
import pytest

from huichat.memory import index_schema
from huichat.memory.embedding import HashEmbedder
from huichat.memory.errors import KernelError
from huichat.memory.index_schema import COLUMNS, EVENT_SLOTS, SCHEMA_VERSION, Column
from huichat.memory.store import TurnStore
from huichat.memory.timeparse import TimeResolver
from huichat.memory.turns import Message, TurnDraft
from tests.conftest import NOW, ZONE, open_kernel

EVENT_COLUMNS = ("events", *(f"event{i}_{side}" for i in range(EVENT_SLOTS) for side in ("start", "end")))
LAYOUT_6 = tuple(c for c in COLUMNS if c.name not in EVENT_COLUMNS)
"""The columns before the times a turn talks about were indexed."""
LIFECYCLE = {"tier", "importance", "importance_parts", "cluster_id", "cluster_role"}
LAYOUT_5 = tuple(c for c in LAYOUT_6 if c.name not in LIFECYCLE)
"""The columns before the lifecycle (tiers, importance, consolidation)."""
LAYOUT_4 = tuple(c for c in LAYOUT_5 if c.name != "words")
"""The columns before the ``words`` terms."""
LAYOUT_3 = tuple(c for c in LAYOUT_5 if c.name not in ("embedded", "words"))
"""The columns before turns could be indexed ahead of their vectors, and before the ``words`` terms."""


def _store(root: Path, *, for_rebuild: bool = False) -> TurnStore:
    resolver = TimeResolver(ZONE)
    return TurnStore(
        str(root / "index.lancedb"), 64, HashEmbedder(64).name, resolver.event_ranges, for_rebuild=for_rebuild
    )


def _old_index(
    root: Path, version: int, columns: tuple[Column, ...], messages: str, text: str = "user: VPN 断了"
) -> None:
    """A one-row index as an older huichat wrote it: its own columns, its version in the table metadata."""
    embedder = HashEmbedder(64)
    fields = [pa.field(c.name, c.type, nullable=c.nullable) for c in columns]
    fields.append(pa.field("vector", pa.list_(pa.float32(), embedder.dim)))
    old = pa.schema(
        fields,
        metadata={
            b"huichat.dim": b"64",
            b"huichat.embedder": embedder.name.encode(),
            b"huichat.schema": b"%d" % version,
        },
    )
    row = {
        "id": "abc123",
        "session_id": "s1",
        "session_file": "2026-W48/2026-11-25/chat_s1.md",
        "turn_index": 0,
        "position": "s1#0",
        "timestamp": NOW,
        "topic": "VPN",
        "text": text,
        "words": "user vpn 断 了 断了",
        "messages": messages,
        "recalled_ids": "[]",
        "status": "ok",
        "prev_id": None,
        "access_count": 3,
        "last_accessed_at": None,
        "text_hash": "x",
        "extra": "",
        "embedded": True,
        "vector": embedder.embed_query("VPN").tolist(),
    }
    table = pa.Table.from_pylist([{c.name: row.get(c.name) for c in columns} | {"vector": row["vector"]}], schema=old)
    lancedb.connect(str(root / "index.lancedb")).create_table("turns", table)


def test_an_index_of_the_previous_layout_is_read_and_stamped_with_the_current_one(tmp_path: Path) -> None:
    _old_index(tmp_path, 2, LAYOUT_3, json.dumps([["user", "", "VPN 断了"]], ensure_ascii=False))
    store = _store(tmp_path)
    assert store.version == SCHEMA_VERSION
    assert store.pending_count == 0  # rows written before the flag existed have their vectors
    assert store._table.to_arrow().column("words").to_pylist() == ["user vpn 断 断了"]  # derived from the text
    turn = store.get(["abc123"])["abc123"]
    assert turn.messages == (Message("user", "VPN 断了"),)  # the old [role, speaker, text] encoding
    assert turn.access_count == 3


def test_a_missing_column_that_can_be_filled_is_added_in_place(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _old_index(tmp_path, 3, LAYOUT_4, "[]")
    grown = (*COLUMNS, Column("mood", pa.float32(), fill="cast(NULL as float)"))
    monkeypatch.setattr(index_schema, "COLUMNS", grown)
    monkeypatch.setattr("huichat.memory.migrations.COLUMNS", grown)
    store = _store(tmp_path)
    assert "mood" in store._table.schema.names
    assert store._table.to_arrow().column("mood").to_pylist() == [None]


def test_an_index_from_before_the_lifecycle_gets_its_columns_in_place(tmp_path: Path) -> None:
    _old_index(tmp_path, 4, LAYOUT_4, "[]")
    store = _store(tmp_path)
    assert store.version == SCHEMA_VERSION
    turn = store.get(["abc123"])["abc123"]
    assert (turn.tier, turn.importance, turn.importance_parts, turn.cluster_role) == ("working", None, None, "")
    assert turn.access_count == 3  # what it knew is kept
    [state] = store.states()
    assert state.tier == "working" and state.importance is None


def test_a_layout_that_needs_rebuilding_says_to_run_reindex(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _old_index(tmp_path, 3, LAYOUT_4, "[]")
    grown = (*COLUMNS, Column("text_segmented", pa.string()))  # derived from the text: no fill
    monkeypatch.setattr("huichat.memory.migrations.COLUMNS", grown)
    with pytest.raises(KernelError, match="huichat reindex"):
        _store(tmp_path)
    # reindex opens it for rebuilding and starts over in the current layout
    store = _store(tmp_path, for_rebuild=True)
    store.reset()
    assert store.version == SCHEMA_VERSION and store.count() == 0


def test_an_index_from_a_newer_huichat_is_refused_with_a_reason(tmp_path: Path) -> None:
    _old_index(tmp_path, SCHEMA_VERSION + 1, LAYOUT_4, "[]")  # (its extra columns unknown here)
    with pytest.raises(KernelError, match="newer huichat"):
        _store(tmp_path)


def test_a_new_index_round_trips_every_turn_field(tmp_path: Path) -> None:
    kernel = open_kernel(tmp_path)
    handle = kernel.new_session(NOW)
    draft = TurnDraft(
        (Message("user", "问\n```py\nx = 1\n```", "小王"), Message("assistant", "答")),
        NOW,
        "话题",
        ("zzz999",),
        extra=(("error", "boom"),),
    )
    written = kernel.append_turn(handle, draft)
    stored = kernel.recall_by_id(written.id).turn
    assert stored is not None
    assert stored.to_record() == written.to_record()
    assert stored.importance is not None and stored.importance_parts is not None
    assert stored.importance_parts.density > 0  # a code block and a number
    np.testing.assert_equal(kernel.store.version, SCHEMA_VERSION)
    kernel.close()


def test_a_layout_6_index_gets_its_event_times_derived_in_place(tmp_path: Path) -> None:
    text = "user: 我上周三下午在杭州部署了 Qwen 模型"  # said NOW (Wed 11-25 15:00): the 18th's afternoon
    _old_index(tmp_path, 6, LAYOUT_6, json.dumps([["user", "", text[6:]]], ensure_ascii=False), text)
    before = lancedb.connect(str(tmp_path / "index.lancedb")).open_table("turns").to_arrow().column("vector")
    store = _store(tmp_path)
    assert store.version == SCHEMA_VERSION
    table = store._table.to_arrow()
    assert table.column("vector").equals(before)  # nothing re-embedded
    start = datetime(2026, 11, 18, 12, tzinfo=ZONE)
    assert table.column("event0_start").to_pylist() == [start.astimezone(UTC)]
    assert table.column("event1_start").to_pylist() == [None]
    turn = store.get(["abc123"])["abc123"]
    assert [(r.start, r.end, r.phrase) for r in turn.events] == [(start, start + timedelta(hours=6), "上周三下午")]


def test_rows_read_again_become_the_same_turns_and_a_changed_row_its_new_values(tmp_path: Path) -> None:
    kernel = open_kernel(tmp_path)
    handle = kernel.new_session(NOW)
    first = kernel.append_turn(handle, TurnDraft((Message("user", "VPN 端口"), Message("assistant", "51820")), NOW))
    second = kernel.append_turn(handle, TurnDraft((Message("user", "pasta"), Message("assistant", "oil")), NOW))
    kernel.close()
    table = lancedb.connect(str(tmp_path / "index.lancedb")).open_table("turns")
    rows = table.search().select(index_schema.LIGHT_COLUMNS).limit(None).to_arrow()
    once, again = index_schema.turns_from(rows), index_schema.turns_from(rows)
    assert [t.to_record() for t in once] == [t.to_record() for t in again]
    assert {t.id for t in once} == {first.id, second.id}
    table.update(where=f"id = '{first.id}'", values_sql={"access_count": "access_count + 5", "topic": "'改过'"})
    changed = {
        t.id: t
        for t in index_schema.turns_from(table.search().select(index_schema.LIGHT_COLUMNS).limit(None).to_arrow())
    }
    assert (changed[first.id].access_count, changed[first.id].topic) == (5, "改过")
    assert changed[second.id].to_record() == {t.id: t for t in once}[second.id].to_record()

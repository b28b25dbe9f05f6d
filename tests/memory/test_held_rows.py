"""A search's hits and neighbours read from rows held in memory: the rows the index would give, always current."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from huichat.memory.filters import (
    About,
    Any_,
    Compare,
    Filter,
    In,
    Not,
    combine,
    excluding,
    parse_filter,
    said_only,
    said_or_about,
    status_filter,
)
from huichat.memory.kernel import MemoryKernel
from huichat.memory.results import SearchRequest
from huichat.memory.store import ANN_MAX_PARTS
from huichat.memory.turns import STATUS_FAILED, Message, Turn, TurnDraft
from tests.conftest import NOW, ZONE, open_kernel

START = datetime(2026, 9, 1, 9, tzinfo=ZONE)
SUBJECTS = ["WireGuard keepalive", "Postgres 迁移", "京都旅行 next Saturday", "deadlift form", "the cat's vet visit"]


def _drafts(count: int, start: datetime) -> list[TurnDraft]:
    """Turns a day apart: some failed, some a tool trace only (no text), some about a time ("next Saturday")."""
    drafts = []
    for i in range(count):
        if i % 9 == 4:
            messages: tuple[Message, ...] = (Message("tool", "{}", "lookup", "tool_call"),)
        else:
            messages = (Message("user", f"{SUBJECTS[i % len(SUBJECTS)]} #{i}"), Message("assistant", f"noted {i}"))
        status = STATUS_FAILED if i % 7 == 3 else "ok"
        drafts.append(TurnDraft(messages, start + timedelta(days=i), topic=f"topic {i % 3}", status=status))
    return drafts


@pytest.fixture
def filled(tmp_path: Path):  # type: ignore[no-untyped-def]
    kernel = open_kernel(tmp_path)
    for number in range(3):
        session = kernel.new_session(START + timedelta(days=40 * number))
        kernel.append_turns(session, _drafts(40, START + timedelta(days=40 * number)))
    yield kernel
    kernel.close()


def _everything(kernel: MemoryKernel) -> list[Turn]:
    return kernel.store.where(None)


def _held_matching(kernel: MemoryKernel, where: Filter | None) -> set[str]:
    """The ids a neighbour look-up over every place finds with ``where`` (from the rows held in memory)."""
    kernel.store.vector_search(kernel.embedder.embed_query("keepalive"), 1)  # the rows are held from here on
    return {t.id for t in kernel.store.neighbours(_everything(kernel), 1, where)}


def test_a_filter_passes_in_memory_the_rows_the_index_passes(filled: MemoryKernel) -> None:
    base = combine(said_only(), status_filter(False))
    week = said_or_about(datetime(2026, 9, 20, tzinfo=UTC), datetime(2026, 10, 20, tzinfo=UTC))
    some = [t.id for t in _everything(filled)[::5]]
    filters: list[Filter | None] = [
        None,
        base,
        combine(base, week),
        combine(base, excluding(frozenset(some))),
        Not(In("id", ("not an id!",))),
        Any_((Compare("topic", "=", "topic 1"), Compare("turn_index", ">=", 30))),
        Not(combine(Compare("status", "!=", STATUS_FAILED), About(START, START + timedelta(days=60)))),
        parse_filter("tier = 'working' AND NOT session = 'nope' AND timestamp < '2026-11-01'", ZONE),
        parse_filter("topic LIKE 'topic 2%'", ZONE),  # not evaluated in memory: the index answers it
        Compare("text", "=", ""),
    ]
    # read from the index before anything is held (from then on ``where`` is answered from memory too)
    expected = [{t.id for t in filled.store.where(where)} for where in filters]
    for where, ids in zip(filters, expected, strict=True):
        assert ids, where
        assert _held_matching(filled, where) == ids, where
        assert {t.id for t in filled.store.where(where)} == ids, where


@pytest.mark.parametrize("index", ["full text", "ann"])
def test_a_search_by_the_index_with_the_held_rows_finds_what_the_index_alone_finds(
    filled: MemoryKernel, index: str
) -> None:
    """Once the rows are held, LanceDB's full text (and its ANN search, from 50k turns on) reads only
    its hits' ids, filtered here (after the search when the filter leaves out fewer rows than it asks
    for, else before it, in the index), their turns from the held rows."""
    store = filled.store
    if index == "ann":
        assert any("ann" in created for created in store.ensure_indexes(ann_min_rows=100))

    def found(query: str, where: Filter | None, limit: int) -> list[tuple[str, float]]:
        if index == "ann":
            return [(s.turn.id, s.score) for s in store.vector_search(filled.embedder.embed_query(query), limit, where)]
        return [(s.turn.id, s.score) for s in store.text_search(query, limit, where)]

    def by_the_index(query: str, where: Filter | None, limit: int) -> list[tuple[str, float]]:
        """What LanceDB alone answers: the filter before the search (the ANN search always reads the rows)."""
        if index == "ann":
            vector = filled.embedder.embed_query(query)
            table = store._nearest_by_index(vector, ["id"], limit, where)
            return [(i, 1.0 - d) for i, d in zip(table["id"].to_pylist(), table["_distance"].to_pylist(), strict=True)]
        return found(query, where, limit)  # nothing held yet: the index reads the rows and filters them

    base = combine(said_only(), status_filter(False))
    week = said_or_about(datetime(2026, 9, 20, tzinfo=UTC), datetime(2026, 10, 20, tzinfo=UTC))
    some = [t.id for t in _everything(filled)[::4]]
    best = frozenset(turn_id for turn_id, _ in by_the_index("noted", None, 5))  # left out: 5 of the best
    filters: list[Filter | None] = [
        None,
        base,
        combine(base, week),
        combine(base, excluding(frozenset(some))),
        excluding(best),
    ]
    asked = [(query, where, limit) for query in ("deadlift form", "Postgres 迁移 vet", "noted") for where in filters
             for limit in (3, 20, 200)]  # fmt: skip
    expected = [by_the_index(*ask) for ask in asked]
    store.vector_search(filled.embedder.embed_query("keepalive"), 1)  # the rows are held from here on
    assert store._held is not None and store._held.rows is not None
    for ask, before in zip(asked, expected, strict=True):
        after = found(*ask)
        assert before, ask
        # equal scores may come in another order: every hit when all are asked for, else the scores
        assert [round(s, 5) for _, s in after] == [round(s, 5) for _, s in before], ask
        if ask[2] == 200:
            assert sorted(after) == sorted(before), ask


def test_a_failed_turn_or_a_tool_trace_is_never_a_hit_or_a_neighbour(filled: MemoryKernel) -> None:
    results = filled.search(SearchRequest("keepalive 迁移 deadlift", NOW, 10, context_window=2, resolve_time=False))
    shown = list(results.results)  # hits and their neighbours
    assert len(shown) > 10
    assert all(h.turn.status != STATUS_FAILED and h.turn.text for h in shown)


def test_a_forgotten_or_corrected_turn_is_seen_so_by_the_next_search(filled: MemoryKernel) -> None:
    query = SearchRequest("deadlift form", NOW, 5, context_window=1, resolve_time=False, record_access=False)
    first = filled.search(query)
    gone, corrected = first.hits[0].turn, first.hits[1].turn
    neighbour = next(r.turn for r in first.results if r.role == "neighbor")
    filled.forget(gone.id, NOW)
    filled.forget(neighbour.id, NOW)
    filled.correct(corrected.id, "deadlift form: the check was on Tuesday", NOW)
    after = filled.search(query)
    assert {gone.id, neighbour.id}.isdisjoint(r.turn.id for r in after.results)
    assert "deadlift form: the check was on Tuesday" in next(
        r.turn.text for r in after.results if r.turn.id == corrected.id
    )


def test_another_process_forgetting_or_writing_is_seen_by_the_next_search(tmp_path: Path) -> None:
    reader, writer = open_kernel(tmp_path), open_kernel(tmp_path)
    session = reader.new_session(START)
    reader.append_turns(session, _drafts(30, START))
    query = SearchRequest("deadlift form", NOW, 3, context_window=1, resolve_time=False, record_access=False)
    hit = reader.search(query).hits[0].turn
    writer.forget(hit.id, NOW)
    said = writer.append_turn(writer.new_session(NOW), TurnDraft((Message("user", "deadlift form deadlift"),), NOW))
    after = reader.search(query)
    assert hit.id not in {r.turn.id for r in after.results}
    assert after.hits[0].turn.id == said.id
    writer.close()
    reader.close()


def test_a_turn_just_written_is_found_with_its_neighbours_without_reading_everything_again(
    filled: MemoryKernel,
) -> None:
    query = SearchRequest("Mochi 猫粮 brand", NOW, 1, context_window=1, resolve_time=False, record_access=False)
    filled.search(query)  # the first search also builds the indexes (new versions)
    filled.search(query)
    reads = filled.store.vector_reads
    session = filled.new_session(NOW)
    before = filled.append_turn(session, TurnDraft((Message("user", "what cat food again"),), NOW))
    said = filled.append_turn(session, TurnDraft((Message("user", "Mochi 猫粮 brand"),), NOW + timedelta(minutes=1)))
    results = filled.search(query)
    assert [(r.turn.id, r.role) for r in results.results] == [(before.id, "neighbor"), (said.id, "hit")]
    assert results.results[0].turn.next_id == said.id
    assert filled.store.vector_reads == reads


def test_access_counts_of_the_held_rows_follow_the_flushed_statistics(filled: MemoryKernel) -> None:
    query = SearchRequest("WireGuard keepalive", NOW, 3, resolve_time=False)
    hits = filled.search(query).hits
    for _ in range(2):
        filled.search(query)
    filled.flush_access()
    reads = filled.store.vector_reads
    held = {
        h.turn.id: h.turn
        for h in filled.search(
            SearchRequest("WireGuard keepalive", NOW, 3, resolve_time=False, record_access=False)
        ).hits
    }
    stored = filled.store.get([h.turn.id for h in hits])
    assert {i: (t.access_count, t.last_accessed_at) for i, t in held.items()} == {
        i: (stored[i].access_count, stored[i].last_accessed_at) for i in held
    }
    assert all(t.access_count == 3 for t in held.values())
    assert filled.store.vector_reads == reads


def test_with_an_ann_index_the_rows_are_still_held_and_current(filled: MemoryKernel) -> None:
    assert any("ann" in created for created in filled.store.ensure_indexes(ann_min_rows=100))
    query = SearchRequest("deadlift form", NOW, 3, context_window=1, resolve_time=False, record_access=False)
    first = filled.search(query)
    hit = first.hits[0].turn
    stored = filled.store.where(None)
    by_place = {(t.session_id, t.turn_index): t for t in stored}
    successors = {t.prev_id: t.id for t in stored if t.prev_id}
    assert [r.turn.next_id for r in first.results] == [successors.get(r.turn.id) for r in first.results]
    neighbours = {r.turn.id for r in first.results if r.role == "neighbor" and r.hit_id == hit.id}
    assert neighbours == {
        t.id
        for t in (by_place.get((hit.session_id, hit.turn_index + d)) for d in (-1, 1))
        if t is not None and t.text and t.status != STATUS_FAILED
    }
    reads = filled.store.vector_reads
    filled.forget(next(iter(neighbours)), NOW)
    after = filled.search(query)
    assert next(iter(neighbours)) not in {r.turn.id for r in after.results}
    assert filled.store.vector_reads == reads + 1  # read again: the forget was a commit


def test_vectors_computed_later_are_searched_without_reading_everything_again(filled: MemoryKernel) -> None:
    session = filled.new_session(NOW)
    waiting = filled.append_turns(
        session,
        [TurnDraft((Message("user", "Mochi 猫粮 brand"),), NOW + timedelta(minutes=i)) for i in range(3)],
        embed=False,
    )
    query = SearchRequest("Mochi 猫粮 brand", NOW, 3, resolve_time=False, mode="vector", record_access=False)
    assert {h.turn.id for h in filled.search(query).hits}.isdisjoint(t.id for t in waiting)
    reads = filled.store.vector_reads
    assert filled.embed_pending() == 3
    found = filled.search(query).hits
    assert {h.turn.id for h in found} == {t.id for t in waiting}
    stored = filled.store.get([t.id for t in waiting])
    assert all(stored[t.id].importance is not None for t in waiting)  # scored with their vectors
    assert [(h.turn.importance, h.turn.importance_parts) for h in found] == [
        (stored[h.turn.id].importance, stored[h.turn.id].importance_parts) for h in found
    ]
    assert filled.store.vector_reads == reads


def test_an_ann_index_left_in_many_parts_by_maintenance_is_built_again_in_one(tmp_path: Path) -> None:
    """Each maintenance adds the turns written since the last one to the ANN index as a part of its own, and
    a search by the index searches every part: past ``ANN_MAX_PARTS`` a maintenance builds it again over every
    row — not the one at opening (tens of seconds at 100k turns), the next one."""
    kernel = open_kernel(tmp_path)
    session = kernel.new_session(START)
    kernel.append_turns(session, _drafts(120, START))
    store = kernel.store
    assert any("ann" in created for created in store.ensure_indexes(ann_min_rows=100))
    assert store.ann_parts() == 1
    batch = 0
    while store.ann_parts() <= ANN_MAX_PARTS and batch < 2 * ANN_MAX_PARTS:
        kernel.append_turns(session, _drafts(3, START + timedelta(days=200 + 3 * batch)))
        store.optimize()
        batch += 1
    parts = store.ann_parts()
    assert parts == ANN_MAX_PARTS + 1
    kernel.close()
    kernel = open_kernel(tmp_path)  # opening maintains too, but leaves the parts
    store = kernel.store
    assert store.ann_parts() == parts
    assert kernel.maintain() == [f"ann(IVF_HNSW_SQ, 16 partitions at {store.count()} rows): its {parts} parts made one"]
    assert store.ann_parts() == 1
    assert kernel.maintain() == []
    newest = kernel.append_turns(
        session, [TurnDraft((Message("user", "zeppelin hangar rent"),), START + timedelta(days=300))]
    )
    store.optimize()
    hits = kernel.search(SearchRequest("zeppelin hangar rent", NOW, 1, mode="vector", resolve_time=False)).hits
    assert [h.turn.id for h in hits] == [newest[0].id]
    kernel.close()

"""Vector search below the ANN index's size: exact, from the vectors held in memory, always current."""

from __future__ import annotations

from datetime import datetime, timedelta
from pathlib import Path

import numpy as np
import pytest

from huichat.memory.filters import combine, said_only, status_filter, time_range_filter
from huichat.memory.kernel import MemoryKernel
from huichat.memory.results import Scored
from huichat.memory.turns import Message, TurnDraft
from huichat.memory.vector_matrix import VectorMatrix
from tests.conftest import NOW, ZONE, open_kernel

SUBJECTS = ["WireGuard keepalive", "Postgres 迁移", "京都旅行", "deadlift form", "the cat's vet visit", "预算表"]
START = datetime(2026, 9, 1, 9, tzinfo=ZONE)


def _fill(kernel: MemoryKernel, count: int) -> None:
    """``count`` turns over ``count`` days, a few of them answered with a failure."""
    session = kernel.new_session(START)
    drafts = [
        TurnDraft(
            (Message("user", f"{SUBJECTS[i % len(SUBJECTS)]} #{i}"), Message("assistant", f"noted {i % 7}")),
            START + timedelta(days=i),
        )
        for i in range(count)
    ]
    kernel.append_turns(session, drafts)


def _brute_force(kernel: MemoryKernel, query: str, limit: int, keep: object = None) -> list[tuple[str, float]]:
    """The nearest turns by cosine over every stored vector, computed here without the store's search."""
    turns = kernel.store.where(None)
    vectors = kernel.store.vectors([t.id for t in turns])
    vector = kernel.embedder.embed_query(query)
    scored = [
        (t.id, float(np.dot(vectors[t.id], vector) / (np.linalg.norm(vectors[t.id]) * np.linalg.norm(vector))))
        for t in turns
        if t.id in vectors and (keep is None or keep(t))  # type: ignore[operator]
    ]
    return sorted(scored, key=lambda s: -s[1])[:limit]


def _same(found: list[Scored], expected: list[tuple[str, float]]) -> None:
    """The same cosines in the same order; ids equal wherever the cosine is not shared by another turn."""
    assert [round(s.score, 5) for s in found] == pytest.approx([round(c, 5) for _, c in expected], abs=2e-5)
    ties = {round(c, 5) for c in [c for _, c in expected] if [round(x, 5) for _, x in expected].count(round(c, 5)) > 1}
    assert [s.turn.id for s in found if round(s.score, 5) not in ties] == [
        i for i, c in expected if round(c, 5) not in ties
    ]


@pytest.fixture
def filled(tmp_path: Path):  # type: ignore[no-untyped-def]
    kernel = open_kernel(tmp_path)
    _fill(kernel, 120)
    yield kernel
    kernel.close()


def test_the_nearest_turns_are_those_a_full_scan_finds(filled: MemoryKernel) -> None:
    for query in ("keepalive", "京都", "cat vet", "预算"):
        vector = filled.embedder.embed_query(query)
        _same(filled.store.vector_search(vector, 10), _brute_force(filled, query, 10))
        _same(
            filled.store.vector_search(vector, 10, combine(said_only(), status_filter(False))),
            _brute_force(filled, query, 10),
        )


def test_a_narrow_filter_still_gets_its_nearest_turns(filled: MemoryKernel) -> None:
    # two weeks out of four months: most of the nearest turns overall fail the filter
    start, end = START + timedelta(days=30), START + timedelta(days=44)
    where = combine(said_only(), time_range_filter(start, end))
    found = filled.store.vector_search(filled.embedder.embed_query("keepalive"), 5, where)
    expected = _brute_force(filled, "keepalive", 5, lambda t: start <= t.timestamp < end)
    assert len(found) == 5
    _same(found, expected)


def test_a_turn_written_after_a_search_is_found_by_the_next(filled: MemoryKernel) -> None:
    vector = filled.embedder.embed_query("Mochi 猫粮 brand")
    before = filled.store.vector_search(vector, 3)
    session = filled.new_session(NOW)
    written = filled.append_turn(session, TurnDraft((Message("user", "Mochi 猫粮 brand"),), NOW))
    after = filled.store.vector_search(vector, 3)
    assert written.id not in {s.turn.id for s in before}
    assert after[0].turn.id == written.id and after[0].score > before[0].score


def test_turns_waiting_for_their_vector_are_not_matches(tmp_path: Path) -> None:
    kernel = open_kernel(tmp_path)
    _fill(kernel, 20)
    session = kernel.new_session(NOW)
    waiting = kernel.append_turns(session, [TurnDraft((Message("user", "keepalive keepalive"),), NOW)], embed=False)
    found = kernel.store.vector_search(kernel.embedder.embed_query("keepalive keepalive"), 30)
    assert waiting[0].id not in {s.turn.id for s in found}
    assert kernel.embed_pending() == 1
    found = kernel.store.vector_search(kernel.embedder.embed_query("keepalive keepalive"), 1)
    assert found[0].turn.id == waiting[0].id
    kernel.close()


def test_a_rebuilt_index_is_not_searched_with_the_old_vectors(filled: MemoryKernel) -> None:
    vector = filled.embedder.embed_query("keepalive")
    assert filled.store.vector_search(vector, 5)
    filled.store.reset()
    assert filled.store.vector_search(vector, 5) == []


def test_the_matrix_ranks_ties_by_row_and_ignores_zero_vectors() -> None:
    same = np.array([0.6, 0.8, 0.0], np.float32)
    vectors = np.vstack([np.zeros(3, np.float32), same, np.array([0.6, 0.0, 0.8], np.float32), same * 3])
    matrix = VectorMatrix.of(["zero", "a", "b", "c"], vectors.reshape(-1), 3)
    nearest = matrix.nearest(same, 3)
    assert [i for i, _ in nearest] == ["a", "c", "b"]
    assert [c for _, c in nearest] == pytest.approx([1.0, 1.0, 0.36], abs=1e-6)
    assert matrix.nearest(same, 4, matrix.rows_of(["zero", "b", "unknown"])) == [
        ("b", pytest.approx(0.36)),
        ("zero", 0.0),
    ]


def test_a_turn_another_process_writes_is_found(tmp_path: Path) -> None:
    reader, writer = open_kernel(tmp_path), open_kernel(tmp_path)
    _fill(reader, 10)
    vector = reader.embedder.embed_query("Mochi 猫粮 brand")
    assert reader.store.vector_search(vector, 1)
    written = writer.append_turn(writer.new_session(NOW), TurnDraft((Message("user", "Mochi 猫粮 brand"),), NOW))
    assert reader.store.vector_search(vector, 1)[0].turn.id == written.id
    writer.close()
    reader.close()


def test_successors_are_current_after_a_search_and_after_a_write(tmp_path: Path) -> None:
    kernel = open_kernel(tmp_path)
    session = kernel.new_session(NOW)
    first = kernel.append_turn(session, TurnDraft((Message("user", "keepalive 25"),), NOW))
    hits = kernel.store.vector_search(kernel.embedder.embed_query("keepalive"), 1)  # reads the vectors
    assert kernel.store.with_next([hits[0].turn])[0].next_id is None
    second = kernel.append_turn(session, TurnDraft((Message("user", "keepalive 30"),), NOW + timedelta(minutes=1)))
    assert kernel.store.with_next([first])[0].next_id == second.id
    kernel.store.vector_search(kernel.embedder.embed_query("keepalive"), 1)
    assert [t.next_id for t in kernel.store.with_next([first, second])] == [second.id, None]
    kernel.close()


def test_a_matrix_extended_by_appended_turns_ranks_as_one_read_whole() -> None:
    rng = np.random.default_rng(5)
    vectors = rng.normal(size=(30, 8)).astype(np.float32)
    ids = [f"t{i:05d}" for i in range(30)]
    first = VectorMatrix.of(ids[:20], vectors[:20], 8)
    appended = [(ids[i], vectors[i]) for i in range(20, 30)] + [("nvec01", None)]
    extended = first.extended(appended)
    whole = VectorMatrix.of(ids, vectors, 8)
    for query in rng.normal(size=(5, 8)).astype(np.float32):
        assert extended.nearest(query, 7) == whole.nearest(query, 7)
    assert len(extended) == 30 and len(first) == 20  # the held matrix is not changed under its readers

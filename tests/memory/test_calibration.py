"""Calibrated similarity, the threshold, hits before their context, and what recall never returns."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import pytest

from memory.calibration import CALIBRATION, Baseline, Evidence, calibrated, measure_baseline
from memory.config import RetrieverConfig
from memory.embedding import HashEmbedder
from memory.kernel import MemoryKernel
from memory.results import SearchRequest, format_results
from memory.turns import STATUS_FAILED, Message, TurnDraft
from tests.conftest import NOW, ZONE, open_kernel

E5 = Baseline(0.75, 0.03)


def test_similarity_never_rises_down_the_ranking() -> None:
    # a weak candidate ranked above a confident one is shown as at least as strong
    evidence = [
        Evidence(cosine=0.70, bm25=0.0, fused=1.0, rank=0),
        Evidence(cosine=0.90, bm25=9.0, fused=0.9, rank=1),
        Evidence(cosine=0.60, bm25=0.0, fused=0.1, rank=2),
    ]
    values = calibrated(evidence, E5)
    assert values == sorted(values, reverse=True)
    assert values[0] == values[1] == CALIBRATION.probability(evidence[1], E5)
    assert values[2] == CALIBRATION.probability(evidence[2], E5)


def test_stronger_evidence_means_higher_similarity() -> None:
    weak = Evidence(cosine=0.76, bm25=0.0, fused=0.5, rank=0)
    assert CALIBRATION.probability(weak, E5) < CALIBRATION.probability(Evidence(0.86, 0.0, 0.5, 0), E5)
    assert CALIBRATION.probability(weak, E5) < CALIBRATION.probability(Evidence(0.76, 12.0, 0.5, 0), E5)


def test_a_baseline_is_measured_for_an_unknown_embedder() -> None:
    baseline = measure_baseline(HashEmbedder(64))
    assert -1.0 < baseline.mean < 0.5 and 0.0 < baseline.spread < 1.0


@pytest.fixture
def memory(tmp_path: Path) -> MemoryKernel:
    kernel = open_kernel(tmp_path, config=RetrieverConfig(min_similarity=0.0, context_window=1))
    session = kernel.new_session(NOW - timedelta(days=3))
    when = NOW - timedelta(days=3)
    said = [
        ("The VPN drops every night", "Set the WireGuard keepalive to 25 seconds."),
        ("And the printer on floor 3?", "It needs a new fuser, ticket filed."),
        ("Thanks, what about lunch?", "The canteen has dumplings today."),
    ]
    for i, (user, assistant) in enumerate(said):
        kernel.append_turn(
            session, TurnDraft((Message("user", user), Message("assistant", assistant)), when + timedelta(minutes=i))
        )
    return kernel


def test_hits_come_first_and_their_context_follows_without_a_similarity(memory: MemoryKernel) -> None:
    results = memory.search(SearchRequest("printer fuser floor 3", NOW, top_k=1, context_window=1))
    hit = results.hits[0]
    assert "printer" in hit.turn.text and hit.similarity is not None
    text = format_results(results, ZONE)
    blocks = text.split("\n---\n")
    assert blocks[0].startswith(f"[id:{hit.turn.id} | prev: ")  # the hit first, not the turn before it
    assert " | 相似度: " in blocks[0].splitlines()[0]
    assert len(blocks) == 3
    for block, neighbour in zip(blocks[1:], [r for r in results if r.role == "neighbor"], strict=True):
        assert neighbour.similarity is None and neighbour.hit_id == hit.turn.id
        header, anchor = block.splitlines()[:2]
        assert header == f"↳ 上下文，属于命中 {hit.turn.id} (context for hit {hit.turn.id})"
        assert anchor.startswith(f"[id:{neighbour.turn.id} |") and "相似度" not in anchor
    # the context reads in conversation order: the VPN turn before the lunch turn
    assert "VPN" in blocks[1] and "lunch" in blocks[2]


def test_tool_traces_and_failed_turns_are_never_recalled(memory: MemoryKernel) -> None:
    session = memory.new_session(NOW - timedelta(days=1))
    trace = memory.append_turn(
        session,
        TurnDraft(
            (
                Message("assistant", '{"query": "WireGuard keepalive"}', "recall_memory", "tool_call"),
                Message("tool", "[id:abc123] WireGuard keepalive 25 seconds", "recall_memory", "tool_result"),
            ),
            NOW - timedelta(days=1),
        ),
    )
    failed = memory.append_turn(
        session,
        TurnDraft(
            (Message("user", "WireGuard keepalive again?"),), NOW - timedelta(days=1, minutes=-1), status=STATUS_FAILED
        ),
    )
    results = memory.search(SearchRequest("WireGuard keepalive", NOW, top_k=10, context_window=2))
    returned = {r.turn.id for r in results}
    assert results.hits and trace.id not in returned and failed.id not in returned
    on_purpose = memory.search(SearchRequest("WireGuard keepalive", NOW, top_k=10, include_failed=True))
    assert failed.id in {r.turn.id for r in on_purpose.hits} and trace.id not in {r.turn.id for r in on_purpose}


def test_turns_in_context_are_not_recalled(memory: MemoryKernel) -> None:
    first = memory.search(SearchRequest("WireGuard keepalive", NOW, top_k=1)).hits[0]
    again = memory.search(SearchRequest("WireGuard keepalive", NOW, top_k=10, exclude_ids=frozenset({first.turn.id})))
    assert first.turn.id not in {r.turn.id for r in again}

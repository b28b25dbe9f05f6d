"""Importance and the three tiers, on a real store: scored at write, moved by the daily job, never lost."""

from __future__ import annotations

from datetime import datetime, timedelta
from pathlib import Path

import pytest

from huichat.memory import importance
from huichat.memory.config import ImportanceWeights, LifecycleConfig, RetrieverConfig, TierPrior
from huichat.memory.embedding import HashEmbedder
from huichat.memory.joblog import JobLog
from huichat.memory.kernel import MemoryKernel
from huichat.memory.lifecycle import due, next_tier, plan_moves, run_lifecycle
from huichat.memory.opening import MemoryLocation, open_kernel
from huichat.memory.results import SearchRequest, TurnState
from huichat.memory.turns import Message, TurnDraft
from tests.conftest import NOW, ZONE


def lifecycle_kernel(root: Path, config: LifecycleConfig | None = None) -> MemoryKernel:
    # the threshold is calibrated for real models: the hash embedder's cosines mean nothing to it
    retriever = RetrieverConfig(min_similarity=0.0)
    return open_kernel(MemoryLocation.under(root), HashEmbedder(64), retriever, ZONE, now=NOW, lifecycle=config)


def say(kernel: MemoryKernel, user: str, when: datetime, reply: str = "好的。") -> str:
    """One turn in a session of its own; returns its id."""
    session = kernel.new_session(when)
    return kernel.append_turn(session, TurnDraft((Message("user", user), Message("assistant", reply)), when)).id


def state(kernel: MemoryKernel, turn_id: str) -> TurnState:
    return next(s for s in kernel.store.states() if s.id == turn_id)


# ------------------------------------------------------------------ importance


@pytest.mark.parametrize(
    ("text", "low", "high"),
    [
        ("ok", 0.0, 0.0),
        ("这件事非常重要，千万别忘了！", 0.6, 1.0),
        ("I absolutely hate this, it's a DISASTER!!", 0.6, 1.0),
        ("we should probably meet", 0.1, 0.2),
    ],
)
def test_sentiment_reads_emotion_words_and_marks_in_both_languages(text: str, low: float, high: float) -> None:
    assert low <= importance.sentiment(text) <= high


def test_density_counts_entities_numbers_code_headings_and_lists() -> None:
    plain = importance.density("we talked for a while")
    dense = importance.density(
        "## Deploy\n- port 8443\n- host db.example.com\n```sh\nssh root@10.0.0.2\n```\n见《三体》第 3 章, ask Alice Chen"
    )
    assert plain == 0.0
    assert dense >= 0.9


def test_feedback_decays_with_idle_days_and_access_saturates() -> None:
    fresh = importance.feedback(5, NOW, NOW)
    old = importance.feedback(5, NOW - timedelta(days=30), NOW)
    assert fresh == pytest.approx(0.5)
    assert old == pytest.approx(0.5 * 0.95**30)
    assert importance.access_frequency(0) == 0.0
    assert 0.6 < importance.access_frequency(5) < 0.65 < importance.access_frequency(10)


def test_weights_are_configurable_and_the_score_stays_in_range() -> None:
    parts = importance.parts_for("我爱这个方案！", 10, NOW, NOW, 1.0)
    only_novelty = ImportanceWeights(novelty=1.0, sentiment=0, feedback=0, access=0, density=0)
    assert importance.score(parts, only_novelty) == 1.0
    assert 0.0 <= importance.score(parts, ImportanceWeights()) <= 1.0


def test_a_written_turn_is_scored_and_a_repeat_is_less_novel(tmp_path: Path) -> None:
    kernel = lifecycle_kernel(tmp_path)
    first = say(kernel, "我的护照号码是 E12345678，下个月 3 号到期", NOW)
    again = say(kernel, "我的护照号码是 E12345678，下个月 3 号到期", NOW + timedelta(hours=1))
    stored = kernel.store.get([first, again])
    one, two = stored[first], stored[again]
    assert one.importance_parts is not None and two.importance_parts is not None
    assert one.importance_parts.novelty == 1.0  # nothing before it
    assert two.importance_parts.novelty is not None and two.importance_parts.novelty < 0.3
    assert one.importance is not None and two.importance is not None and two.importance < one.importance
    assert one.importance_parts.density > 0.2  # a document number and a date
    assert one.tier == "working"
    kernel.close()


def test_importance_can_be_turned_off(tmp_path: Path) -> None:
    kernel = lifecycle_kernel(tmp_path, LifecycleConfig(importance={"enabled": False}))
    turn = kernel.recall_by_id(say(kernel, "hello", NOW)).turn
    assert turn is not None and turn.importance is None
    kernel.close()


# ----------------------------------------------------------------------- rules


def _state(
    tier: str, days_old: float, score: float | None, accesses: int = 0, idle_days: float | None = None
) -> TurnState:
    last = None if idle_days is None else NOW - timedelta(days=idle_days)
    return TurnState(
        "abc123", "s", NOW - timedelta(days=days_old), "ok", tier, score, None, accesses, last, "", "", True
    )


@pytest.mark.parametrize(
    ("turn", "expected"),
    [
        (_state("working", 1, 0.2), None),  # fresh turns stay in working memory
        (_state("working", 1, 0.2, accesses=5, idle_days=0), "long_term"),  # retrieved often
        (_state("working", 2, 0.65), "long_term"),  # important
        (_state("working", 8, 0.5), "archive"),  # expired, not important
        (_state("working", 8, 0.7), "long_term"),  # expired but important: kept long-term
        (_state("long_term", 100, 0.2, accesses=5, idle_days=95), "archive"),  # old, idle, unimportant
        (_state("long_term", 100, 0.2, accesses=5, idle_days=10), None),  # still in use
        (_state("long_term", 100, 0.45, idle_days=95), None),  # between the thresholds: no flip-flop
        (_state("long_term", 30, 0.1), None),  # not old enough
        (_state("archive", 200, 0.65), "long_term"),  # important again
        (_state("archive", 200, 0.1), None),
    ],
)
def test_the_seed_rules_with_their_default_thresholds(turn: TurnState, expected: str | None) -> None:
    decided = next_tier(turn, NOW, LifecycleConfig())
    assert (decided[0] if decided else None) == expected


def test_thresholds_come_from_the_config() -> None:
    config = LifecycleConfig(working_memory_days=30, promotion_access_count=2, long_term_threshold=0.9)
    assert next_tier(_state("working", 8, 0.7), NOW, config) is None
    assert next_tier(_state("working", 1, 0.1, accesses=2, idle_days=0), NOW, config) is not None


# ------------------------------------------------------------------------- job


def _aged_store(root: Path) -> tuple[MemoryKernel, dict[str, str]]:
    kernel = lifecycle_kernel(root)
    ids = {
        "fresh": say(kernel, "今天下午去看牙医", NOW - timedelta(days=1)),
        "stale": say(kernel, "随便聊聊天气", NOW - timedelta(days=20)),
        "used": say(kernel, "VPN keepalive 设成 25 秒", NOW - timedelta(days=20)),
    }
    for _ in range(6):
        kernel.note_access([ids["used"]], NOW - timedelta(hours=1))
    kernel.flush_access()
    return kernel, ids


def test_the_job_moves_turns_logs_the_moves_and_is_idempotent(tmp_path: Path) -> None:
    kernel, ids = _aged_store(tmp_path)
    log = JobLog(tmp_path)
    before = {t.id: t.to_record()["messages"] for t in kernel.store.where(None)}
    transcripts = {p: p.read_bytes() for p in (tmp_path / "sessions").rglob("*.md")}

    dry = run_lifecycle(kernel, NOW, log, dry_run=True)
    assert {m.turn_id: m.target for m in dry.moves} == {ids["stale"]: "archive", ids["used"]: "long_term"}
    assert state(kernel, ids["stale"]).tier == "working" and log.records() == []  # a dry run writes nothing

    report = run_lifecycle(kernel, NOW, log)
    assert report.counts() == {"working→archive": 1, "working→long_term": 1}
    assert [state(kernel, ids[k]).tier for k in ("fresh", "stale", "used")] == ["working", "archive", "long_term"]
    moved = [r for r in log.records() if r["event"] == "move"]
    assert {(r["id"], r["to"]) for r in moved} == {(ids["stale"], "archive"), (ids["used"], "long_term")}
    assert all(r["reason"] for r in moved)
    # feedback and access now count for the turn that was used
    used = state(kernel, ids["used"])
    assert used.importance_parts is not None and used.importance_parts.access > 0.6

    again = run_lifecycle(kernel, NOW, log)
    assert again.moves == () and again.scored == 0
    # nothing is deleted or rewritten: the same turns, the same words, the same transcripts
    assert {t.id: t.to_record()["messages"] for t in kernel.store.where(None)} == before
    assert {p: p.read_bytes() for p in (tmp_path / "sessions").rglob("*.md")} == transcripts
    kernel.close()


def test_tiers_and_importance_survive_an_edit_of_the_transcript_and_a_reindex(tmp_path: Path) -> None:
    kernel, ids = _aged_store(tmp_path)
    run_lifecycle(kernel, NOW, JobLog(tmp_path))
    used = kernel.recall_by_id(ids["used"]).turn
    assert used is not None
    path = tmp_path / "sessions" / used.session_file
    path.write_text(path.read_text(encoding="utf-8").replace("25 秒", "30 秒"), encoding="utf-8")
    kernel.reconcile()
    edited = kernel.recall_by_id(ids["used"]).turn
    assert edited is not None and "30 秒" in edited.text
    assert (edited.tier, edited.access_count, edited.importance) == ("long_term", 6, used.importance)
    kernel.reindex()
    rebuilt = kernel.recall_by_id(ids["stale"]).turn
    assert rebuilt is not None and rebuilt.tier == "archive"
    assert state(kernel, ids["used"]).tier == "long_term"
    kernel.close()


def test_archived_turns_are_still_found(tmp_path: Path) -> None:
    kernel, ids = _aged_store(tmp_path)
    run_lifecycle(kernel, NOW, JobLog(tmp_path))
    stale = ids["stale"]
    # when nothing better matches
    assert stale in [h.turn.id for h in kernel.search(SearchRequest("天气", NOW, record_access=False)).hits]
    # by an explicit time range
    window = "timestamp >= '2026-11-04' AND timestamp <= '2026-11-06'"
    found = kernel.search(SearchRequest("", NOW, filter_expr=window, record_access=False)).hits
    assert stale in [h.turn.id for h in found]
    # by id and by anchors
    assert kernel.recall_by_id(stale).ok
    # and by the LLM's filter on the tier itself
    archived = kernel.search(SearchRequest("", NOW, filter_expr="tier = 'archive'", record_access=False)).hits
    assert [h.turn.id for h in archived] == [stale]
    kernel.close()


def test_the_tier_prior_puts_long_term_first_among_near_equals(tmp_path: Path) -> None:
    kernel = lifecycle_kernel(tmp_path, LifecycleConfig(tier_prior=TierPrior(long_term=0.1, archive=-0.1)))
    a = say(kernel, "去香山爬山 登顶", NOW - timedelta(days=3))
    b = say(kernel, "去香山爬山 登顶", NOW - timedelta(days=2))
    plain = [h.turn.id for h in kernel.search(SearchRequest("香山 爬山 登顶", NOW, record_access=False)).hits]
    older = plain.index(a) > plain.index(b)
    promoted, other = (a, b) if older else (b, a)
    kernel.update_turns([promoted, other], {"tier": ["long_term", "archive"]})
    ranked = kernel.search(SearchRequest("香山 爬山 登顶", NOW, record_access=False)).hits
    assert [h.turn.id for h in ranked][:2] == [promoted, other]
    assert ranked[0].similarity == pytest.approx(ranked[1].similarity, abs=0.05)  # the similarity shown is unchanged
    kernel.close()


def test_a_job_is_due_after_its_scheduled_time_passes() -> None:
    last = datetime(2026, 11, 24, 2, 30, tzinfo=ZONE)
    assert not due("0 2 * * *", last, datetime(2026, 11, 25, 1, 0, tzinfo=ZONE), ZONE)
    assert due("0 2 * * *", last, datetime(2026, 11, 25, 2, 1, tzinfo=ZONE), ZONE)
    assert due("0 2 * * *", None, NOW, ZONE)


def test_only_one_job_runs_at_a_time(tmp_path: Path) -> None:
    kernel, _ = _aged_store(tmp_path)
    log = JobLog(tmp_path)
    with log.exclusive() as held:
        assert held
        report = run_lifecycle(kernel, NOW, log)
    assert report.skipped and report.moves == ()
    kernel.close()


def test_a_plan_only_lists_real_moves() -> None:
    states = [_state("working", 8, 0.1), _state("working", 1, 0.1)]
    assert [m.target for m in plan_moves(states, NOW, LifecycleConfig())] == ["archive"]

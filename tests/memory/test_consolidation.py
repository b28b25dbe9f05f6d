"""Consolidation without loss, and jobs killed part-way: real store, real subprocesses."""

from __future__ import annotations

import subprocess
import sys
from datetime import timedelta
from pathlib import Path

import pytest

from huichat.memory.config import ConsolidationConfig
from huichat.memory.consolidation import Release, cluster_turns, clusters_of, run_consolidation, undo
from huichat.memory.errors import KernelError
from huichat.memory.joblog import JobLog
from huichat.memory.kernel import MemoryKernel
from huichat.memory.lifecycle import run_lifecycle
from huichat.memory.results import SearchRequest, format_search_result
from huichat.memory.turns import Message, TurnDraft
from tests.conftest import NOW, ZONE
from tests.memory.test_lifecycle import lifecycle_kernel, say

ROOT = Path(__file__).resolve().parents[2]
FACT = "我的车停在 B2 层 117 号车位"


def _repeated(kernel: MemoryKernel, times: int = 4, spacing: timedelta = timedelta(days=1)) -> list[str]:
    ids = [say(kernel, FACT, NOW - timedelta(days=6) + i * spacing) for i in range(times)]
    say(kernel, "明天要交季度报告", NOW - timedelta(days=2))
    say(kernel, "The cat needs a vet visit on Friday", NOW - timedelta(days=1))
    return ids


def test_near_duplicates_are_grouped_behind_the_most_important_and_all_stay_recallable(tmp_path: Path) -> None:
    kernel = lifecycle_kernel(tmp_path)
    ids = _repeated(kernel)
    kernel.note_access([ids[2]] * 6, NOW)
    kernel.flush_access()
    run_lifecycle(kernel, NOW, JobLog(tmp_path))  # the one in use outweighs the first mention's novelty
    report = run_consolidation(kernel, NOW, ConsolidationConfig(), JobLog(tmp_path))
    [cluster] = report.clusters
    assert cluster.representative == ids[2]
    assert set(cluster.members) == set(ids) - {ids[2]}

    results = kernel.search(SearchRequest("车停在哪个车位", NOW, record_access=False))
    shown = [h.turn.id for h in results.hits]
    assert shown.count(ids[2]) == 1 and not set(shown) & set(cluster.members)
    hit = next(h for h in results.hits if h.turn.id == ids[2])
    assert {t.id for t in hit.similar} == set(cluster.members)
    text = format_search_result(hit, ZONE)
    assert text.startswith(f"[id:{ids[2]} | prev: none | next: none | 相似度: ")  # the seed's block is intact
    assert text.splitlines()[-1].startswith("+3 similar: [id:")
    for member in cluster.members:
        found = kernel.recall_by_id(member).turn
        assert found is not None and found.text.startswith("user: " + FACT)  # kept, word for word
    assert kernel.count() == 6

    assert run_consolidation(kernel, NOW, ConsolidationConfig(), JobLog(tmp_path)).clusters == ()  # idempotent
    kernel.close()


def test_a_fact_repeated_inside_different_conversations_is_found_by_its_own_words(tmp_path: Path) -> None:
    kernel = lifecycle_kernel(tmp_path)
    ids = []
    for day, chatter in enumerate(
        ["今天的会议拖了很久，大家都在讨论预算和排期的问题", "Lunch was noodles again, then a long walk by the river"]
        * 2
    ):
        when = NOW - timedelta(days=5 - day)
        session = kernel.new_session(when)
        kernel.append_turn(session, TurnDraft((Message("user", chatter), Message("assistant", "嗯嗯。")), when))
        turn = kernel.append_turn(session, TurnDraft((Message("user", FACT), Message("assistant", "好的。")), when))
        ids.append(turn.id)
    [cluster] = run_consolidation(kernel, NOW, ConsolidationConfig(), JobLog(tmp_path)).clusters
    assert {cluster.representative, *cluster.members} == set(ids)
    kernel.close()


def test_a_cluster_needs_enough_members_inside_the_time_window(tmp_path: Path) -> None:
    kernel = lifecycle_kernel(tmp_path)
    _repeated(kernel, times=2)
    assert run_consolidation(kernel, NOW, ConsolidationConfig(), JobLog(tmp_path), dry_run=True).clusters == ()
    spread = lifecycle_kernel(tmp_path / "spread")
    _repeated(spread, times=3, spacing=timedelta(days=9))
    assert run_consolidation(spread, NOW, ConsolidationConfig(), JobLog(tmp_path / "spread")).clusters == ()
    wide = ConsolidationConfig(time_window_days=30)
    assert len(run_consolidation(spread, NOW, wide, JobLog(tmp_path / "spread")).clusters) == 1
    kernel.close()
    spread.close()


def test_a_later_repeat_joins_its_cluster(tmp_path: Path) -> None:
    kernel = lifecycle_kernel(tmp_path)
    ids = _repeated(kernel, times=3)
    [first] = run_consolidation(kernel, NOW, ConsolidationConfig(), JobLog(tmp_path)).clusters
    late = say(kernel, FACT, NOW - timedelta(hours=2))
    [grown] = run_consolidation(kernel, NOW, ConsolidationConfig(), JobLog(tmp_path)).clusters
    assert (grown.cluster_id, grown.members, grown.fresh) == (first.cluster_id, (late,), False)
    assert {t.id for t in cluster_turns(kernel, first.cluster_id)} == {*ids, late}
    kernel.close()


def test_undo_takes_a_cluster_apart_for_good(tmp_path: Path) -> None:
    kernel = lifecycle_kernel(tmp_path)
    ids = _repeated(kernel)
    log = JobLog(tmp_path)
    [cluster] = run_consolidation(kernel, NOW, ConsolidationConfig(), log).clusters
    undone = undo(kernel, cluster.cluster_id, NOW, log)
    assert {t.id for t in undone} == set(ids)
    assert clusters_of(kernel) == {}
    shown = [h.turn.id for h in kernel.search(SearchRequest(FACT, NOW, top_k=10, record_access=False)).hits]
    assert set(ids) <= set(shown)
    assert run_consolidation(kernel, NOW, ConsolidationConfig(), log).clusters == ()  # not regrouped
    assert [r["cluster"] for r in log.records() if r["event"] == "undo"] == [cluster.cluster_id]
    with pytest.raises(KernelError, match="no cluster"):
        undo(kernel, "cnothere", NOW, log)
    kernel.close()


def test_a_time_filter_that_leaves_out_the_representative_shows_a_member_instead(tmp_path: Path) -> None:
    kernel = lifecycle_kernel(tmp_path)
    ids = _repeated(kernel)
    [cluster] = run_consolidation(kernel, NOW, ConsolidationConfig(), JobLog(tmp_path)).clusters
    rep = kernel.recall_by_id(cluster.representative).turn
    assert rep is not None
    day = (rep.timestamp.astimezone(ZONE) + timedelta(days=1)).date()
    other = next(i for i in ids if i != cluster.representative)
    expr = f"timestamp >= '{day}' AND timestamp <= '{day + timedelta(days=4)}'"
    hits = kernel.search(SearchRequest("车位", NOW, filter_expr=expr, record_access=False)).hits
    assert cluster.representative not in [h.turn.id for h in hits]
    assert any(h.similar for h in hits) and other in {i for h in hits for i in [h.turn.id, *(t.id for t in h.similar)]}
    kernel.close()


def test_a_near_duplicate_holding_the_searched_word_is_shown_instead_of_a_representative_without_it(
    tmp_path: Path,
) -> None:
    # answers alike but for one name (seen in an imported export: a search for one service showed
    # a representative naming another, the turn holding it hidden behind "+15 similar")
    kernel = lifecycle_kernel(tmp_path)
    said = (
        "Deploy service {} by running the database migration first, then check the health endpoint, "
        "then turn on the feature flag and watch the error rate and latency for ten minutes before full traffic."
    )
    names = ["svc101", "svc202", "svc303", "svc404"]
    ids = {
        name: say(kernel, said.format(name), NOW - timedelta(days=6) + i * timedelta(days=1))
        for i, name in enumerate(names)
    }
    # alike but for a name is two facts: no longer grouped, but stores keep the groups made before
    assert run_consolidation(kernel, NOW, ConsolidationConfig(), JobLog(tmp_path), dry_run=True).clusters == ()
    roles = ["member"] * 3 + ["representative"]
    kernel.update_turns(list(ids.values()), {"cluster_id": ["cnames"] * 4, "cluster_role": roles})
    for name in names:
        hits = [h for h in kernel.search(SearchRequest(name, NOW, record_access=False)).hits if h.role == "hit"]
        assert hits[0].turn.id == ids[name] and name in hits[0].turn.text
        others = {t.id for t in hits[0].similar}
        assert others == set(ids.values()) - {ids[name]}  # the group is still one hit
    # a search every member answers alike still shows the representative
    shown = kernel.search(SearchRequest("database migration health endpoint", NOW, record_access=False)).hits[0]
    assert shown.turn.id == ids["svc404"]
    kernel.close()


ADVICE = (
    "先把服务绝对不能丢的东西写下来，其他决定都取决于这一点。容量规划可以很简单：测出峰值用量，预留两倍。"
    "运维手册和代码放在一起，代码改了手册也跟着改。\n\n## 部署\n\n每个请求都带一个编号并一路传下去，"
    "一次失败才能跨服务追踪。旧数据要定期清理，只增不减的表迟早会拖慢所有查询。{fact}\n\n"
    "Timeouts on every network call keep one slow dependency from stalling the rest. 哪部分想再深入，随时说。"
)
PROJECT_FACTS = (
    "松果 的值班由张伟负责。",
    "松果 的值班由李娜负责。",
    "松果 的数据放在 PostgreSQL 里。",
    "松果 的备份保留 21 份。",
)
ASKED = "松果 要注意什么？"


def test_long_answers_sharing_advice_but_stating_different_facts_are_not_grouped_while_repeats_are(
    tmp_path: Path,
) -> None:
    # an imported export's answers recombined the same advice around one sentence of fact: their
    # words were 0.85 alike, and every group mixed projects (a search for one project's database
    # found only the others)
    kernel = lifecycle_kernel(tmp_path)
    day = NOW - timedelta(days=6)
    different = [
        say(kernel, ASKED, day + i * timedelta(hours=5), ADVICE.format(fact=f)) for i, f in enumerate(PROJECT_FACTS)
    ]
    pasted = [
        say(kernel, ASKED, day + timedelta(days=2, hours=i), ADVICE.format(fact=PROJECT_FACTS[0])) for i in range(3)
    ]
    code = "记一下：健身房柜子的密码是 4711，在左边第三排"
    acknowledged = [
        say(kernel, code, day + timedelta(days=3, hours=i), reply)
        for i, reply in enumerate(["好的，记下了。", "Noted.", "Got it."])
    ]
    clusters = run_consolidation(kernel, NOW, ConsolidationConfig(), JobLog(tmp_path)).clusters
    groups = sorted({c.representative, *c.members} for c in clusters)
    assert groups == sorted(
        [{different[0], *pasted}, set(acknowledged)]
    )  # the same answer pasted again joins its first
    kernel.close()


def old_group(kernel: MemoryKernel, repeats: int) -> tuple[str, list[str], list[str]]:
    """A group as the earlier rule made them (stores keep theirs): a representative, two members stating
    other facts in the same advice, and ``repeats`` real repeats of it."""
    day = NOW - timedelta(days=6)
    representative = say(kernel, ASKED, day, ADVICE.format(fact=PROJECT_FACTS[0]))
    different = [
        say(kernel, ASKED, day + timedelta(hours=5 * i), ADVICE.format(fact=fact))
        for i, fact in enumerate(PROJECT_FACTS[1:3], 1)
    ]
    again = [
        say(kernel, ASKED, day + timedelta(days=2, hours=i), ADVICE.format(fact=PROJECT_FACTS[0]))
        for i in range(repeats)
    ]
    ids = [representative, *different, *again]
    roles = ["representative"] + ["member"] * (len(ids) - 1)
    kernel.update_turns(ids, {"cluster_id": ["cold"] * len(ids), "cluster_role": roles})
    return representative, different, again


def _groups(kernel: MemoryKernel) -> dict[str, tuple[str, str]]:
    return {s.id: (s.cluster_id, s.cluster_role) for s in kernel.store.states()}


def test_a_group_made_by_the_earlier_rule_keeps_only_its_repeats(tmp_path: Path) -> None:
    kernel = lifecycle_kernel(tmp_path)
    representative, different, [again] = old_group(kernel, repeats=1)
    log = JobLog(tmp_path)
    pairs = ConsolidationConfig(min_cluster_size=2)
    report = run_consolidation(kernel, NOW, pairs, log)
    groups = _groups(kernel)
    assert [groups[i] for i in different] == [("", "separate")] * 2  # as an undo of their membership leaves them
    assert (groups[representative], groups[again]) == (("cold", "representative"), ("cold", "member"))
    assert report.releases == (Release("cold", representative, tuple(different)),) and report.released == 2
    assert report.clusters == ()
    run = [(r["event"], r.get("members")) for r in log.records() if r.get("run") == report.run]
    assert run == [("start", None), ("release", different), ("applied", None), ("end", None)]  # logged before
    hit = kernel.search(SearchRequest("松果 PostgreSQL", NOW, record_access=False)).hits[0]
    assert hit.turn.id == different[1] and hit.similar == ()  # the project's database, on its own
    later = run_consolidation(kernel, NOW, pairs, log)
    assert (later.releases, later.clusters) == ((), ())  # released for good
    kernel.close()


def test_a_dry_run_reports_the_members_it_would_release_and_changes_nothing(tmp_path: Path) -> None:
    kernel = lifecycle_kernel(tmp_path)
    representative, different, again = old_group(kernel, repeats=2)
    log = JobLog(tmp_path)
    before = _groups(kernel)
    dry = run_consolidation(kernel, NOW, ConsolidationConfig(), log, dry_run=True)
    assert dry.releases == (Release("cold", representative, tuple(different)),) and dry.released == 2
    assert _groups(kernel) == before and log.records() == []
    real = run_consolidation(kernel, NOW, ConsolidationConfig(), log)
    assert real.releases == dry.releases
    assert {s.id for s in clusters_of(kernel)["cold"]} == {representative, *again}  # three: enough to stay
    kernel.close()


def test_a_group_left_too_small_is_dissolved_and_its_repeats_group_as_turns_never_grouped(tmp_path: Path) -> None:
    kernel = lifecycle_kernel(tmp_path)
    representative, different, [again] = old_group(kernel, repeats=1)
    late = say(kernel, ASKED, NOW - timedelta(days=3), ADVICE.format(fact=PROJECT_FACTS[0]))
    log = JobLog(tmp_path)
    dry = run_consolidation(kernel, NOW, ConsolidationConfig(), log, dry_run=True)
    [release] = dry.releases
    assert (release.members, release.ungrouped) == (tuple(different), (representative, again))
    [cluster] = dry.clusters  # dissolved, the two repeats count as ungrouped turns: with the third they group
    assert cluster.fresh and {cluster.representative, *cluster.members} == {representative, again, late}
    real = run_consolidation(kernel, NOW, ConsolidationConfig(), log)
    assert real.releases == dry.releases
    [grouped] = real.clusters
    groups = _groups(kernel)
    assert {groups[i] for i in (representative, again, late)} <= {
        (grouped.cluster_id, "representative"),
        (grouped.cluster_id, "member"),
    }
    assert [groups[i] for i in different] == [("", "separate")] * 2
    assert "cold" not in clusters_of(kernel)
    kernel.close()


def test_a_grouped_member_holding_the_query_words_its_representative_lacks_is_shown(tmp_path: Path) -> None:
    # a group made before near-duplicates had to state the same facts (stores keep theirs): the
    # turn holding both words of "松果 PostgreSQL" ranked under its representative and was folded away
    kernel = lifecycle_kernel(tmp_path)
    advice = "先把服务绝对不能丢的东西写下来。容量规划可以很简单：测出峰值用量，预留两倍。运维手册和代码放在一起。"
    said = {  # the representative ranks first (it says 松果 most), the turn holding both words after it
        "representative": "松果 的夜间备份安排在凌晨执行。松果 的值班由张伟负责。" + advice,
        "one word": "松果 的日志保留三十天。" + advice,
        "both words": advice + advice + "石榴 的数据放在 PostgreSQL 里，松果 不是。",
    }
    ids = {name: say(kernel, text, NOW - timedelta(days=3 - i)) for i, (name, text) in enumerate(said.items())}
    kernel.update_turns(
        list(ids.values()), {"cluster_id": ["cmixed"] * 3, "cluster_role": ["representative", "member", "member"]}
    )
    hits = kernel.search(SearchRequest("松果 PostgreSQL", NOW, record_access=False)).hits
    shown = [h.turn.id for h in hits]
    assert shown[:2] == [ids["representative"], ids["both words"]]
    folded = next(h for h in hits if h.turn.id == ids["representative"])
    assert [t.id for t in folded.similar] == [ids["one word"]]  # a turn shown is not listed as hidden too
    kernel.close()


def _killed(root: Path, job: str, when: str) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "tests.memory.job_process", str(root), job, when],
        cwd=ROOT,
        capture_output=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == -9, done.stderr.decode()[-2000:]


@pytest.mark.slow
@pytest.mark.parametrize("when", ["before-commit", "after-commit"])
def test_a_lifecycle_job_killed_part_way_loses_nothing_and_the_next_run_completes_it(tmp_path: Path, when: str) -> None:
    kernel = lifecycle_kernel(tmp_path)
    ids = [say(kernel, f"第 {i} 件旧事", NOW - timedelta(days=10 + i)) for i in range(5)]
    kernel.note_access([ids[0]] * 3, NOW)
    kernel.close()

    _killed(tmp_path, "lifecycle", when)

    kernel = lifecycle_kernel(tmp_path)
    assert kernel.count() == 5
    states = {s.id: s for s in kernel.store.states()}
    assert states[ids[0]].access_count == 3
    expected = "archive" if when == "after-commit" else "working"
    assert {s.tier for s in states.values()} == {expected}
    log = JobLog(tmp_path)
    report = run_lifecycle(kernel, NOW, log)
    assert report.resumed  # it found the run that never ended
    assert {s.tier for s in kernel.store.states()} == {"archive"}
    [resumed] = [r for r in log.records() if r["event"] == "resumed"]
    assert len(resumed["applied"]) == (5 if when == "after-commit" else 0)
    assert run_lifecycle(kernel, NOW, log).moves == ()
    kernel.close()


@pytest.mark.slow
def test_a_consolidation_killed_before_its_commit_is_completed_by_the_next_run(tmp_path: Path) -> None:
    kernel = lifecycle_kernel(tmp_path)
    ids = _repeated(kernel)
    kernel.close()
    _killed(tmp_path, "consolidation", "before-commit")
    kernel = lifecycle_kernel(tmp_path)
    assert clusters_of(kernel) == {} and kernel.count() == 6
    report = run_consolidation(kernel, NOW, ConsolidationConfig(), JobLog(tmp_path))
    assert report.resumed and {report.clusters[0].representative, *report.clusters[0].members} == set(ids)
    kernel.close()


@pytest.mark.slow
@pytest.mark.parametrize("when", ["before-commit", "after-commit"])
def test_releases_of_a_consolidation_killed_part_way_are_completed_and_logged_once(tmp_path: Path, when: str) -> None:
    kernel = lifecycle_kernel(tmp_path)
    representative, different, again = old_group(kernel, repeats=2)
    kernel.close()
    _killed(tmp_path, "consolidation", when)
    kernel = lifecycle_kernel(tmp_path)
    log = JobLog(tmp_path)
    report = run_consolidation(kernel, NOW, ConsolidationConfig(), log)
    [resumed] = [r for r in log.records() if r["event"] == "resumed"]
    assert resumed["released"] == (["cold"] if when == "after-commit" else [])
    assert report.resumed and report.released == (0 if when == "after-commit" else 2)  # planned again if lost
    assert [_groups(kernel)[i] for i in different] == [("", "separate")] * 2
    assert {s.id for s in clusters_of(kernel)["cold"]} == {representative, *again}
    kernel.close()

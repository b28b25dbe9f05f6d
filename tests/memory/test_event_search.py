"""Searching by event time: a turn is found by when it was said or by the time it talks about.

The README's example, future plans, ranges that hold fewer hits than asked (the nearest
outside, marked), and queries whose time phrase is content rather than a constraint.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from pathlib import Path

from huichat.memory.config import RetrieverConfig
from huichat.memory.kernel import MemoryKernel
from huichat.memory.results import SearchRequest, SearchResults, format_search_result, placement, time_summary
from huichat.memory.turns import Message, Turn, TurnDraft
from tests.conftest import ZONE, open_kernel

SAID = datetime(2026, 11, 30, 10, 0, tzinfo=ZONE)
"""A Monday morning: 上周三下午 is 2026-11-25 12:00–18:00."""


def _say(kernel: MemoryKernel, when: datetime, *texts: str) -> list[Turn]:
    session = kernel.new_session(when)
    drafts = [
        TurnDraft((Message("user", text), Message("assistant", "好的")), when + timedelta(minutes=i))
        for i, text in enumerate(texts)
    ]
    return kernel.append_turns(session, drafts)


def _search(kernel: MemoryKernel, query: str, now: datetime, top_k: int = 3) -> SearchResults:
    return kernel.search(SearchRequest(query, now, top_k, record_access=False))


def test_the_readme_example_this_week_next_week_and_by_its_date(tmp_path: Path) -> None:
    kernel = open_kernel(tmp_path)
    (turn,) = _say(kernel, SAID, "我上周三下午在杭州部署了 Qwen 模型")
    _say(kernel, SAID - timedelta(days=20), "部署 llama.cpp 的笔记")  # said long before, about nothing dated
    for query, now in [
        ("上周三下午 部署", SAID + timedelta(minutes=5)),
        ("上上周三下午 部署", SAID + timedelta(days=7)),
        ("11月25日下午 部署", SAID + timedelta(days=30)),
        ("2026-11-25 部署", SAID + timedelta(days=30)),
    ]:
        results = _search(kernel, query, now)
        assert results.time_range is not None, query
        first = results.hits[0]
        assert first.turn.id == turn.id, query
        assert not first.said_in_range and not first.outside, query
        assert [r.phrase for r in first.about] == ["上周三下午"], query
    results = _search(kernel, "上周三下午 部署", SAID + timedelta(minutes=5))
    assert placement(results.hits[0], ZONE) == "about 11-25 12:00–18:00 (上周三下午)"
    assert "\n🕒 about 11-25 12:00–18:00 (上周三下午)\n" in format_search_result(results.hits[0], ZONE)
    kernel.close()


def test_a_turn_said_in_the_range_says_so(tmp_path: Path) -> None:
    kernel = open_kernel(tmp_path)
    (turn,) = _say(kernel, SAID - timedelta(days=5, hours=-5), "VPN 又断了")  # Wed 11-25 15:00
    results = _search(kernel, "上周三下午 VPN", SAID)
    assert [h.turn.id for h in results.hits] == [turn.id]
    assert results.hits[0].said_in_range and results.hits[0].about == ()
    assert placement(results.hits[0], ZONE) == "said 11-25"
    kernel.close()


def test_a_plan_for_next_month_is_found_by_next_months_plans(tmp_path: Path) -> None:
    kernel = open_kernel(tmp_path)
    said = datetime(2026, 11, 10, 20, 0, tzinfo=ZONE)
    (plan,) = _say(kernel, said, "下个月我要去成都出差")
    _say(kernel, said + timedelta(days=1), "今天的会议很长")
    assert [(r.start, r.end) for r in plan.events] == [
        (datetime(2026, 12, 1, tzinfo=ZONE), datetime(2027, 1, 1, tzinfo=ZONE))
    ]
    results = _search(kernel, "下个月的安排", datetime(2026, 11, 28, 9, 0, tzinfo=ZONE))
    assert results.time_role == "filter"
    assert [h.turn.id for h in results.hits if not h.outside] == [plan.id]
    for query in ("12月的安排", "what did I plan in December"):
        results = _search(kernel, query, datetime(2026, 12, 3, 9, 0, tzinfo=ZONE))
        assert [h.turn.id for h in results.hits if not h.outside] == [plan.id], query
    kernel.close()


def test_a_range_with_too_few_hits_offers_the_nearest_outside_marked(tmp_path: Path) -> None:
    kernel = open_kernel(tmp_path)
    turns = _say(kernel, SAID - timedelta(days=40), "VPN 断了，重启路由器", "VPN 密码重置")
    results = _search(kernel, "上周三下午 VPN", SAID)
    assert results.inside == 0 and results.outside == 2
    assert {h.turn.id for h in results.hits} == {t.id for t in turns}
    assert all(h.outside for h in results.hits)
    assert time_summary(results) == "0 in 上周三下午 · 2 nearest outside"
    assert placement(results.hits[0], ZONE) == "outside the range · said 2026-10-21"
    # without keywords: the turns said nearest to the range
    far = _say(kernel, SAID - timedelta(days=300), "很早的一条")
    results = _search(kernel, "上周三下午", SAID, top_k=2)
    assert results.inside == 0 and [h.turn.id for h in results.hits] == [turns[1].id, turns[0].id]
    assert far[0].id not in {h.turn.id for h in results.hits}
    kernel.close()


def test_enough_hits_inside_means_nothing_from_outside(tmp_path: Path) -> None:
    kernel = open_kernel(tmp_path)
    _say(kernel, SAID - timedelta(days=40), "VPN 断了")
    inside = _say(kernel, SAID - timedelta(days=1), "VPN 昨天又断了")
    results = _search(kernel, "昨天 VPN", SAID, top_k=1)
    assert [h.turn.id for h in results.hits] == [inside[0].id]
    assert time_summary(results) == "1 in 昨天"
    kernel.close()


def test_a_time_phrase_that_is_content_restricts_nothing(tmp_path: Path) -> None:
    kernel = open_kernel(tmp_path)
    said = datetime(2026, 11, 26, 9, 0, tzinfo=ZONE)  # a Thursday
    (reset,) = _say(kernel, said, "My VPN password reset happened on Tuesday")
    (trip,) = _say(kernel, said - timedelta(days=30), "下个月我要去成都出差")
    now = datetime(2026, 12, 20, 9, 0, tzinfo=ZONE)
    for query, turn in [("My VPN password reset happened on Tuesday", reset), ("下个月我要去成都出差", trip)]:
        results = _search(kernel, query, now)
        assert results.time_role == "none" and results.time_range is None, query
        assert results.keywords == query
        assert results.hits[0].turn.id == turn.id, query
    kernel.close()


def test_events_reach_the_transcript_and_reindex_rebuilds_them(tmp_path: Path) -> None:
    kernel = open_kernel(tmp_path)
    (turn,) = _say(kernel, SAID, "我上周三下午在杭州部署了 Qwen 模型")
    transcript = (tmp_path / "sessions" / turn.session_file).read_text(encoding="utf-8")
    assert '"events": [{"start": "2026-11-25T12:00:00+08:00"' in transcript
    kernel.reindex()
    stored = kernel.recall_by_id(turn.id).turn
    assert stored is not None and stored.events == turn.events
    assert _search(kernel, "上周三下午 部署", SAID).hits[0].turn.id == turn.id
    kernel.close()


def test_a_question_about_a_day_to_come_finds_what_was_said_about_it(tmp_path: Path) -> None:
    # 我下周六要干嘛？ asks what was said about next Saturday, not what carries a timestamp on that day
    kernel = open_kernel(tmp_path)
    now = SAID + timedelta(days=2)  # Wednesday 12-02: 下周六 is 12-12
    (plan,) = _say(kernel, SAID, "下周六要带朵朵去上钢琴课")  # Monday 11-30: 下周六 is 12-12 too
    (stamped,) = _say(kernel, datetime(2026, 12, 12, 9, 0, tzinfo=ZONE), "钢琴 周六")  # a clock ahead of time
    results = _search(kernel, "我下周六要干嘛？", now)
    assert results.time_range is not None and results.time_range.start.date().isoformat() == "2026-12-12"
    inside = [h.turn.id for h in results.hits if not h.outside]
    assert inside == [plan.id]
    assert stamped.id not in inside
    kernel.close()


def test_a_question_that_asks_only_what_happens_then_lists_that_time_under_any_threshold(tmp_path: Path) -> None:
    # "我 要干嘛？" is no topic to be similar to: with a real threshold its words matched nothing
    # and the plan for next Saturday was no hit ("0 in 下周六", then unrelated turns from outside)
    kernel = open_kernel(tmp_path, config=RetrieverConfig(min_similarity=0.99))
    now = SAID + timedelta(days=2)  # Wednesday 12-02: 下周六 is 12-12
    (plan,) = _say(kernel, SAID, "下周六要带朵朵去上钢琴课")
    (chat,) = _say(kernel, SAID - timedelta(days=1), "VPN 又断了")  # Sunday 11-29
    for query in (
        "我下周六要干嘛？",
        "下周六有哪些安排？",
        "where am I going next Saturday?",
        "what am I doing next Saturday?",
    ):
        results = _search(kernel, query, now)
        assert [(h.turn.id, h.outside) for h in results.hits] == [(plan.id, False)], query  # nothing from outside
    # asked since (once answered from memory, once not): the questions name the day too, but say nothing of it
    asked = kernel.new_session(now)
    kernel.append_turns(
        asked,
        [
            TurnDraft(
                (Message("user", "我下周六要干嘛？"), Message("assistant", "上钢琴课")), now, recalled_ids=(plan.id,)
            ),
            TurnDraft(
                (Message("user", "下周六天气怎么样？"), Message("assistant", "不知道")), now + timedelta(minutes=1)
            ),
        ],
    )
    assert [h.turn.id for h in _search(kernel, "我下周六要干嘛？", now + timedelta(minutes=5), top_k=1).hits] == [
        plan.id
    ]
    results = _search(kernel, "what did I do on Sunday?", SAID + timedelta(hours=2))
    assert [h.turn.id for h in results.hits if not h.outside] == [chat.id]
    # a question about a thing, in that time, is still judged by its words
    assert not [h for h in _search(kernel, "下周六 火锅", now).hits if not h.outside]
    kernel.close()


def test_time_words_that_are_content_or_asides_filter_nothing(tmp_path: Path) -> None:
    kernel = open_kernel(tmp_path)
    now = SAID
    (roommate,) = _say(kernel, SAID - timedelta(days=400), "以前的室友小李搬去深圳了")
    (plan,) = _say(kernel, SAID - timedelta(days=40), "安排：下个月去杭州看展")
    for query, wanted in [("以前的室友", roommate), ("最近有哪些安排", plan), ("刚才一直在想室友小李", roommate)]:
        results = _search(kernel, query, now)
        assert wanted.id in [h.turn.id for h in results.hits], query
        assert not results.rounds, query  # no week-by-week scan that stops short of older turns
    kernel.close()

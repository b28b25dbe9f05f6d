"""Event times: the times a stored turn talks about, resolved against when it was said."""

from __future__ import annotations

from datetime import datetime

from huichat.memory.timeparse import TimeResolver
from tests.conftest import ZONE

SAID = datetime(2026, 11, 30, 10, 0, tzinfo=ZONE)  # a Monday morning


def _local(text: str) -> datetime:
    return datetime.strptime(text, "%Y-%m-%d %H:%M").replace(tzinfo=ZONE)


def _spans(text: str, said: datetime = SAID) -> list[tuple[datetime, datetime]]:
    return [(r.start, r.end) for r in TimeResolver(ZONE).event_ranges(text, said)]


def test_the_readme_example_is_last_wednesday_afternoon() -> None:
    assert _spans("我上周三下午在杭州部署了 Qwen 模型") == [(_local("2026-11-25 12:00"), _local("2026-11-25 18:00"))]


def test_every_time_in_the_turn_in_text_order() -> None:
    spans = _spans("昨天晚上我们聊了 VPN，明天下午三点还要开会，12月5日出发去成都")
    assert spans == [
        (_local("2026-11-29 18:00"), _local("2026-11-30 00:00")),
        (_local("2026-12-01 14:45"), _local("2026-12-01 16:00")),
        (_local("2025-12-05 00:00"), _local("2025-12-06 00:00")),
    ]


def test_future_statements_get_future_ranges() -> None:
    assert _spans("下个月我要去成都出差") == [(_local("2026-12-01 00:00"), _local("2027-01-01 00:00"))]
    assert _spans("I'm flying to Chengdu next week") == [(_local("2026-12-07 00:00"), _local("2026-12-14 00:00"))]


def test_vague_phrases_give_their_likely_stretch() -> None:
    found = TimeResolver(ZONE).event_ranges("前段时间说的那个项目又延期了", SAID)
    assert len(found) == 1 and found[0].fuzzy
    assert (found[0].start, found[0].end) == (_local("2026-10-05 00:00"), _local("2026-11-23 00:00"))


def test_phrases_that_would_cover_everything_are_skipped() -> None:
    assert _spans("很久以前我去过北京") == []
    assert _spans("2025年之前我在北京工作") == []
    assert _spans("we have used it since 2019") == []
    assert _spans("之前说过这个") == []


def test_repeats_are_kept_once_and_the_count_is_capped() -> None:
    assert len(_spans("昨天 VPN 断了，昨天下午又好了，昨天")) == 2
    many = "，".join(f"3月{day}日" for day in range(1, 20))
    assert len(TimeResolver(ZONE).event_ranges(many, SAID)) == 8
    assert len(TimeResolver(ZONE).event_ranges(many, SAID, limit=3)) == 3


def test_no_time_no_events() -> None:
    assert _spans("我们聊了部署和数据库迁移") == []
    assert _spans("") == []


def test_the_phrase_is_kept_on_each_range() -> None:
    phrases = [r.phrase for r in TimeResolver(ZONE).event_ranges("上周三下午部署，周五上线", SAID)]
    assert phrases == ["上周三下午", "周五"]


def test_times_around_the_moment_of_saying_are_no_events() -> None:
    assert _spans("今天天气不错，这周也不忙") == []
    assert _spans("this month has been busy") == []
    # the same day, but not the moment it was said: kept
    assert _spans("今天下午三点开会") == [(_local("2026-11-30 14:45"), _local("2026-11-30 16:00"))]

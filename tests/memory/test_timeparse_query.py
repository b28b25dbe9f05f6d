"""A query's time phrase: a constraint of the search, a hint, or part of the content looked for."""

from __future__ import annotations

import pytest

from huichat.memory.timeparse import TimeResolver
from tests.conftest import NOW, ZONE

# query, role, reason
CASES = [
    # bare filters
    ("上周三下午", "filter", "bare filter"),
    ("last week", "filter", "bare filter"),
    ("昨天", "filter", "bare filter"),
    ("前段时间", "filter", "bare filter"),
    ("2026-03-05", "filter", "bare filter"),
    ("国庆", "filter", "bare filter"),
    # questions
    ("上周三下午我们聊了什么", "filter", "question"),
    ("上周三下午我们聊的那个部署问题是什么？", "filter", "question"),
    ("what did I say last week about the VPN", "filter", "question"),
    ("what did I say about the VPN two weeks ago?", "filter", "question"),
    ("昨天说的那个数据库是哪个", "filter", "question"),
    ("国庆的时候我们去哪玩了", "filter", "question"),
    ("did we talk about Redis yesterday", "filter", "question"),
    ("how did the deployment go last Friday", "filter", "question"),
    ("上个月的预算超了多少", "filter", "question"),
    ("最近有没有聊过面试", "hint", "vague recency with other words"),
    ("which book was I reading in March", "filter", "question"),
    ("前几天提到的那本书叫什么", "filter", "question"),
    # search requests
    ("find the messages about the trip last month", "filter", "search request"),
    ("帮我找一下上周关于VPN的记录", "filter", "search request"),
    ("show me the notes from yesterday", "filter", "search request"),
    ("recall the budget discussion from October", "filter", "search request"),
    ("回忆一下去年国庆的旅行计划", "filter", "search request"),
    ("search messages from last weekend about the interview", "filter", "search request"),
    # descriptions
    ("下个月的安排", "filter", "keywords"),
    ("上周的会议", "filter", "keywords"),
    ("昨天我们讨论的VPN问题", "filter", "description"),
    ("the VPN issue we discussed yesterday", "filter", "description"),
    ("the book I mentioned last week", "filter", "description"),
    # keywords
    ("上周三下午 部署", "filter", "keywords"),
    ("VPN last week", "filter", "keywords"),
    ("部署 上周", "filter", "keywords"),
    ("budget in October", "filter", "keywords"),
    ("Redis 昨天晚上", "filter", "keywords"),
    # statements: the time is part of what is looked for
    ("下个月我要去成都出差", "content", "statement"),
    ("My VPN password reset happened on Tuesday", "content", "statement"),
    ("I'm flying to Chengdu next month", "content", "statement"),
    ("我上周三下午在杭州部署了 Qwen 模型", "content", "statement"),
    ("去年这个时候我在北京工作", "content", "statement"),
    ("We moved the server to Lisbon last week.", "content", "statement"),
    ("明天要交季度报告", "content", "statement"),
    ("The deployment failed again yesterday", "content", "statement"),
    ("国庆去了一趟杭州", "content", "statement"),
    ("I will call the bank on Monday", "content", "statement"),
    ("下周五我们打算去爬山", "content", "statement"),
    # "before now" restricts nothing and mostly names a thing (以前的室友: the former roommate)
    ("以前的室友", "content", "before now (no constraint)"),
    ("我以前的室友叫什么", "content", "before now (no constraint)"),
    ("之前说的那个餐厅叫什么", "content", "before now (no constraint)"),
    ("previously discussed VPN issue", "content", "before now (no constraint)"),
    # "how long ago" asks for the time: it constrains nothing (it was a filter to "long ago")
    ("How long ago did Tim start playing the violin?", "content", "the time asked for"),
    ("how many years ago did we move to Lisbon", "content", "the time asked for"),
    # a vague recency beside other words is chit-chat or an aside as often as a constraint: soft
    ("刚才一直在想那家店叫什么", "hint", "vague recency with other words"),
    ("最近有哪些安排", "hint", "vague recency with other words"),
    ("what did I say recently about Rust", "hint", "vague recency with other words"),
    ("刚才一直在想", "content", "statement"),
    ("最近", "filter", "bare filter"),
    # calendar dates beside other words: a hint, not a one-day filter
    ("2026-03-05 VPN 密码", "hint", "calendar date with other words"),
    ("what did we decide on 2026-03-05?", "hint", "calendar date with other words"),
    ("3月5日的会议纪要", "hint", "calendar date with other words"),
    ("deployment notes March 5", "hint", "calendar date with other words"),
    ("2026-11-18 Wed 12:00–18:00 部署", "hint", "calendar date with other words"),
]


def test_enough_examples_in_both_languages() -> None:
    assert len(CASES) >= 40
    chinese = sum(1 for q, _, _ in CASES if any("\u4e00" <= ch <= "\u9fff" for ch in q))
    assert chinese >= 18 and len(CASES) - chinese >= 18


@pytest.mark.parametrize(("query", "role", "reason"), CASES, ids=[c[0] for c in CASES])
def test_the_role_of_the_time_phrase(query: str, role: str, reason: str) -> None:
    understood = TimeResolver(ZONE).read_query(query, NOW)
    assert understood.range is not None, query
    assert (understood.role, understood.reason) == (role, reason)


def test_content_keeps_the_phrase_in_the_keywords_and_filters_nothing() -> None:
    resolver = TimeResolver(ZONE)
    understood = resolver.read_query("My VPN password reset happened on Tuesday", NOW)
    assert understood.keywords == "My VPN password reset happened on Tuesday"
    assert understood.filter is None
    assert resolver.split_query("下个月我要去成都出差", NOW) == ("下个月我要去成都出差", None)


def test_a_hint_keeps_its_range_but_filters_nothing() -> None:
    resolver = TimeResolver(ZONE)
    understood = resolver.read_query("2026-03-05 VPN 密码", NOW)
    assert understood.range is not None and understood.range.phrase == "2026-03-05"
    assert understood.filter is None
    assert resolver.split_query("2026-03-05 VPN 密码", NOW) == ("VPN 密码", None)


def test_a_constraint_filters_and_leaves_the_rest_as_keywords() -> None:
    keywords, found = TimeResolver(ZONE).split_query("上周三下午 部署", NOW)
    assert keywords == "部署"
    assert found is not None and found.phrase == "上周三下午"


def test_no_time_phrase() -> None:
    understood = TimeResolver(ZONE).read_query("  what is Redis?  ", NOW)
    assert (understood.keywords, understood.range, understood.role) == ("what is Redis?", None, "none")

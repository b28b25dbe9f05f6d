"""Time phrases → ranges: a table of phrases, each with a fixed ``now`` and the exact range."""

from __future__ import annotations

from datetime import datetime

import pytest

from huichat.memory.timeparse import TimeResolver
from tests.conftest import ZONE

NOWS = {
    "W": datetime(2026, 11, 25, 15, 0, tzinfo=ZONE),  # Wednesday
    "M": datetime(2026, 11, 30, 9, 0, tzinfo=ZONE),  # Monday
    "S": datetime(2026, 11, 29, 20, 0, tzinfo=ZONE),  # Sunday
    "F": datetime(2026, 3, 1, 10, 0, tzinfo=ZONE),  # Sunday 1 March, after a 28-day February
    "L": datetime(2024, 3, 1, 10, 0, tzinfo=ZONE),  # Friday 1 March of a leap year
    "Y": datetime(2027, 1, 1, 0, 30, tzinfo=ZONE),  # New Year, just after midnight
}

# phrase, now, start, end (local, end exclusive); "~" marks a fuzzy (vague) phrase
TABLE = """
今天 | W | 2026-11-25 00:00 | 2026-11-26 00:00
昨天 | W | 2026-11-24 00:00 | 2026-11-25 00:00
前天 | W | 2026-11-23 00:00 | 2026-11-24 00:00
大前天 | W | 2026-11-22 00:00 | 2026-11-23 00:00
明天 | W | 2026-11-26 00:00 | 2026-11-27 00:00
今早 | W | 2026-11-25 06:00 | 2026-11-25 09:00
昨晚 | W | 2026-11-24 18:00 | 2026-11-25 00:00
今天下午 | W | 2026-11-25 12:00 | 2026-11-25 18:00
昨天晚上 | W | 2026-11-24 18:00 | 2026-11-25 00:00
凌晨 | W | 2026-11-25 00:00 | 2026-11-25 06:00
早上 | W | 2026-11-25 06:00 | 2026-11-25 09:00
上午 | W | 2026-11-25 06:00 | 2026-11-25 12:00
中午 | W | 2026-11-25 11:00 | 2026-11-25 13:00
下午 | W | 2026-11-25 12:00 | 2026-11-25 18:00
傍晚 | W | 2026-11-25 17:00 | 2026-11-25 19:00
晚上 | W | 2026-11-25 18:00 | 2026-11-26 00:00
深夜 | W | 2026-11-25 22:00 | 2026-11-26 04:00
这周 | W | 2026-11-23 00:00 | 2026-11-30 00:00
本周 | W | 2026-11-23 00:00 | 2026-11-30 00:00
上周 | W | 2026-11-16 00:00 | 2026-11-23 00:00
上上周 | W | 2026-11-09 00:00 | 2026-11-16 00:00
下周 | W | 2026-11-30 00:00 | 2026-12-07 00:00
上周三 | W | 2026-11-18 00:00 | 2026-11-19 00:00
上周三下午 | W | 2026-11-18 12:00 | 2026-11-18 18:00
上周三下午我们聊了什么？ | W | 2026-11-18 12:00 | 2026-11-18 18:00
这周一 | W | 2026-11-23 00:00 | 2026-11-24 00:00
本周五 | W | 2026-11-27 00:00 | 2026-11-28 00:00
周一 | W | 2026-11-23 00:00 | 2026-11-24 00:00
星期天 | W | 2026-11-22 00:00 | 2026-11-23 00:00
礼拜三 | W | 2026-11-25 00:00 | 2026-11-26 00:00
上个星期五 | W | 2026-11-20 00:00 | 2026-11-21 00:00
上礼拜二 | W | 2026-11-17 00:00 | 2026-11-18 00:00
周末 | W | 2026-11-21 00:00 | 2026-11-23 00:00
上周末 | W | 2026-11-21 00:00 | 2026-11-23 00:00
这周末 | W | 2026-11-28 00:00 | 2026-11-30 00:00
这个月 | W | 2026-11-01 00:00 | 2026-12-01 00:00
上个月 | W | 2026-10-01 00:00 | 2026-11-01 00:00
上上个月 | W | 2026-09-01 00:00 | 2026-10-01 00:00
月初 | W | 2026-11-01 00:00 | 2026-11-11 00:00
月中 | W | 2026-11-11 00:00 | 2026-11-21 00:00
月底 | W | 2026-11-21 00:00 | 2026-12-01 00:00
上个月底 | W | 2026-10-21 00:00 | 2026-11-01 00:00
年初 | W | 2026-01-01 00:00 | 2026-03-01 00:00
年底 | W | 2026-11-01 00:00 | 2027-01-01 00:00
今年 | W | 2026-01-01 00:00 | 2027-01-01 00:00
去年 | W | 2025-01-01 00:00 | 2026-01-01 00:00
前年 | W | 2024-01-01 00:00 | 2025-01-01 00:00
三天前 | W | 2026-11-22 00:00 | 2026-11-23 00:00
3天前 | W | 2026-11-22 00:00 | 2026-11-23 00:00
十二天前 | W | 2026-11-13 00:00 | 2026-11-14 00:00
两周前 | W | 2026-11-09 00:00 | 2026-11-16 00:00
2周前 | W | 2026-11-09 00:00 | 2026-11-16 00:00
两个星期前 | W | 2026-11-09 00:00 | 2026-11-16 00:00
三个月前 | W | 2026-08-10 00:00 | 2026-09-10 00:00
一年前 | W | 2025-09-26 00:00 | 2026-01-25 00:00
2026年3月5日 | W | 2026-03-05 00:00 | 2026-03-06 00:00
3月5日 | W | 2026-03-05 00:00 | 2026-03-06 00:00
3月5号 | W | 2026-03-05 00:00 | 2026-03-06 00:00
十二月三日 | W | 2025-12-03 00:00 | 2025-12-04 00:00
5月初 | W | 2026-05-01 00:00 | 2026-05-11 00:00
三月份 | W | 2026-03-01 00:00 | 2026-04-01 00:00
2026-03-05 | W | 2026-03-05 00:00 | 2026-03-06 00:00
2026/3/5 | W | 2026-03-05 00:00 | 2026-03-06 00:00
去年3月 | W | 2025-03-01 00:00 | 2025-04-01 00:00
去年年底 | W | 2025-11-01 00:00 | 2026-01-01 00:00
12月 | W | 2025-12-01 00:00 | 2026-01-01 00:00
今年初 | W | 2026-01-01 00:00 | 2026-03-01 00:00
前几天 | W | 2026-11-18 00:00 | 2026-11-25 15:01 | ~
几天前 | W | 2026-11-18 00:00 | 2026-11-25 15:01 | ~
最近 | W | 2026-11-11 00:00 | 2026-11-25 15:01 | ~
前阵子 | W | 2026-09-30 00:00 | 2026-11-25 15:01 | ~
前段时间 | W | 2026-09-30 00:00 | 2026-11-25 15:01 | ~
前段时间说的那个项目 | W | 2026-09-30 00:00 | 2026-11-25 15:01 | ~
刚才 | W | 2026-11-25 13:00 | 2026-11-25 15:01 | ~
半个月前 | W | 2026-11-03 00:00 | 2026-11-18 00:00
半年前 | W | 2026-04-25 00:00 | 2026-06-25 00:00
很久以前 | W | 1900-01-01 00:00 | 2026-11-25 15:01 | ~
之前 | W | 1900-01-01 00:00 | 2026-11-25 15:01 | ~
上周 | M | 2026-11-23 00:00 | 2026-11-30 00:00
这周 | M | 2026-11-30 00:00 | 2026-12-07 00:00
上周末 | M | 2026-11-28 00:00 | 2026-11-30 00:00
周末 | M | 2026-11-28 00:00 | 2026-11-30 00:00
周日 | M | 2026-11-29 00:00 | 2026-11-30 00:00
周一 | M | 2026-11-30 00:00 | 2026-12-01 00:00
上周一 | M | 2026-11-23 00:00 | 2026-11-24 00:00
昨天 | M | 2026-11-29 00:00 | 2026-11-30 00:00
这个月 | M | 2026-11-01 00:00 | 2026-12-01 00:00
月底 | M | 2026-11-21 00:00 | 2026-12-01 00:00
上个月 | M | 2026-10-01 00:00 | 2026-11-01 00:00
三天前 | M | 2026-11-27 00:00 | 2026-11-28 00:00
上上周 | M | 2026-11-16 00:00 | 2026-11-23 00:00
下周三 | M | 2026-12-09 00:00 | 2026-12-10 00:00
这周 | S | 2026-11-23 00:00 | 2026-11-30 00:00
上周 | S | 2026-11-16 00:00 | 2026-11-23 00:00
周末 | S | 2026-11-28 00:00 | 2026-11-30 00:00
上周末 | S | 2026-11-21 00:00 | 2026-11-23 00:00
周日 | S | 2026-11-29 00:00 | 2026-11-30 00:00
星期六 | S | 2026-11-28 00:00 | 2026-11-29 00:00
这周日 | S | 2026-11-29 00:00 | 2026-11-30 00:00
昨晚 | S | 2026-11-28 18:00 | 2026-11-29 00:00
今晚 | S | 2026-11-29 18:00 | 2026-11-30 00:00
上周日 | S | 2026-11-22 00:00 | 2026-11-23 00:00
昨天 | F | 2026-02-28 00:00 | 2026-03-01 00:00
上个月 | F | 2026-02-01 00:00 | 2026-03-01 00:00
上个月底 | F | 2026-02-21 00:00 | 2026-03-01 00:00
这个月 | F | 2026-03-01 00:00 | 2026-04-01 00:00
上周 | F | 2026-02-16 00:00 | 2026-02-23 00:00
前天 | F | 2026-02-27 00:00 | 2026-02-28 00:00
2月29日 | F | 2024-02-29 00:00 | 2024-03-01 00:00
去年年底 | F | 2025-11-01 00:00 | 2026-01-01 00:00
一个月前 | F | 2026-01-25 00:00 | 2026-02-09 00:00
昨天 | L | 2024-02-29 00:00 | 2024-03-01 00:00
上个月 | L | 2024-02-01 00:00 | 2024-03-01 00:00
上个月底 | L | 2024-02-21 00:00 | 2024-03-01 00:00
2月29日 | L | 2024-02-29 00:00 | 2024-03-01 00:00
大前天 | L | 2024-02-27 00:00 | 2024-02-28 00:00
这周 | L | 2024-02-26 00:00 | 2024-03-04 00:00
周四 | L | 2024-02-29 00:00 | 2024-03-01 00:00
上周三 | L | 2024-02-21 00:00 | 2024-02-22 00:00
昨天 | Y | 2026-12-31 00:00 | 2027-01-01 00:00
去年 | Y | 2026-01-01 00:00 | 2027-01-01 00:00
上个月 | Y | 2026-12-01 00:00 | 2027-01-01 00:00
去年年底 | Y | 2026-11-01 00:00 | 2027-01-01 00:00
上周 | Y | 2026-12-21 00:00 | 2026-12-28 00:00
昨晚 | Y | 2026-12-31 18:00 | 2027-01-01 00:00
这周 | Y | 2026-12-28 00:00 | 2027-01-04 00:00
12月 | Y | 2026-12-01 00:00 | 2027-01-01 00:00
today | W | 2026-11-25 00:00 | 2026-11-26 00:00
yesterday | W | 2026-11-24 00:00 | 2026-11-25 00:00
this morning | W | 2026-11-25 06:00 | 2026-11-25 12:00
last night | W | 2026-11-24 18:00 | 2026-11-25 00:00
yesterday afternoon | W | 2026-11-24 12:00 | 2026-11-24 18:00
last week | W | 2026-11-16 00:00 | 2026-11-23 00:00
what did we decide last week? | W | 2026-11-16 00:00 | 2026-11-23 00:00
this week | W | 2026-11-23 00:00 | 2026-11-30 00:00
the week before last | W | 2026-11-09 00:00 | 2026-11-16 00:00
last Wednesday | W | 2026-11-18 00:00 | 2026-11-19 00:00
last Wednesday afternoon | W | 2026-11-18 12:00 | 2026-11-18 18:00
last Monday | W | 2026-11-23 00:00 | 2026-11-24 00:00
last weekend | W | 2026-11-21 00:00 | 2026-11-23 00:00
last month | W | 2026-10-01 00:00 | 2026-11-01 00:00
earlier this month | W | 2026-11-01 00:00 | 2026-11-25 00:00
this year | W | 2026-01-01 00:00 | 2027-01-01 00:00
last year | W | 2025-01-01 00:00 | 2026-01-01 00:00
3 days ago | W | 2026-11-22 00:00 | 2026-11-23 00:00
three days ago | W | 2026-11-22 00:00 | 2026-11-23 00:00
two weeks ago | W | 2026-11-09 00:00 | 2026-11-16 00:00
what did I say about the VPN two weeks ago? | W | 2026-11-09 00:00 | 2026-11-16 00:00
2 months ago | W | 2026-09-15 00:00 | 2026-10-06 00:00
a week ago | W | 2026-11-16 00:00 | 2026-11-23 00:00
5 hours ago | W | 2026-11-25 09:00 | 2026-11-25 11:00
a few days ago | W | 2026-11-18 00:00 | 2026-11-25 15:01 | ~
recently | W | 2026-11-11 00:00 | 2026-11-25 15:01 | ~
a while ago | W | 2026-09-30 00:00 | 2026-11-25 15:01 | ~
the other day | W | 2026-11-18 00:00 | 2026-11-25 15:01 | ~
in March | W | 2026-03-01 00:00 | 2026-04-01 00:00
in December | W | 2025-12-01 00:00 | 2026-01-01 00:00
on May 2 | W | 2026-05-02 00:00 | 2026-05-03 00:00
March 5th 2026 | W | 2026-03-05 00:00 | 2026-03-06 00:00
5 March 2026 | W | 2026-03-05 00:00 | 2026-03-06 00:00
2026-03-05 | W | 2026-03-05 00:00 | 2026-03-06 00:00
tonight | W | 2026-11-25 18:00 | 2026-11-26 00:00
yesterday evening | W | 2026-11-24 18:00 | 2026-11-25 00:00
on Monday | W | 2026-11-23 00:00 | 2026-11-24 00:00
in 2025 | W | 2025-01-01 00:00 | 2026-01-01 00:00
last Sunday | M | 2026-11-29 00:00 | 2026-11-30 00:00
last weekend | M | 2026-11-28 00:00 | 2026-11-30 00:00
last weekend | S | 2026-11-21 00:00 | 2026-11-23 00:00
yesterday | Y | 2026-12-31 00:00 | 2027-01-01 00:00
last year | Y | 2026-01-01 00:00 | 2027-01-01 00:00
last month | F | 2026-02-01 00:00 | 2026-03-01 00:00
on February 29 | L | 2024-02-29 00:00 | 2024-03-01 00:00
05/03/2026 | W | 2026-05-03 00:00 | 2026-05-04 00:00
5.3.2026 | W | 2026-03-05 00:00 | 2026-03-06 00:00
le 5 mars 2026 | W | 2026-03-05 00:00 | 2026-03-06 00:00
am 5. März 2026 | W | 2026-03-05 00:00 | 2026-03-06 00:00
"""


def _rows() -> list[tuple[str, str, str, str, bool]]:
    rows = []
    for line in TABLE.strip().splitlines():
        parts = [p.strip() for p in line.split("|")]
        rows.append((parts[0], parts[1], parts[2], parts[3], len(parts) > 4 and parts[4] == "~"))
    return rows


ROWS = _rows()


def _local(text: str) -> datetime:
    return datetime.strptime(text, "%Y-%m-%d %H:%M").replace(tzinfo=ZONE)


def test_the_table_is_large_enough() -> None:
    assert len(ROWS) >= 150


@pytest.mark.parametrize(("phrase", "now", "start", "end", "fuzzy"), ROWS, ids=[f"{r[0]}@{r[1]}" for r in ROWS])
def test_phrase_resolves_to_exact_range(phrase: str, now: str, start: str, end: str, fuzzy: bool) -> None:
    found = TimeResolver(ZONE).parse(phrase, NOWS[now])
    assert found is not None, phrase
    assert (found.start, found.end) == (_local(start), _local(end))
    assert found.fuzzy is fuzzy


@pytest.mark.parametrize(
    ("phrase", "start", "end"),
    [("上周", "2026-11-15 00:00", "2026-11-22 00:00"), ("this week", "2026-11-22 00:00", "2026-11-29 00:00"),
     ("上周三", "2026-11-18 00:00", "2026-11-19 00:00"), ("上周日", "2026-11-15 00:00", "2026-11-16 00:00"),
     ("这周日", "2026-11-22 00:00", "2026-11-23 00:00"), ("这周末", "2026-11-28 00:00", "2026-11-30 00:00"),
     ("上周末", "2026-11-21 00:00", "2026-11-23 00:00")],
)  # fmt: skip
def test_weeks_may_start_on_sunday(phrase: str, start: str, end: str) -> None:
    found = TimeResolver(ZONE, week_start="sunday").parse(phrase, NOWS["W"])
    assert found is not None
    assert (found.start, found.end) == (_local(start), _local(end))


NO_TIME = [
    "we went hiking together",
    "may I ask you something?",
    "March on, soldiers",
    "一周年纪念日快乐",
    "星期日报的主编是谁",
    "我们聊了什么项目",
    "what did we decide?",
    "the weekday schedule is fixed",
    "I read 3 books",
    "version 2.0.1 is out",
    "call me at 555-1234",
    "每周三开会",
    "一年四季都很忙",
    "月亮很圆",
    "岁月静好",
    "上海的天气怎么样",
    "下雨了记得带伞",
    "周杰伦的新歌好听吗",
    "I sat down and wrote",
    "they may come along",
    "tomorrowland festival tickets",
    "weekly report and monthly budget",
    "数据库迁移到对象存储",
    "the 2nd item on the list",
    "march forward with the plan",
    "周杰伦的新歌",
    "一周年纪念",
    "第一次见面",
    "give me a second",
    "a second opinion",
    "周报写完了吗",
    "下午茶好喝",
    "我有三点建议",
    "五一路的店",
    "六一班的同学",
    "十一个人",
    "一年级的学生",
    "清明上河图",
    "圣诞老人",
    "an Easter egg in the game",
    "I have two points",
    "wait a minute",
    "早上好",
    "晚安",
    "周期性任务",
    "每天跑步",
    "一天到晚",
    "差一点",
    "小年轻",
    "比分是3:2",
    "at 3 percent",
    "5号线",
    "3号楼",
    "one day I will",
    "the second time",
    "前端和后端",
    "上下午都行",
    "以后再说",
    "few days",
]


@pytest.mark.parametrize("sentence", NO_TIME)
def test_no_time_is_found_in_ordinary_sentences(sentence: str) -> None:
    assert TimeResolver(ZONE).parse(sentence, NOWS["W"]) is None


def test_enough_negative_sentences() -> None:
    assert len(NO_TIME) >= 20


@pytest.mark.parametrize(
    "garbage",
    ["", "   ", "x" * 10_000, "🎉🚀🔥", "九九九九年前", "99999999 days ago", "上周三下午🎉 deploy 部署 ÿ", "\x00\x01",
     "三月三十二日", "2026-02-30", "13月", "九九九九九九九九天前", "上上上上上上周", "年" * 500, "in 99999"],
)  # fmt: skip
def test_bad_input_never_raises_and_ranges_are_sane(garbage: str) -> None:
    found = TimeResolver(ZONE).parse(garbage, NOWS["W"])
    if found is not None:
        assert found.start < found.end


@pytest.mark.parametrize(
    ("question", "keywords"),
    [
        ("上周三下午我们聊了什么项目", "我们聊了什么项目"),
        ("上周三下午我们聊的那个部署问题是什么？", "我们聊的那个部署问题是什么？"),
        ("what did I say about the VPN two weeks ago?", "what did I say about the VPN?"),
        ("what did we decide on Monday?", "what did we decide?"),
        ("上周三下午 部署", "部署"),
        ("前段时间说的那个项目", "说的那个项目"),
        ("no time here", "no time here"),
    ],
)
def test_split_query_removes_the_time_words(question: str, keywords: str) -> None:
    rest, _ = TimeResolver(ZONE).split_query(question, NOWS["W"])
    assert rest == keywords


def test_split_query_keeps_the_range() -> None:
    _, found = TimeResolver(ZONE).split_query("上周三下午我们聊了什么项目", NOWS["W"])
    assert found is not None and found.phrase == "上周三下午"
    assert found.granularity == "part_of_day" and not found.fuzzy


@pytest.mark.parametrize(
    ("phrase", "start", "end"),
    [("这周末", "2026-11-28 00:00", "2026-11-30 00:00"), ("上周末", "2026-11-21 00:00", "2026-11-23 00:00"),
     ("上周日", "2026-11-22 00:00", "2026-11-23 00:00"), ("this weekend", "2026-11-28 00:00", "2026-11-30 00:00")],
)  # fmt: skip
def test_on_a_sunday_of_a_sunday_first_week_this_weekend_is_today(phrase: str, start: str, end: str) -> None:
    found = TimeResolver(ZONE, week_start="sunday").parse(phrase, NOWS["S"])
    assert found is not None
    assert (found.start, found.end) == (_local(start), _local(end))


@pytest.mark.parametrize(
    ("phrase", "label"),
    [("上周三下午", "2026-11-18 Wed 12:00–18:00"), ("上周三", "2026-11-18 Wed"), ("上个月", "2026-10-01 – 2026-10-31"),
     ("深夜", "2026-11-25 Wed 22:00–04:00 11-26"), ("晚上", "2026-11-25 Wed 18:00–24:00"),
     ("下午三点", "2026-11-25 Wed 14:45–16:00"), ("过去三天", "2026-11-22 – 2026-11-25 15:01"),
     ("前段时间", "2026-09-30 – 2026-11-25 15:01, mostly 2026-09-30 – 2026-11-17"),
     ("2025年之前", "before 2025-01-01, mostly 2024-10-02 – 2024-12-31"), ("之前", "before 2026-11-25 15:01")],
)  # fmt: skip
def test_the_label_says_what_was_understood(phrase: str, label: str) -> None:
    found = TimeResolver(ZONE).parse(phrase, NOWS["W"])
    assert found is not None and found.describe() == label


@pytest.mark.parametrize(
    "phrase", ["上周三下午", "上周三", "上个月", "深夜", "晚上", "下午三点", "国庆", "3月3日到3月10日", "上个季度"]
)
def test_a_label_copied_back_into_a_query_means_the_same_range(phrase: str) -> None:
    resolver = TimeResolver(ZONE)
    found = resolver.parse(phrase, NOWS["W"])
    assert found is not None
    again = resolver.parse(f"{found.describe()} 部署", NOWS["W"])
    assert again is not None and (again.start, again.end) == (found.start, found.end)

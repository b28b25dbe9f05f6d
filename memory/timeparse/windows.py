"""Counted windows (过去三天, "the past week"), points in the past (两个月前, "a year ago"), quarters.

A counted window runs from the start of the day that many units back up to now: 过去三天
said on Wednesday afternoon is Sunday 00:00 to now (the three whole days before today and
today so far), 最近一周 the seven days before today and today, 近两个月 the same day two
months ago to now. 这两天 is a counted window of two days.

"N days ago" is that day; "N weeks ago" the calendar week N weeks back (两周前 on a
Wednesday is the week before last). Months and years ago are points with a window around
them, not calendar blocks: 两个月前 is the day two months back ± a sixth of the distance (at
least a week, at most three months): ±10 days; 半年前 ±30 days; 一年前 ±61 days.
去年这个时候 / "this time last year" is the same day a year back ± 3 weeks.
"""

from __future__ import annotations

import re
from datetime import timedelta

from huichat.memory.timeparse.days import Calendar
from huichat.memory.timeparse.english import E, W
from huichat.memory.timeparse.numbers import EN_COUNT, NUM, cn_number, en_number
from huichat.memory.timeparse.ranges import TimeRange
from huichat.memory.timeparse.rules import Piece, lead, lead_length, preceded_by, rule
from huichat.memory.timeparse.vague import vague

__all__: list[str] = []

_NUMBER_CHARS = "0123456789零〇一二两三四五六七八九十百千万第每几"
_CN_UNITS = {"天": "day", "日": "day", "周": "week", "星期": "week", "礼拜": "week", "月": "month", "年": "year",
             "小时": "hour", "钟头": "hour", "分钟": "minute"}  # fmt: skip
_CN_UNIT = "天|日|周|星期|礼拜|月|年|小时|钟头|分钟"
_MAX_COUNT = 100_000


def _back(cal: Calendar, amount: float, unit: str) -> TimeRange | None:
    """From ``amount`` units back (whole days for days and longer) up to now."""
    if unit in ("hour", "minute"):
        delta = timedelta(hours=amount) if unit == "hour" else timedelta(minutes=amount)
        return TimeRange(cal.now - delta, cal.until_now, "span")
    if unit in ("day", "week"):
        first = cal.today - timedelta(days=round(amount * (7 if unit == "week" else 1)))
    else:
        first = cal.months_before(cal.today, round(amount * (12 if unit == "year" else 1)))
    return TimeRange(cal.at(first), cal.until_now, "span")


def _point(cal: Calendar, amount: float, unit: str) -> TimeRange | None:
    """A moment ``amount`` units ago, as a range around it."""
    if unit == "minute":
        minutes = round(amount)
        return TimeRange(
            cal.now - timedelta(minutes=minutes + 5), cal.now - timedelta(minutes=max(minutes - 5, 0)), "hour"
        )
    if unit == "hour":
        hours = amount
        return TimeRange(cal.now - timedelta(hours=hours + 1), cal.now - timedelta(hours=max(hours - 1, 0)), "hour")
    if unit == "day":
        return cal.days(cal.today - timedelta(days=round(amount)), 1)
    if unit == "week":
        return cal.week(-round(amount))
    months = amount * (12 if unit == "year" else 1)
    whole = int(months)
    point = cal.months_before(cal.today, whole) - timedelta(days=round((months - whole) * 30))
    half = max(7, min(92, (cal.today - point).days // 6))
    return cal.around(point, half)


def _few(cal: Calendar, unit: str) -> TimeRange | None:
    """几天前 / "a few months ago": vague, up to now, weighing 1–6 units back."""
    if unit == "day":
        return vague(cal, "few_days")
    if unit == "week":
        return vague(cal, "while")
    if unit in ("hour", "minute"):
        return vague(cal, "just_now")
    first = cal.months_before(cal.today, 6 if unit == "month" else 72)
    return cal.back_to_now(first, (first, cal.months_before(cal.today, 1 if unit == "month" else 12)))


# ---- Chinese


@rule(rf"(?:过去|最近|近|这)(?:的)?(?P<n>{NUM}|几)(?:个)?(?P<unit>{_CN_UNIT})(?:里|内|以来|来|中)?", needs="过近这")
def _cn_window(cal: Calendar, m: re.Match[str]) -> TimeRange | None:
    """过去三天, 最近一周, 近两个月, 这两天."""
    if m.group(0)[0] == "近" and preceded_by(m, "接将附"):
        return None  # 将近三天: nearly three days
    return _counted(cal, m["n"], _CN_UNITS[m["unit"]])


@rule(rf"(?P<n>{NUM})(?:个)?(?P<unit>{_CN_UNIT})(?:以来|来)(?![看说自])", needs="来")
def _cn_since_count(cal: Calendar, m: re.Match[str]) -> TimeRange | None:
    """三天来, 两周以来."""
    return None if preceded_by(m, _NUMBER_CHARS) else _counted(cal, m["n"], _CN_UNITS[m["unit"]])


def _counted(cal: Calendar, raw: str, unit: str) -> TimeRange | None:
    if raw == "几":
        return vague(cal, "recent") if unit == "day" else _few(cal, unit)
    amount = cn_number(raw)
    if amount is None or not 0 < amount <= _MAX_COUNT:
        return None
    return _back(cal, amount, unit)


@rule(
    rf"(?P<n>{NUM}|半|几|两)(?P<mid>个半|半个|个)?(?P<unit>{_CN_UNIT})(?P<half>半)?(?:之|以)?前(?![天几阵段些后])",
    needs="前",
)
def _cn_ago(cal: Calendar, m: re.Match[str]) -> TimeRange | None:
    if preceded_by(m, _NUMBER_CHARS):
        return None
    unit = _CN_UNITS[m["unit"]]
    if m["n"] == "几":
        return _few(cal, unit)
    amount: float | None = 0.5 if m["n"] == "半" else cn_number(m["n"])
    if amount is None or not 0 < amount <= _MAX_COUNT:
        return None
    if unit == "year" and amount >= 1900 and m["n"].isdigit():
        return None  # 2025年前 / 2025年之前: before the year 2025 (the composer reads it)
    if (m["mid"] == "个半") or m["half"]:
        amount += 0.5
    return _point(cal, amount, unit)


@rule(
    r"(?P<y>去年|前年)(?:的)?(?:(?P<day>今天|这一天|这天|今日)|这个时候|这时候|这会儿|此时|同期|这个季节)", needs="去前"
)
def _cn_same_time(cal: Calendar, m: re.Match[str]) -> TimeRange | None:
    years = 1 if m["y"] == "去年" else 2
    point = cal.months_before(cal.today, 12 * years)
    return cal.days(point, 1) if m["day"] else cal.around(point, 21)


# ---- English

_EN_UNIT = "minute|hour|day|week|fortnight|month|year"


_WINDOW_LEAD = re.compile(
    r"(?<![A-Za-z])(?:(?P<prep>in|over|during|within|for)\s+)?(?:(?P<the>the)\s+)?$", re.IGNORECASE
)


@rule(
    rf"{W}(?P<word>last|past|previous|this\s+past)\s+(?:(?P<n>{EN_COUNT}|few|several|couple of)\s+)?(?P<unit>{_EN_UNIT})s?{E}",
    re.IGNORECASE,
    needs=["last", "past", "previous"],
)
def _en_window(cal: Calendar, m: re.Match[str]) -> Piece | None:
    """A window ending now: "the last three weeks", "past few days", "in the last month"."""
    word = m["word"].lower()
    qualifier = lead(m, _WINDOW_LEAD)
    if not m["n"] and (word == "previous" or (word == "last" and not (qualifier and qualifier["the"]))):
        return None  # "last week", "the previous month": the calendar unit (english.py)
    unit, amount = _en_unit(m["unit"], m["n"] or "1")
    if amount is None:
        found = _few(cal, unit) if unit != "day" else vague(cal, "recent")
    elif not 0 < amount <= _MAX_COUNT:
        return None
    else:
        found = _back(cal, amount, unit)
    return Piece(found, lead=lead_length(m, qualifier)) if found else None


def _en_unit(unit: str, count: str) -> tuple[str, float | None]:
    """(unit, amount) with fortnights as weeks; None for "few" and "several"."""
    unit = unit.lower()
    amount: float | None = None
    if count.lower() not in ("few", "several", "a few"):
        amount = en_number(count)
    if unit == "fortnight":
        return "week", None if amount is None else amount * 2
    return unit, amount


@rule(
    rf"{W}(?P<n>{EN_COUNT}|half an|half a|a few|few|several)\s+(?P<unit>{_EN_UNIT})s?(?P<half>\s+and\s+a\s+half)?\s+(?:ago|back|before){E}",
    re.IGNORECASE,
    needs=["ago", "back", "before"],
)
def _en_ago(cal: Calendar, m: re.Match[str]) -> TimeRange | None:
    """A time that far back: "three weeks ago", "a few days back", "half a year before"."""
    raw = m["n"].lower()
    half = raw in ("half a", "half an")
    unit, amount = _en_unit(m["unit"], "1" if half else raw)
    if amount is None:
        return None if unit in ("day", "week") else _few(cal, unit)  # a few days ago: vague.py
    amount = 0.5 if half else amount + (0.5 if m["half"] else 0)
    if not 0 < amount <= _MAX_COUNT:
        return None
    return _point(cal, amount, unit)


@rule(
    rf"{W}(?:(?:around|about|at)\s+)?(?:(?:this|the\s+same)\s+time\s+(?P<n>last|two)\s+years?(?:\s+ago)?"
    rf"|(?P<day>this\s+day\s+last\s+year|a\s+year\s+ago\s+today)){E}",
    re.IGNORECASE,
    needs=["time", "day", "today"],
)
def _en_same_time(cal: Calendar, m: re.Match[str]) -> TimeRange:
    point = cal.months_before(cal.today, 24 if (m["n"] or "").lower() == "two" else 12)
    return cal.days(point, 1) if m["day"] else cal.around(point, 21)


# ---- quarters


def _quarter(cal: Calendar, year: int, quarter: int) -> TimeRange | None:
    return cal.year(year, (3 * quarter - 2, 3 * quarter)) if 1 <= quarter <= 4 else None


def _recent_quarter_year(cal: Calendar, quarter: int) -> int:
    return cal.today.year if quarter <= (cal.today.month - 1) // 3 + 1 else cal.today.year - 1


def _quarter_offset(cal: Calendar, offset: int) -> TimeRange | None:
    index = cal.today.year * 4 + (cal.today.month - 1) // 3 + offset
    return _quarter(cal, index // 4, index % 4 + 1)


_CN_YEAR_REL = {"今年": 0, "去年": -1, "前年": -2, "明年": 1}
_CN_Q = {"一": 1, "二": 2, "三": 3, "四": 4, "1": 1, "2": 2, "3": 3, "4": 4}


_QUARTER_LEAD = re.compile(r"(?:(?P<yrel>今年|去年|前年|明年)|(?<!\d)(?P<y>\d{4})\s*年?)(?:的)?\s*$")


@rule(r"第?(?P<q>[一二三四1-4])季度|(?P<q2>[Qq][1-4])(?![A-Za-z\d])(?:\s*(?P<y2>\d{4})(?!\d))?", needs="季Qq")
def _quarter_named(cal: Calendar, m: re.Match[str]) -> Piece | None:
    """Q1, 2025 Q3, Q2 2026, 第一季度, 去年第四季度."""
    if m["q2"] and preceded_by(m, "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"):
        return None
    quarter = _CN_Q[m["q"] or m["q2"][1]]
    qualifier = lead(m, _QUARTER_LEAD)
    if m["y2"]:
        found = _quarter(cal, int(m["y2"]), quarter)
    elif qualifier and qualifier["y"]:
        found = _quarter(cal, int(qualifier["y"]), quarter)
    elif qualifier:
        found = _quarter(cal, cal.today.year + _CN_YEAR_REL[qualifier["yrel"]], quarter)
    else:
        found = _quarter(cal, _recent_quarter_year(cal, quarter), quarter)
    return Piece(found, lead=lead_length(m, qualifier)) if found else None


_QUARTER_REL = {"上上个": -2, "上个": -1, "上一个": -1, "上": -1, "这个": 0, "本": 0, "这": 0, "下个": 1, "下一个": 1,
                "下": 1, "last": -1, "previous": -1, "the last": -1, "the previous": -1, "this": 0, "next": 1}  # fmt: skip


@rule(
    r"(?P<rel>上上个|上一个|下一个|上个|这个|下个|上|本|这|下)季度|(?<![A-Za-z])(?P<en>the last|the previous|last|previous|this|next)\s+quarter(?![A-Za-z])",
    re.IGNORECASE,
    needs=["季", "quarter"],
)
def _quarter_rel(cal: Calendar, m: re.Match[str]) -> TimeRange | None:
    rel = m["rel"] or " ".join(m["en"].lower().split())
    return _quarter_offset(cal, _QUARTER_REL[rel])


_EN_ORDINAL = {"first": 1, "1st": 1, "second": 2, "2nd": 2, "third": 3, "3rd": 3, "fourth": 4, "4th": 4, "last": 4}


@rule(
    rf"{W}the\s+(?P<q>first|1st|second|2nd|third|3rd|fourth|4th)\s+quarter(?:\s+of\s+(?:(?P<y>\d{{4}})|(?P<rel>this|last|next)\s+year))?{E}",
    re.IGNORECASE,
    needs=["quarter"],
)
def _quarter_en(cal: Calendar, m: re.Match[str]) -> TimeRange | None:
    quarter = _EN_ORDINAL[m["q"].lower()]
    if m["y"]:
        return _quarter(cal, int(m["y"]), quarter)
    if m["rel"]:
        return _quarter(cal, cal.today.year + {"this": 0, "last": -1, "next": 1}[m["rel"].lower()], quarter)
    return _quarter(cal, _recent_quarter_year(cal, quarter), quarter)

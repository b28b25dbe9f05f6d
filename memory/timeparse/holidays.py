"""Holidays, fixed-date, lunar and solar-term, in Chinese and English, resolved to real dates.

Without a year a holiday is its most recent occurrence that has begun (today included);
今年/去年/明年/2025年, "this/last/next Christmas" and "Christmas 2025" choose another. The
lunar calendar and the solar terms come from ``borax`` (1900–2100; outside it a lunar
holiday resolves to nothing).

Where people mean the holiday period, the phrase is a span: 春节/过年/Chinese New Year =
除夕 to 初六 (8 days), 国庆/十一假期/Golden Week/National Day = 1–7 October, 五一/劳动节/May
Day = 1–5 May. Adding 假期/长假/期间/"break"/"holidays" makes any holiday its period (元旦
1–3 January, 清明/端午/中秋 the day before to the day after, Christmas 24 December to
1 January); 当天/那天 makes any of them the day itself.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from datetime import date, timedelta
from functools import lru_cache

from huichat.memory.timeparse.days import Calendar
from huichat.memory.timeparse.english import E, W
from huichat.memory.timeparse.ranges import TimeRange
from huichat.memory.timeparse.rules import Piece, lead, lead_length, rule

__all__ = ["easter", "lunar", "solar_term"]

Start = Callable[[int], "date | None"]


def lunar(month: int, day: int) -> Start:
    """The Gregorian date in year ``y`` of lunar ``month``/``day`` (it may belong to lunar year y-1)."""

    @lru_cache(maxsize=256)
    def start(year: int) -> date | None:
        from borax.calendars.lunardate import LunarDate  # ~10 ms; only when a lunar holiday is named

        for lunar_year in (year - 1, year):
            try:
                solar: date = LunarDate(lunar_year, month, day).to_solar_date()
            except ValueError:  # outside 1900–2100, or no such day that year
                continue
            if solar.year == year:
                return solar
        return None

    return start


def solar_term(name: str) -> Start:
    """The day of solar term ``name`` (清明, 冬至…) in year ``y``."""

    @lru_cache(maxsize=256)
    def start(year: int) -> date | None:
        from borax.calendars.lunardate import TermUtils

        try:
            found: date = TermUtils.nth_term_day(year, term_name=name)
        except ValueError:
            return None
        return found

    return start


def _fixed(month: int, day: int) -> Start:
    return lambda year: date(year, month, day)


def _nth_weekday(month: int, weekday: int, nth: int) -> Start:
    """The ``nth`` ``weekday`` (0 = Monday) of ``month``; ``nth`` = -1 for the last."""

    def start(year: int) -> date:
        if nth > 0:
            first = date(year, month, 1)
            return first + timedelta(days=(weekday - first.weekday()) % 7 + 7 * (nth - 1))
        last = date(year + month // 12, month % 12 + 1, 1) - timedelta(days=1)
        return last - timedelta(days=(last.weekday() - weekday) % 7)

    return start


def easter(year: int) -> date:
    """Western Easter Sunday (the Meeus/Jones/Butcher computus)."""
    a, b, c = year % 19, year // 100, year % 100
    d, e = b // 4, b % 4
    g = (b - (b + 8) // 25 + 1) // 3
    h = (19 * a + b - d - g + 15) % 30
    i, k = c // 4, c % 4
    weekday = (32 + 2 * e + 2 * i - h - k) % 7
    m = (a + 11 * h + 22 * weekday) // 451
    month, day = divmod(h + weekday - 7 * m + 114, 31)
    return date(year, month, day + 1)


def _after(base: Start, days: int) -> Start:
    def start(year: int) -> date | None:
        found = base(year)
        return found + timedelta(days=days) if found else None

    return start


@dataclass(frozen=True)
class Holiday:
    """When a holiday falls, and how long the period people mean by it is."""

    start: Start
    period: tuple[int, int] = (0, 1)
    """(first day relative to ``start``, number of days) of the holiday period."""
    period_by_default: bool = False
    """The bare name means the period (春节, 国庆), not the day."""


_SPRING = Holiday(lunar(1, 1), (-1, 8), True)
_NATIONAL = Holiday(_fixed(10, 1), (0, 7), True)
_MAY_DAY = Holiday(_fixed(5, 1), (0, 5), True)
_THREE = (-1, 3)
HOLIDAYS_CN: dict[str, Holiday] = {
    "元旦": Holiday(_fixed(1, 1), (0, 3)), "情人节": Holiday(_fixed(2, 14)), "妇女节": Holiday(_fixed(3, 8)),
    "三八节": Holiday(_fixed(3, 8)), "植树节": Holiday(_fixed(3, 12)), "愚人节": Holiday(_fixed(4, 1)),
    "劳动节": _MAY_DAY, "五一": _MAY_DAY, "五一节": _MAY_DAY, "青年节": Holiday(_fixed(5, 4)),
    "儿童节": Holiday(_fixed(6, 1)), "六一": Holiday(_fixed(6, 1)), "建党节": Holiday(_fixed(7, 1)),
    "建军节": Holiday(_fixed(8, 1)), "教师节": Holiday(_fixed(9, 10)), "国庆": _NATIONAL, "国庆节": _NATIONAL,
    "十一假期": _NATIONAL, "十一长假": _NATIONAL, "十一黄金周": _NATIONAL, "黄金周": _NATIONAL,
    "万圣节": Holiday(_fixed(10, 31)), "光棍节": Holiday(_fixed(11, 11)), "双十一": Holiday(_fixed(11, 11)),
    "双11": Holiday(_fixed(11, 11)), "双十二": Holiday(_fixed(12, 12)), "双12": Holiday(_fixed(12, 12)),
    "平安夜": Holiday(_fixed(12, 24)), "圣诞": Holiday(_fixed(12, 25), (-1, 9)),
    "圣诞节": Holiday(_fixed(12, 25), (-1, 9)), "跨年": Holiday(_fixed(12, 31), (0, 2), True),
    "感恩节": Holiday(_nth_weekday(11, 3, 4)), "母亲节": Holiday(_nth_weekday(5, 6, 2)),
    "父亲节": Holiday(_nth_weekday(6, 6, 3)), "复活节": Holiday(easter),
    "春节": _SPRING, "过年": _SPRING, "大年初一": Holiday(lunar(1, 1)), "正月初一": Holiday(lunar(1, 1)),
    "除夕": Holiday(_after(lunar(1, 1), -1)), "大年三十": Holiday(_after(lunar(1, 1), -1)),
    "年三十": Holiday(_after(lunar(1, 1), -1)), "大年夜": Holiday(_after(lunar(1, 1), -1)),
    "元宵": Holiday(lunar(1, 15)), "元宵节": Holiday(lunar(1, 15)), "正月十五": Holiday(lunar(1, 15)),
    "龙抬头": Holiday(lunar(2, 2)), "端午": Holiday(lunar(5, 5), _THREE), "端午节": Holiday(lunar(5, 5), _THREE),
    "七夕": Holiday(lunar(7, 7)), "七夕节": Holiday(lunar(7, 7)), "中元节": Holiday(lunar(7, 15)),
    "中秋": Holiday(lunar(8, 15), _THREE), "中秋节": Holiday(lunar(8, 15), _THREE),
    "重阳": Holiday(lunar(9, 9)), "重阳节": Holiday(lunar(9, 9)), "腊八": Holiday(lunar(12, 8)),
    "腊八节": Holiday(lunar(12, 8)), "小年": Holiday(lunar(12, 23)),
    "清明": Holiday(solar_term("清明"), _THREE), "清明节": Holiday(solar_term("清明"), _THREE),
    "立春": Holiday(solar_term("立春")), "春分": Holiday(solar_term("春分")), "夏至": Holiday(solar_term("夏至")),
    "立秋": Holiday(solar_term("立秋")), "秋分": Holiday(solar_term("秋分")), "立冬": Holiday(solar_term("立冬")),
    "冬至": Holiday(solar_term("冬至")),
}  # fmt: skip
_CHRISTMAS = Holiday(_fixed(12, 25), (-1, 9))
_EASTER = Holiday(easter, (-2, 4))
HOLIDAYS_EN: dict[str, Holiday] = {
    "new years day": Holiday(_fixed(1, 1), (0, 3)), "new years eve": Holiday(_fixed(12, 31)),
    "new year": Holiday(_fixed(12, 31), (0, 2), True), "new years": Holiday(_fixed(12, 31), (0, 2), True),
    "valentines day": Holiday(_fixed(2, 14)),
    "valentines": Holiday(_fixed(2, 14)), "st patricks day": Holiday(_fixed(3, 17)),
    "saint patricks day": Holiday(_fixed(3, 17)), "april fools day": Holiday(_fixed(4, 1)),
    "april fools": Holiday(_fixed(4, 1)),
    "easter": _EASTER, "easter sunday": _EASTER, "easter weekend": Holiday(_after(easter, -2), (0, 4), True),
    "good friday": Holiday(_after(easter, -2)), "easter monday": Holiday(_after(easter, 1)),
    "mothers day": Holiday(_nth_weekday(5, 6, 2)), "fathers day": Holiday(_nth_weekday(6, 6, 3)),
    "memorial day": Holiday(_nth_weekday(5, 0, -1)), "independence day": Holiday(_fixed(7, 4)),
    "fourth of july": Holiday(_fixed(7, 4)), "labor day": Holiday(_nth_weekday(9, 0, 1)),
    "labour day": _MAY_DAY, "may day": _MAY_DAY, "halloween": Holiday(_fixed(10, 31)),
    "thanksgiving": Holiday(_nth_weekday(11, 3, 4)), "black friday": Holiday(_after(_nth_weekday(11, 3, 4), 1)),
    "christmas eve": Holiday(_fixed(12, 24)), "christmas": _CHRISTMAS, "christmas day": _CHRISTMAS,
    "xmas": _CHRISTMAS, "boxing day": Holiday(_fixed(12, 26)),
    "chinese new year": _SPRING, "lunar new year": _SPRING, "spring festival": _SPRING,
    "chinese new years eve": Holiday(_after(lunar(1, 1), -1)), "lantern festival": Holiday(lunar(1, 15)),
    "qingming": Holiday(solar_term("清明"), _THREE), "qingming festival": Holiday(solar_term("清明"), _THREE),
    "tomb sweeping day": Holiday(solar_term("清明"), _THREE),
    "dragon boat festival": Holiday(lunar(5, 5), _THREE), "qixi": Holiday(lunar(7, 7)),
    "qixi festival": Holiday(lunar(7, 7)), "mid autumn festival": Holiday(lunar(8, 15), _THREE),
    "mid autumn": Holiday(lunar(8, 15), _THREE), "moon festival": Holiday(lunar(8, 15), _THREE),
    "double ninth festival": Holiday(lunar(9, 9)), "national day": _NATIONAL, "golden week": _NATIONAL,
    "singles day": Holiday(_fixed(11, 11)),
}  # fmt: skip


def _occurrence(cal: Calendar, holiday: Holiday, period: bool | None, which: str, year: int | None) -> TimeRange | None:
    """The holiday (day or period) chosen by ``which``: recent, last, this, next, or the given year."""
    use_period = holiday.period_by_default if period is None else period
    offset, length = holiday.period if use_period else (0, 1)
    starts: list[date] = []
    low = year if year is not None else cal.today.year - 1
    high = year if year is not None else cal.today.year + 1
    for candidate_year in range(low, high + 1):
        found = holiday.start(candidate_year)
        if found is not None:
            starts.append(found + timedelta(days=offset))
    if which == "this" and year is None:
        starts = [s for s in starts if s.year == cal.today.year]
    elif which == "next":
        starts = sorted(s for s in starts if s > cal.today)[:1]
    elif which == "last":
        starts = [s for s in starts if s + timedelta(days=length) <= cal.today]
    elif year is None:
        starts = [s for s in starts if s <= cal.today]
    if not starts:
        return None
    return cal.days(max(starts), length, "day" if length == 1 else "span")


_CN_NAMES = "|".join(sorted(map(re.escape, HOLIDAYS_CN), key=len, reverse=True))
_CN_YEARS = {"今年": 0, "去年": -1, "前年": -2, "明年": 1, "后年": 2}


_CN_YEAR_LEAD = re.compile(r"(?:(?P<yrel>今年|去年|前年|明年|后年)|(?<!\d)(?P<y>\d{4})年)(?:的)?$")


@rule(
    rf"(?P<name>{_CN_NAMES})(?![路街道号楼巷线班轻]|上河|老人)(?P<period>假期|长假|小长假|期间|那几天)?(?P<day>当天|那天)?",
    needs="".join(name[0] for name in HOLIDAYS_CN),
)
def _cn_holiday(cal: Calendar, m: re.Match[str]) -> Piece | None:
    holiday = HOLIDAYS_CN[m["name"]]
    period = True if m["period"] else False if m["day"] else None
    qualifier = lead(m, _CN_YEAR_LEAD)
    year = None
    if qualifier:
        year = int(qualifier["y"]) if qualifier["y"] else cal.today.year + _CN_YEARS[qualifier["yrel"]]
    found = _occurrence(cal, holiday, period, "year" if year else "recent", year)
    return Piece(found, repeat=365, lead=lead_length(m, qualifier)) if found else None


def _en_pattern(name: str) -> str:
    words = []
    for word in name.split():
        if word == "st":
            words.append(r"st\.?")
        elif word.endswith("s") and len(word) > 3:
            words.append(re.escape(word[:-1]) + r"['’]?s['’]?")
        else:
            words.append(re.escape(word))
    return r"[\s-]+".join(words)


_EN_NAMES = "|".join(_en_pattern(name) for name in sorted(HOLIDAYS_EN, key=len, reverse=True))
_EN_YEARS = {"this year": 0, "last year": -1, "next year": 1}


_EN_REL_LEAD = re.compile(r"(?<![A-Za-z])(?P<rel>this past|last|this|next)\s+$", re.IGNORECASE)


@rule(
    rf"{W}(?P<name>{_EN_NAMES})(?!\s+eggs?{E})"
    rf"(?P<period>\s+(?:break|holidays?|vacation|week){E})?(?:,?\s+(?P<y>\d{{4}})(?!\d)|\s+(?P<yrel>this year|last year|next year){E})?{E}",
    re.IGNORECASE,
    needs={form for name in HOLIDAYS_EN for word in [max(name.split(), key=len)] for form in (word, word.rstrip("s"))},
)
def _en_holiday(cal: Calendar, m: re.Match[str]) -> Piece | None:
    key = " ".join(re.sub(r"['’.]", "", m["name"].lower()).replace("-", " ").split())
    holiday = HOLIDAYS_EN.get(key)
    if holiday is None:
        return None
    qualifier = lead(m, _EN_REL_LEAD)
    rel = " ".join(qualifier["rel"].lower().split()) if qualifier else ""
    year = int(m["y"]) if m["y"] else cal.today.year + _EN_YEARS[m["yrel"].lower()] if m["yrel"] else None
    which = {"last": "last", "this past": "last", "this": "this", "next": "next"}.get(rel, "recent")
    found = _occurrence(cal, holiday, True if m["period"] else None, "year" if year else which, year)
    return Piece(found, repeat=365, lead=lead_length(m, qualifier)) if found else None

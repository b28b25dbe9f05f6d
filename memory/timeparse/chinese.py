"""Chinese rules: days, weeks and weekdays, months, years, dates written with 年/月/日."""

from __future__ import annotations

import re
from datetime import date, timedelta

from huichat.memory.timeparse.days import Calendar, part_daytime
from huichat.memory.timeparse.numbers import cn_number
from huichat.memory.timeparse.ranges import TimeRange
from huichat.memory.timeparse.rules import Piece, rule

__all__ = ["CN_MONTH_PART", "CN_YEAR_PART", "cn_year"]

CN_MONTH_PART = {
    "初": (1, 10), "上旬": (1, 10), "中": (11, 20), "中旬": (11, 20), "底": (21, 31), "末": (21, 31),
    "下旬": (21, 31), "上半月": (1, 15), "下半月": (16, 31),
}  # fmt: skip
CN_YEAR_PART = {"初": (1, 2), "中": (5, 8), "底": (11, 12), "末": (11, 12), "上半年": (1, 6), "下半年": (7, 12)}
_MONTH_PART = r"(?P<part>上半月|下半月|初|中旬|中(?![国文心央间秋])|底|末|上旬|下旬)"

# ---- days

_CN_DAYS = {"今天": 0, "今日": 0, "昨天": -1, "昨日": -1, "前天": -2, "大前天": -3, "明天": 1, "明日": 1,
            "后天": 2, "大后天": 3}  # fmt: skip


@rule(r"大前天|大后天|今天|今日|昨天|昨日|前天|明天|明日|(?<![之以最])后天", needs="今昨前明后")
def _day(cal: Calendar, m: re.Match[str]) -> TimeRange:
    return cal.days(cal.today + timedelta(days=_CN_DAYS[m.group(0)]), 1)


_SHORT_PART = {"早": "早上", "晨": "早上", "晚": "晚上", "夜": "晚上"}


@rule(r"(?P<day>[今昨明前])(?P<part>早|晨|晚|夜)(?![上饭餐点报])", needs="今昨明前")
def _day_short(cal: Calendar, m: re.Match[str]) -> Piece:
    day = cal.today + timedelta(days={"今": 0, "昨": -1, "明": 1, "前": -2}[m["day"]])
    daytime = part_daytime(_SHORT_PART[m["part"]])
    return Piece(cal.on(day, daytime), day=day, daytime=daytime)


# ---- weeks and weekdays

_WEEKDAY = {"一": 0, "二": 1, "三": 2, "四": 3, "五": 4, "六": 5, "日": 6, "天": 6, "七": 6}
_WEEK_REL = {
    "这": 0, "本": 0, "这个": 0, "上": -1, "上个": -1, "上一": -1, "上一个": -1, "上上": -2, "上上个": -2,
    "大上": -2, "大上个": -2, "下": 1, "下个": 1, "下一": 1, "下一个": 1, "下下": 2, "下下个": 2,
}  # fmt: skip
_WEEK_WORD = r"(?:周(?![期边围全岁长转报刊年游到])|星期|礼拜)"


@rule(
    r"(?<![每])(?P<rel>上上个|上上|大上个|大上|下下个|下下|上一个|下一个|这个|上个|下个|上一|下一|这|本|上|下)"
    rf"(?:(?P<end>周末)|{_WEEK_WORD}(?:(?P<wd>[一二三四五六日天七])(?![报刊年]))?)",
    needs="周星礼",
)
def _week(cal: Calendar, m: re.Match[str]) -> TimeRange:
    offset = _WEEK_REL[m["rel"]]
    if m["end"]:
        return cal.weekend(offset)
    if m["wd"]:
        return cal.days(cal.weekday_in_week(offset, _WEEKDAY[m["wd"]]), 1)
    return cal.week(offset)


@rule(
    r"(?<![每上下这本个一二三四五六七八九十两几\d])(?:周|星期|礼拜)(?P<wd>[一二三四五六日天])(?![报刊年])",
    repeat=7,
    needs="周星礼",
)
def _weekday(cal: Calendar, m: re.Match[str]) -> TimeRange:
    return cal.days(cal.recent_weekday(_WEEKDAY[m["wd"]], strictly_before_today=False), 1)


@rule(r"(?<![每上下这本个])周末", needs="末")
def _weekend(cal: Calendar, m: re.Match[str]) -> TimeRange:
    return cal.recent_weekend()


# ---- months

_MONTH_REL = {"这个月": 0, "本月": 0, "这月": 0, "当月": 0, "上个月": -1, "上月": -1, "上一个月": -1,
              "上上个月": -2, "下个月": 1, "下月": 1, "下一个月": 1}  # fmt: skip


@rule(rf"(?P<rel>上上个月|上一个月|下一个月|这个月|上个月|下个月|本月|这月|当月|上月|下月){_MONTH_PART}?", needs="月")
def _month_rel(cal: Calendar, m: re.Match[str]) -> TimeRange | None:
    year, month = cal.month_offset(_MONTH_REL[m["rel"]])
    return cal.month(year, month, CN_MONTH_PART[m["part"]] if m["part"] else None)


@rule(rf"(?<![年\d个岁日明风正一二三四五六七八九十])月{_MONTH_PART}", needs="月")
def _month_part(cal: Calendar, m: re.Match[str]) -> TimeRange | None:
    return cal.month(cal.today.year, cal.today.month, CN_MONTH_PART[m["part"]])


# ---- years, and dates with a year

_YEAR_REL = {"今年": 0, "去年": -1, "前年": -2, "大前年": -3, "明年": 1, "后年": 2}
YEAR = r"(?:(?P<yrel>大前年|今年|去年|前年|明年|后年)|(?<!\d)(?P<y>\d{4}|[零〇一二三四五六七八九]{4})年)"


def cn_year(cal: Calendar, m: re.Match[str]) -> int | None:
    """The year named by a match of ``YEAR`` (groups ``yrel`` / ``y``)."""
    if m["yrel"]:
        return cal.today.year + _YEAR_REL[m["yrel"]]
    if m["y"]:
        return cn_number(m["y"])
    return None


@rule(
    rf"{YEAR}(?:的)?(?:(?P<m>1[0-2]|0?[1-9]|十[一二]?|[一二三四五六七八九])月(?:份)?{_MONTH_PART}?"
    r"(?:(?P<d>\d{1,2}|[一二三四五六七八九十]{1,3})[日号])?|年?(?P<ypart>上半年|下半年|初|中(?![秋国文心央间])|底|末))?",
    needs="年",
)
def _year(cal: Calendar, m: re.Match[str]) -> Piece | None:
    year = cn_year(cal, m)
    if year is None:
        return None
    absolute = bool(m["y"])
    if m["m"]:
        month = cn_number(m["m"]) or 0
        if m["d"]:
            day = date(year, month, cn_number(m["d"]) or 0)
            return Piece(cal.days(day, 1), day=day, absolute=True)
        found = cal.month(year, month, CN_MONTH_PART[m["part"]] if m["part"] else None)
    else:
        found = cal.year(year, CN_YEAR_PART[m["ypart"]] if m["ypart"] else None)
    return Piece(found, absolute=absolute) if found else None


@rule(
    r"(?<![年\d个一二三四五六七八九十两几每])年(?P<part>初|中(?![秋国文心央间])|底|末)|(?<!年)(?P<half>上半年|下半年)",
    needs="年",
)
def _year_part(cal: Calendar, m: re.Match[str]) -> TimeRange | None:
    if m["half"]:  # the most recent one that has begun
        year = cal.today.year if m["half"] == "上半年" or cal.today.month >= 7 else cal.today.year - 1
        return cal.year(year, CN_YEAR_PART[m["half"]])
    return cal.year(cal.today.year, CN_YEAR_PART[m["part"]])


@rule(
    r"(?<![\d年零〇一二两三四五六七八九十个第每])(?P<m>1[0-2]|0?[1-9]|十[一二]?|[一二三四五六七八九])月"
    rf"(?:(?P<d>\d{{1,2}}|[一二三四五六七八九十]{{1,3}})[日号]|(?P<fen>份)|{_MONTH_PART})?(?![\d个])",
    absolute=True,
    repeat=365,
    needs="月",
)
def _month_day(cal: Calendar, m: re.Match[str]) -> TimeRange | None:
    month = cn_number(m["m"]) or 0
    if m["d"]:
        day_number = cn_number(m["d"]) or 0
        found = cal.recent_date(month, day_number) if 1 <= day_number <= 31 else None
        return cal.days(found, 1) if found else None
    return cal.month(cal.recent_month(month), month, CN_MONTH_PART[m["part"]] if m["part"] else None)


@rule(
    r"(?<![\d年])(?P<m>1[0-2]|0?[1-9])月(?P<d1>\d{1,2})[日号]?\s*(?:到|至|-|–|—|~|～)\s*(?P<d2>\d{1,2})[日号](?![\d])",
    absolute=True,
    needs="月",
)
def _month_day_span(cal: Calendar, m: re.Match[str]) -> TimeRange | None:
    """3月3日到10日, 3月3-10日: the second day inherits the month."""
    month, first, last = int(m["m"]), int(m["d1"]), int(m["d2"])
    if not 1 <= first < last <= 31:
        return None
    start = cal.recent_date(month, first)
    if start is None:
        return None
    return cal.days(start, (date(start.year, month, last) - start).days + 1, "span")

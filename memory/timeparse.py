"""Time expressions in Chinese and English → half-open local ranges ``[start, end)``.

A rule layer of our own: dateparser misses nearly every Chinese form that matters and
reads English "we" as Wednesday. Everything here is a pure function of the text, ``now``,
the display zone and the first day of the week.

Parts of the day (the same table for both languages)::

    凌晨 / before dawn        00:00–06:00
    早上 早晨 清晨 / early     06:00–09:00
    上午 / morning            06:00–12:00
    中午 / noon               11:00–13:00
    下午 / afternoon          12:00–18:00   (the seed's 下午)
    傍晚 / dusk               17:00–19:00
    晚上 今晚 昨晚 / evening, night, tonight, last night   18:00–24:00
    深夜 半夜 夜里 / late night  22:00–04:00 the next day

Month parts: 月初/上旬/early = days 1–10, 月中/中旬/mid = 11–20, 月底/月末/下旬/late = 21–end.
Year parts: 年初/early = Jan–Feb, 年中/mid = May–Aug, 年底/年末/late = Nov–Dec.

Vague phrases (flagged ``fuzzy``; the retriever scans them week by week from the most
recent): 刚才/just now = last 2 hours; 前几天/几天前/a few days ago/the other day = the
7 days before today; 最近/recently = last 14 days; 前阵子/前段时间/a while ago = 1–8
weeks ago; 半个月前 = 8–22 days ago; 半年前 = 4–8 months ago; 之前/以前/很久以前/long
ago = anything before now (very long ago = before 3 months ago).

A weekday alone (周三, Wednesday) is the most recent such day, today included; "last
Wednesday" is the most recent one before today; 上周三 is Wednesday of the previous
calendar week. A month or date without a year is its most recent occurrence not in the
future.
"""

from __future__ import annotations

import calendar
import re
from collections.abc import Callable
from dataclasses import dataclass
from datetime import date, datetime, time, timedelta, tzinfo

__all__ = ["TimeRange", "TimeResolver"]

MAX_TEXT = 4000


@dataclass(frozen=True)
class TimeRange:
    """A resolved time expression: ``start <= t < end`` in the local zone."""

    start: datetime
    end: datetime
    granularity: str
    """``hour``, ``part_of_day``, ``day``, ``weekend``, ``week``, ``month``, ``year`` or ``span``."""
    fuzzy: bool = False
    phrase: str = ""

    def describe(self) -> str:
        """A short human label, e.g. ``2026-11-18 Wed 12:00–18:00``."""
        start, end = self.start, self.end
        last = end - timedelta(microseconds=1)
        if self.granularity == "day":
            return f"{start:%Y-%m-%d %a}"
        if self.granularity in ("part_of_day", "hour") or (start.date() == last.date() and start.time() != time()):
            end_label = "24:00" if end.time() == time() and end.date() > start.date() else f"{end:%H:%M}"
            day_note = "" if last.date() == start.date() else f" {end:%m-%d}"
            return f"{start:%Y-%m-%d %a %H:%M}–{end_label}{day_note}".replace(" 24:00 ", " 24:00")
        return f"{start:%Y-%m-%d} – {last:%Y-%m-%d}"


# --------------------------------------------------------------------------- numbers

_CN_DIGITS = {
    "零": 0,
    "〇": 0,
    "一": 1,
    "二": 2,
    "两": 2,
    "三": 3,
    "四": 4,
    "五": 5,
    "六": 6,
    "七": 7,
    "八": 8,
    "九": 9,
}
_EN_NUMBERS = {
    "a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7,
    "eight": 8, "nine": 9, "ten": 10, "eleven": 11, "twelve": 12, "thirteen": 13, "fourteen": 14,
    "fifteen": 15, "sixteen": 16, "seventeen": 17, "eighteen": 18, "nineteen": 19, "twenty": 20,
    "thirty": 30, "a couple of": 2, "a couple": 2, "couple of": 2,
}  # fmt: skip


def cn_number(text: str) -> int | None:
    """Arabic or Chinese numerals (十二, 二十三, 两, 一百, 二〇二六) → int."""
    text = text.strip()
    if not text:
        return None
    if text.isdigit():
        return int(text)
    if all(ch in _CN_DIGITS for ch in text):  # digit by digit: 二〇二六
        value = 0
        for ch in text:
            value = value * 10 + _CN_DIGITS[ch]
        return value
    total, section, current = 0, 0, 0
    for ch in text:
        if ch in _CN_DIGITS:
            current = _CN_DIGITS[ch]
        elif ch == "十":
            section += (current or 1) * 10
            current = 0
        elif ch == "百":
            section += (current or 1) * 100
            current = 0
        elif ch == "千":
            section += (current or 1) * 1000
            current = 0
        elif ch == "万":
            total += (section + current) * 10000
            section = current = 0
        else:
            return None
    return total + section + current


# ------------------------------------------------------------------------ calendar

_PARTS: dict[str, tuple[int, int]] = {
    "凌晨": (0, 6), "早上": (6, 9), "早晨": (6, 9), "清晨": (6, 9), "一早": (6, 9), "早": (6, 9),
    "上午": (6, 12), "中午": (11, 13), "下午": (12, 18), "傍晚": (17, 19), "晚上": (18, 24),
    "晚": (18, 24), "夜": (18, 24), "夜里": (22, 28), "深夜": (22, 28), "半夜": (22, 28),
    "morning": (6, 12), "noon": (11, 13), "afternoon": (12, 18), "evening": (18, 24),
    "night": (18, 24), "late night": (22, 28),
}  # fmt: skip
_CN_PART = "凌晨|早上|早晨|清晨|一早|上午|中午|下午|傍晚|晚上|夜里|深夜|半夜"
_EN_PART = "morning|afternoon|evening|night|noon"
_CN_WEEKDAY = {"一": 0, "二": 1, "三": 2, "四": 3, "五": 4, "六": 5, "日": 6, "天": 6, "七": 6}
_EN_WEEKDAYS = ["monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"]
_EN_MONTHS = {
    "january": 1, "jan": 1, "february": 2, "feb": 2, "march": 3, "mar": 3, "april": 4, "apr": 4,
    "may": 5, "june": 6, "jun": 6, "july": 7, "jul": 7, "august": 8, "aug": 8, "september": 9,
    "sep": 9, "sept": 9, "october": 10, "oct": 10, "november": 11, "nov": 11, "december": 12, "dec": 12,
}  # fmt: skip
_MONTH_PARTS = {
    "初": (1, 10), "上旬": (1, 10), "early": (1, 10), "中": (11, 20), "中旬": (11, 20), "mid": (11, 20),
    "底": (21, 31), "末": (21, 31), "下旬": (21, 31), "late": (21, 31), "end": (21, 31),
}  # fmt: skip
_YEAR_PARTS = {
    "初": (1, 2),
    "early": (1, 2),
    "中": (5, 8),
    "mid": (5, 8),
    "底": (11, 12),
    "末": (11, 12),
    "late": (11, 12),
}


class _Calendar:
    """Date arithmetic in one zone with one first weekday."""

    def __init__(self, now: datetime, zone: tzinfo, week_start: int) -> None:
        self.zone = zone
        self.now = now.astimezone(zone)
        self.today = self.now.date()
        self.week_start = week_start

    def at(self, day: date) -> datetime:
        return datetime.combine(day, time(), tzinfo=self.zone)

    def days(self, first: date, count: int, granularity: str = "day", fuzzy: bool = False) -> TimeRange:
        return TimeRange(self.at(first), self.at(first + timedelta(days=count)), granularity, fuzzy)

    def part(self, day: date, part: str) -> TimeRange:
        low, high = _PARTS[part]
        # wall-clock hours (DST-safe): whole days first, then the hour of that day
        start = self.at(day + timedelta(days=low // 24)).replace(hour=low % 24)
        end_day = day + timedelta(days=high // 24)
        end = self.at(end_day).replace(hour=high % 24)
        return TimeRange(start, end, "part_of_day")

    def week_of(self, day: date) -> date:
        return day - timedelta(days=(day.weekday() - self.week_start) % 7)

    def week(self, offset: int) -> TimeRange:
        first = self.week_of(self.today) + timedelta(weeks=offset)
        return self.days(first, 7, "week")

    def weekday_in_week(self, offset: int, weekday: int) -> date:
        first = self.week_of(self.today) + timedelta(weeks=offset)
        return first + timedelta(days=(weekday - self.week_start) % 7)

    def weekend_in_week(self, offset: int) -> TimeRange:
        # Saturday and the Sunday after it (in a Sunday-first week the weekend runs into the next)
        return self.days(self.weekday_in_week(offset, 5), 2, "weekend")

    def recent_weekday(self, weekday: int, strictly_before_today: bool) -> date:
        back = (self.today.weekday() - weekday) % 7
        if back == 0 and strictly_before_today:
            back = 7
        return self.today - timedelta(days=back)

    def month(self, year: int, month: int, part: str | None = None) -> TimeRange | None:
        if not (1 <= month <= 12) or not (1 <= year <= 9998):
            return None
        last_day = calendar.monthrange(year, month)[1]
        if part is None:
            first = date(year, month, 1)
            return self.days(first, last_day, "month")
        low, high = _MONTH_PARTS[part]
        high = min(high, last_day)
        return self.days(date(year, month, low), high - low + 1, "span")

    def month_offset(self, offset: int) -> tuple[int, int]:
        index = self.today.year * 12 + self.today.month - 1 + offset
        return index // 12, index % 12 + 1

    def year(self, year: int, part: str | None = None) -> TimeRange | None:
        if not (1 <= year <= 9998):
            return None
        if part is None:
            return TimeRange(self.at(date(year, 1, 1)), self.at(date(year + 1, 1, 1)), "year")
        low, high = _YEAR_PARTS[part]
        end = date(year + 1, 1, 1) if high == 12 else date(year, high + 1, 1)
        return TimeRange(self.at(date(year, low, 1)), self.at(end), "span")

    def recent_month(self, month: int) -> int:
        """The year of the most recent ``month`` not in the future."""
        return self.today.year if month <= self.today.month else self.today.year - 1

    def recent_date(self, month: int, day: int) -> date | None:
        for year in (self.today.year, self.today.year - 1):
            try:
                candidate = date(year, month, day)
            except ValueError:
                continue
            if candidate <= self.today:
                return candidate
        try:  # Feb 29 in a non-leap year: the last leap year's
            year = self.today.year - 1
            while year > self.today.year - 8:
                if calendar.isleap(year):
                    return date(year, month, day)
                year -= 1
        except ValueError:
            return None
        return None

    def ago(self, amount: int, unit: str) -> TimeRange | None:
        try:
            if unit == "minute":
                start = self.now - timedelta(minutes=amount + 5)
                return TimeRange(start, self.now - timedelta(minutes=max(amount - 5, 0)), "hour")
            if unit == "hour":
                return TimeRange(
                    self.now - timedelta(hours=amount + 1),
                    self.now - timedelta(hours=amount - 1),
                    "hour",
                )
            if unit == "day":
                return self.days(self.today - timedelta(days=amount), 1)
            if unit == "week":
                return self.week(-amount)
            if unit == "month":
                year, month = self.month_offset(-amount)
                return self.month(year, month)
            if unit == "year":
                return self.year(self.today.year - amount)
        except (OverflowError, ValueError):
            return None
        return None

    def span(self, start: datetime, end: datetime, fuzzy: bool = True) -> TimeRange:
        return TimeRange(start, end, "span", fuzzy)


def _with_part(cal: _Calendar, day: date | None, part: str | None, granularity: str = "day") -> TimeRange | None:
    if day is None:
        return None
    if part:
        return cal.part(day, _normal_part(part))
    return cal.days(day, 1, granularity)


def _normal_part(part: str) -> str:
    part = part.lower().strip()
    if part in ("tonight",):
        return "evening"
    if part == "早":
        return "早上"
    if part in ("晚", "夜"):
        return "晚上"
    return part


# -------------------------------------------------------------------------- rules

Handler = Callable[[_Calendar, "re.Match[str]"], TimeRange | None]
_RULES: list[tuple[re.Pattern[str], Handler]] = []


def _rule(pattern: str, flags: int = 0) -> Callable[[Handler], Handler]:
    def register(handler: Handler) -> Handler:
        _RULES.append((re.compile(pattern, flags), handler))
        return handler

    return register


_NUM = r"(?:\d{1,6}|[零〇一二两三四五六七八九十百千万]{1,8})"
_NOT_CJK_NUM_BEFORE = r"(?<![\d零〇一二两三四五六七八九十百千万第每])"

# ---- Chinese: days


_CN_DAYS = {
    "今天": 0,
    "今日": 0,
    "昨天": -1,
    "昨日": -1,
    "前天": -2,
    "大前天": -3,
    "明天": 1,
    "明日": 1,
    "后天": 2,
    "大后天": 3,
}
_CN_DAY_SHORT = {"今": 0, "昨": -1, "明": 1, "前": -2}


@_rule(rf"(?P<day>大前天|大后天|今天|今日|昨天|昨日|前天|明天|明日|后天)(?:的)?(?P<part>{_CN_PART})?")
def _cn_day(cal: _Calendar, m: re.Match[str]) -> TimeRange | None:
    day = cal.today + timedelta(days=_CN_DAYS[m["day"]])
    return _with_part(cal, day, m["part"])


@_rule(r"(?P<day>[今昨明前])(?P<part>早|晨|晚|夜)(?![上饭餐点])")
def _cn_day_short(cal: _Calendar, m: re.Match[str]) -> TimeRange | None:
    day = cal.today + timedelta(days=_CN_DAY_SHORT[m["day"]])
    part = {"早": "早上", "晨": "早上", "晚": "晚上", "夜": "晚上"}[m["part"]]
    return cal.part(day, part)


@_rule(rf"(?<![上下午今昨明天日的])(?P<part>{_CN_PART})(?![好安])")
def _cn_part_today(cal: _Calendar, m: re.Match[str]) -> TimeRange | None:
    return cal.part(cal.today, m["part"])


# ---- Chinese: weeks and weekdays

_CN_WEEK_REL = {
    "这": 0, "本": 0, "这个": 0, "上": -1, "上个": -1, "上上": -2, "上上个": -2, "下": 1, "下个": 1, "下下": 2, "下下个": 2,
}  # fmt: skip


@_rule(
    rf"(?<!每)(?P<rel>上上个|上上|下下个|下下|这个|上个|下个|这|本|上|下)"
    rf"(?:周|星期|礼拜|个?周)(?:(?P<wd>[一二三四五六日天七])(?![报刊])|(?P<end>末))?(?:的)?(?P<part>{_CN_PART})?"
)
def _cn_week(cal: _Calendar, m: re.Match[str]) -> TimeRange | None:
    offset = _CN_WEEK_REL[m["rel"]]
    if m["end"]:
        return cal.weekend_in_week(offset)
    if m["wd"]:
        return _with_part(cal, cal.weekday_in_week(offset, _CN_WEEKDAY[m["wd"]]), m["part"])
    if m["part"]:
        return None
    return cal.week(offset)


@_rule(
    rf"(?<![每上下这本个一二三四五六七八九十两几\d])(?:周|星期|礼拜)(?P<wd>[一二三四五六日天])(?![报刊年])(?:的)?(?P<part>{_CN_PART})?"
)
def _cn_weekday(cal: _Calendar, m: re.Match[str]) -> TimeRange | None:
    return _with_part(cal, cal.recent_weekday(_CN_WEEKDAY[m["wd"]], strictly_before_today=False), m["part"])


@_rule(r"(?<![每上下这本个])周末")
def _cn_weekend(cal: _Calendar, m: re.Match[str]) -> TimeRange | None:
    offset = 0 if cal.today.weekday() >= 5 else -1
    return cal.weekend_in_week(offset)


# ---- Chinese: months and years


_CN_MONTH_REL = {
    "这个月": 0,
    "本月": 0,
    "这月": 0,
    "上个月": -1,
    "上月": -1,
    "上上个月": -2,
    "下个月": 1,
    "下月": 1,
}


@_rule(r"(?P<rel>上上个月|这个月|上个月|下个月|本月|这月|上月|下月)(?P<part>初|中旬|中|底|末|上旬|下旬)?")
def _cn_month_rel(cal: _Calendar, m: re.Match[str]) -> TimeRange | None:
    year, month = cal.month_offset(_CN_MONTH_REL[m["rel"]])
    return cal.month(year, month, m["part"])


@_rule(r"(?<![年\d个岁日明风正])月(?P<part>初|中旬|中(?![国文心央间])|底|末|上旬|下旬)")
def _cn_month_part(cal: _Calendar, m: re.Match[str]) -> TimeRange | None:
    return cal.month(cal.today.year, cal.today.month, m["part"])


_CN_YEAR_REL = {"今年": 0, "去年": -1, "前年": -2, "大前年": -3, "明年": 1}


def _cn_year_of(cal: _Calendar, m: re.Match[str]) -> int | None:
    if m["yrel"]:
        return cal.today.year + _CN_YEAR_REL[m["yrel"]]
    if m["y"]:
        return cn_number(m["y"])
    return None


@_rule(
    r"(?:(?P<yrel>大前年|今年|去年|前年|明年)|(?P<y>\d{4}|[零〇一二三四五六七八九]{4})年)"
    r"(?:(?P<m>\d{1,2}|[一二三四五六七八九十]{1,3})月(?:份)?(?P<mpart>初|中旬|中|底|末|上旬|下旬)?"
    r"(?:(?P<d>\d{1,2}|[一二三四五六七八九十]{1,3})[日号])?|(?P<ypart>年初|年中|年底|年末|初|底))?"
)
def _cn_year(cal: _Calendar, m: re.Match[str]) -> TimeRange | None:
    year = _cn_year_of(cal, m)
    if year is None:
        return None
    if m["m"]:
        month = cn_number(m["m"]) or 0
        if m["d"]:
            try:
                return cal.days(date(year, month, cn_number(m["d"]) or 0), 1)
            except ValueError:
                return None
        return cal.month(year, month, m["mpart"])
    if m["ypart"]:
        return cal.year(year, m["ypart"][-1])
    return cal.year(year)


@_rule(r"(?<![年\d个])年(?P<part>初|底|末)")
def _cn_year_part(cal: _Calendar, m: re.Match[str]) -> TimeRange | None:
    return cal.year(cal.today.year, m["part"])


@_rule(
    r"(?<![\d年零〇一二两三四五六七八九十个第每])(?P<m>1[0-2]|0?[1-9]|十[一二]?|[一二三四五六七八九])月"
    r"(?:(?P<d>\d{1,2}|[一二三四五六七八九十]{1,3})[日号]|(?P<fen>份)|(?P<part>初|中旬|中|底|末|上旬|下旬))?(?![\d个])"
)
def _cn_month_day(cal: _Calendar, m: re.Match[str]) -> TimeRange | None:
    month = cn_number(m["m"]) or 0
    if not 1 <= month <= 12:
        return None
    if m["d"]:
        day = cn_number(m["d"]) or 0
        found = cal.recent_date(month, day) if 1 <= day <= 31 else None
        return cal.days(found, 1) if found else None
    return cal.month(cal.recent_month(month), month, m["part"])


# ---- Chinese: "N units ago" and vague phrases

_CN_UNITS = {"天": "day", "日": "day", "周": "week", "星期": "week", "礼拜": "week", "月": "month", "年": "year",
             "小时": "hour", "钟头": "hour", "分钟": "minute"}  # fmt: skip


@_rule(
    rf"{_NOT_CJK_NUM_BEFORE}(?P<n>{_NUM}|半|几|两)(?:个)?(?P<unit>天|日|周|星期|礼拜|月|年|小时|钟头|分钟)(?:之|以)?前"
)
def _cn_ago(cal: _Calendar, m: re.Match[str]) -> TimeRange | None:
    unit = _CN_UNITS[m["unit"]]
    if m["n"] == "几":
        return _vague(cal, "few_days" if unit == "day" else "while")
    if m["n"] == "半":
        if unit == "month":
            return cal.span(cal.at(cal.today - timedelta(days=22)), cal.at(cal.today - timedelta(days=8)))
        if unit == "year":
            year, month = cal.month_offset(-8)
            end_year, end_month = cal.month_offset(-4)
            return cal.span(cal.at(date(year, month, 1)), cal.at(date(end_year, end_month, 1)))
        if unit == "hour":
            return cal.ago(0, "hour")
        return None
    amount = cn_number(m["n"])
    if amount is None or amount > 100_000:
        return None
    return cal.ago(amount, unit)


_VAGUE_CN = {
    "刚才": "just_now", "刚刚": "just_now", "方才": "just_now",
    "前几天": "few_days", "这几天": "few_days", "近几天": "few_days", "前些天": "few_days", "前两天": "few_days",
    "最近": "recent", "近来": "recent", "近期": "recent", "最近几天": "recent",
    "前阵子": "while", "前一阵子": "while", "前一阵": "while", "前段时间": "while", "前些日子": "while",
    "之前": "before", "以前": "before", "早些时候": "before",
    "很久以前": "long_ago", "好久以前": "long_ago", "很早以前": "long_ago", "很久之前": "long_ago", "好久之前": "long_ago",
}  # fmt: skip


def _vague(cal: _Calendar, kind: str) -> TimeRange:
    today = cal.today
    if kind == "just_now":
        return TimeRange(cal.now - timedelta(hours=2), cal.now + timedelta(minutes=1), "hour", True)
    if kind == "few_days":
        return cal.span(cal.at(today - timedelta(days=7)), cal.at(today))
    if kind == "recent":
        return cal.span(cal.at(today - timedelta(days=14)), cal.now + timedelta(minutes=1))
    if kind == "while":
        return cal.span(cal.at(today - timedelta(weeks=8)), cal.at(today - timedelta(weeks=1)))
    if kind == "long_ago":
        return cal.span(cal.at(date(max(today.year - 30, 1), 1, 1)), cal.at(today - timedelta(days=90)))
    return cal.span(cal.at(date(max(today.year - 30, 1), 1, 1)), cal.now)


@_rule("|".join(sorted(_VAGUE_CN, key=len, reverse=True)))
def _cn_vague(cal: _Calendar, m: re.Match[str]) -> TimeRange | None:
    return _vague(cal, _VAGUE_CN[m.group(0)])


@_rule(r"(?<!\d)(?P<y>\d{4})[-/.](?P<m>\d{1,2})[-/.](?P<d>\d{1,2})(?![\d.:/-])")
def _iso_date(cal: _Calendar, m: re.Match[str]) -> TimeRange | None:
    try:
        return cal.days(date(int(m["y"]), int(m["m"]), int(m["d"])), 1)
    except ValueError:
        return None


# ---- English

_W = r"(?<![A-Za-z])"
_E = r"(?![A-Za-z])"
_EN_DAY_WORDS = {
    "today": 0,
    "yesterday": -1,
    "tomorrow": 1,
    "the day before yesterday": -2,
    "the day after tomorrow": 2,
}


@_rule(
    rf"{_W}(?P<day>the day before yesterday|the day after tomorrow|today|yesterday|tomorrow)"
    rf"(?:\s+(?P<part>{_EN_PART}))?{_E}",
    re.IGNORECASE,
)
def _en_day(cal: _Calendar, m: re.Match[str]) -> TimeRange | None:
    day = cal.today + timedelta(days=_EN_DAY_WORDS[m["day"].lower()])
    return _with_part(cal, day, m["part"])


@_rule(
    rf"{_W}(?:(?P<this>this|earlier this|later this)\s+(?P<part>morning|afternoon|evening)|(?P<tonight>tonight)|(?P<last>last night)){_E}",
    re.IGNORECASE,
)
def _en_part(cal: _Calendar, m: re.Match[str]) -> TimeRange | None:
    if m["tonight"]:
        return cal.part(cal.today, "evening")
    if m["last"]:
        return cal.part(cal.today - timedelta(days=1), "night")
    return cal.part(cal.today, m["part"].lower())


@_rule(rf"{_W}earlier today{_E}", re.IGNORECASE)
def _en_earlier_today(cal: _Calendar, m: re.Match[str]) -> TimeRange | None:
    return TimeRange(cal.at(cal.today), cal.now, "span")


_EN_REL = {
    "this": 0,
    "last": -1,
    "next": 1,
    "past": -1,
    "the past": -1,
    "previous": -1,
    "the previous": -1,
}


@_rule(
    rf"{_W}(?:(?P<rel>this|last|next|past|the past|previous|the previous)\s+)(?P<unit>week|weekend|month|year){_E}",
    re.IGNORECASE,
)
def _en_rel_unit(cal: _Calendar, m: re.Match[str]) -> TimeRange | None:
    offset = _EN_REL[m["rel"].lower()]
    unit = m["unit"].lower()
    if unit == "week":
        return cal.week(offset)
    if unit == "weekend":
        if offset == -1:
            saturday = cal.recent_weekday(5, strictly_before_today=False)
            if cal.today <= saturday + timedelta(days=1):  # we are inside a weekend: the previous one
                saturday -= timedelta(days=7)
            return cal.days(saturday, 2, "weekend")
        return cal.weekend_in_week(offset)
    if unit == "month":
        year, month = cal.month_offset(offset)
        return cal.month(year, month)
    return cal.year(cal.today.year + offset)


@_rule(rf"{_W}the\s+(?P<unit>week|month|year)\s+before\s+last{_E}", re.IGNORECASE)
def _en_before_last(cal: _Calendar, m: re.Match[str]) -> TimeRange | None:
    unit = m["unit"].lower()
    if unit == "week":
        return cal.week(-2)
    if unit == "month":
        year, month = cal.month_offset(-2)
        return cal.month(year, month)
    return cal.year(cal.today.year - 2)


@_rule(rf"{_W}earlier\s+this\s+(?P<unit>week|month|year){_E}", re.IGNORECASE)
def _en_earlier_this(cal: _Calendar, m: re.Match[str]) -> TimeRange | None:
    unit = m["unit"].lower()
    if unit == "week":
        first = cal.week_of(cal.today)
    elif unit == "month":
        first = cal.today.replace(day=1)
    else:
        first = cal.today.replace(month=1, day=1)
    return TimeRange(cal.at(first), cal.at(cal.today), "span")


@_rule(rf"{_W}(?:over|on|at)\s+the\s+weekend{_E}", re.IGNORECASE)
def _en_the_weekend(cal: _Calendar, m: re.Match[str]) -> TimeRange | None:
    offset = 0 if cal.today.weekday() >= 5 else -1
    return cal.weekend_in_week(offset)


_EN_WD = "|".join(_EN_WEEKDAYS)


@_rule(
    rf"{_W}(?:(?P<rel>last|this|next|on|on last)\s+)?(?P<wd>{_EN_WD})(?:\s+(?P<part>{_EN_PART}))?{_E}",
    re.IGNORECASE,
)
def _en_weekday(cal: _Calendar, m: re.Match[str]) -> TimeRange | None:
    weekday = _EN_WEEKDAYS.index(m["wd"].lower())
    rel = (m["rel"] or "").lower()
    if rel in ("last", "on last"):
        day = cal.recent_weekday(weekday, strictly_before_today=True)
    elif rel == "this":
        day = cal.weekday_in_week(0, weekday)
    elif rel == "next":
        day = cal.weekday_in_week(1, weekday)
    else:
        day = cal.recent_weekday(weekday, strictly_before_today=False)
    return _with_part(cal, day, m["part"])


_EN_COUNT = r"(?:\d{1,6}|a couple of|a couple|couple of|an|a|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|thirteen|fourteen|fifteen|sixteen|seventeen|eighteen|nineteen|twenty|thirty)"


@_rule(
    rf"{_W}(?P<n>{_EN_COUNT})\s+(?P<unit>minute|hour|day|week|month|year)s?\s+(?:ago|back|before){_E}",
    re.IGNORECASE,
)
def _en_ago(cal: _Calendar, m: re.Match[str]) -> TimeRange | None:
    raw = m["n"].lower()
    amount = int(raw) if raw.isdigit() else _EN_NUMBERS.get(raw)
    if amount is None or amount > 100_000:
        return None
    return cal.ago(amount, m["unit"].lower())


_VAGUE_EN = {
    "just now": "just_now", "a moment ago": "just_now", "a few minutes ago": "just_now",
    "a few days ago": "few_days", "a few days back": "few_days", "the other day": "few_days",
    "several days ago": "few_days", "a couple days ago": "few_days",
    "recently": "recent", "lately": "recent", "these days": "recent", "the past few days": "recent",
    "a while ago": "while", "a while back": "while", "some time ago": "while", "a few weeks ago": "while",
    "the other week": "while", "not long ago": "while",
    "a long time ago": "long_ago", "long ago": "long_ago", "ages ago": "long_ago", "way back": "long_ago",
    "previously": "before", "before": "before", "earlier": "before",
}  # fmt: skip
_VAGUE_EN_MATCHED = {k: v for k, v in _VAGUE_EN.items() if k not in ("before", "earlier")}


@_rule(
    _W + "(?:" + "|".join(sorted(map(re.escape, _VAGUE_EN_MATCHED), key=len, reverse=True)) + ")" + _E,
    re.IGNORECASE,
)
def _en_vague(cal: _Calendar, m: re.Match[str]) -> TimeRange | None:
    return _vague(cal, _VAGUE_EN[m.group(0).lower()])


_EN_MONTH = "|".join(sorted(_EN_MONTHS, key=len, reverse=True))


def _en_month_number(name: str) -> int | None:
    return _EN_MONTHS.get(name.lower().rstrip("."))


def _may_ok(name: str) -> bool:
    # "may" is a verb; only the capitalised month counts
    return name.lower() != "may" or name[0] == "M"


@_rule(
    rf"{_W}(?:on\s+)?(?:(?P<mon>{_EN_MONTH})\.?\s+(?P<d>\d{{1,2}})(?:st|nd|rd|th)?|(?P<d2>\d{{1,2}})(?:st|nd|rd|th)?\s+(?:of\s+)?(?P<mon2>{_EN_MONTH}))"
    rf"(?:,?\s+(?P<y>\d{{4}}))?(?![A-Za-z\d])",
    re.IGNORECASE,
)
def _en_date(cal: _Calendar, m: re.Match[str]) -> TimeRange | None:
    name = m["mon"] or m["mon2"]
    if not _may_ok(name):
        return None
    month = _en_month_number(name)
    day = int(m["d"] or m["d2"])
    if month is None:
        return None
    if m["y"]:
        try:
            return cal.days(date(int(m["y"]), month, day), 1)
        except ValueError:
            return None
    found = cal.recent_date(month, day)
    return cal.days(found, 1) if found else None


@_rule(
    rf"{_W}(?:(?P<prep>in|during|since|from|back in|last|this)\s+)?(?:(?P<part>early|mid|late|the end of|the beginning of|the start of|the middle of)[\s-]+)?"
    rf"(?P<mon>{_EN_MONTH})(?:\s+(?P<y>\d{{4}}))?{_E}",
    re.IGNORECASE,
)
def _en_month(cal: _Calendar, m: re.Match[str]) -> TimeRange | None:
    name = m["mon"]
    if not m["prep"] and not m["y"] and not m["part"]:
        return None  # a bare month name ("March on", "may I") is not a time
    if not _may_ok(name) or (name.lower() == "mar" and name[0] == "m"):
        return None
    month = _en_month_number(name)
    if month is None:
        return None
    prep = (m["prep"] or "").lower()
    if m["y"]:
        year = int(m["y"])
    elif prep == "last":
        year = cal.today.year - 1 if month >= cal.today.month else cal.today.year
    elif prep == "this":
        year = cal.today.year
    else:
        year = cal.recent_month(month)
    part = (m["part"] or "").lower()
    part_key = {"early": "early", "the beginning of": "early", "the start of": "early", "mid": "mid",
                "the middle of": "mid", "late": "late", "the end of": "late"}.get(part)  # fmt: skip
    return cal.month(year, month, part_key)


@_rule(rf"{_W}(?:in|during|since|back in)\s+(?P<y>(?:19|20)\d{{2}})(?![\d:])", re.IGNORECASE)
def _en_year(cal: _Calendar, m: re.Match[str]) -> TimeRange | None:
    return cal.year(int(m["y"]))


@_rule(
    rf"{_W}(?P<part>early|mid|late|the end of|the beginning of)[\s-]+(?P<y>(?:19|20)\d{{2}}|this year|last year)",
    re.IGNORECASE,
)
def _en_year_part(cal: _Calendar, m: re.Match[str]) -> TimeRange | None:
    raw = m["y"].lower()
    year = cal.today.year if raw == "this year" else cal.today.year - 1 if raw == "last year" else int(raw)
    part = {
        "early": "early",
        "the beginning of": "early",
        "mid": "mid",
        "late": "late",
        "the end of": "late",
    }[m["part"].lower()]
    return cal.year(year, part)


# ---- other absolute formats: dateparser as a fallback (numeric and foreign month names)


def _dateparser_day(text: str, order: str | None) -> date | None:
    try:
        import dateparser
    except ImportError:  # pragma: no cover - dateparser is a dependency
        return None
    settings: dict[str, object] = {"STRICT_PARSING": True, "RETURN_AS_TIMEZONE_AWARE": False}
    if order:
        settings["DATE_ORDER"] = order
    try:
        parsed = dateparser.parse(text, settings=settings)
    except (ValueError, OverflowError, TypeError):
        return None
    return parsed.date() if parsed else None


@_rule(r"(?<![\d/.-])(?P<a>\d{1,2})(?P<sep>[/.])(?P<b>\d{1,2})(?P=sep)(?P<y>\d{4})(?![\d/.-])")
def _numeric_date(cal: _Calendar, m: re.Match[str]) -> TimeRange | None:
    # 05/03/2026 is read month-first (as in the US); 5.3.2026 day-first (as in Europe)
    day = _dateparser_day(m.group(0), "MDY" if m["sep"] == "/" else "DMY")
    return cal.days(day, 1) if day else None


@_rule(r"(?<![\w])(?P<d>\d{1,2})\.?\s+(?P<mon>[^\W\d_]{3,12})\.?,?\s+(?P<y>\d{4})(?![\w])")
def _foreign_date(cal: _Calendar, m: re.Match[str]) -> TimeRange | None:
    if m["mon"].lower().rstrip(".") in _EN_MONTHS:
        return None  # English month names have their own rule
    day = _dateparser_day(m.group(0), "DMY")
    return cal.days(day, 1) if day else None


# ------------------------------------------------------------------------ resolver

_LEAD_EN = re.compile(r"(?:\b(?:on|in|at|from|during|since|over|about|around|of)\s+)$", re.IGNORECASE)
_TRAIL_CN = re.compile(r"^(?:的时候|时候|那会儿|的)")


@dataclass(frozen=True)
class _Found:
    start: int
    end: int
    range: TimeRange


class TimeResolver:
    """Finds and resolves time expressions. ``now`` is always passed in."""

    def __init__(self, zone: tzinfo, week_start: str = "monday") -> None:
        self.zone = zone
        self.week_start = 6 if week_start == "sunday" else 0

    def _find(self, text: str, now: datetime) -> _Found | None:
        if not text or len(text) > MAX_TEXT:
            text = text[:MAX_TEXT] if text else text
            if not text:
                return None
        cal = _Calendar(now, self.zone, self.week_start)
        candidates: list[_Found] = []
        for pattern, handler in _RULES:
            for match in pattern.finditer(text):
                if match.end() == match.start():
                    continue
                try:
                    resolved = handler(cal, match)
                except (ValueError, OverflowError):
                    resolved = None
                if resolved is not None:
                    candidates.append(_Found(match.start(), match.end(), resolved))
        if not candidates:
            return None
        best = min(candidates, key=lambda f: (f.start, -(f.end - f.start)))
        longest = max(
            (c for c in candidates if c.start < best.end and c.end > best.start),
            key=lambda f: (f.end - f.start, -f.start),
        )
        return _Found(
            longest.start,
            longest.end,
            _replace_phrase(longest.range, text[longest.start : longest.end]),
        )

    def parse(self, text: str, now: datetime) -> TimeRange | None:
        """The first time expression in ``text`` as a range, or None."""
        found = self._find(text, now)
        return found.range if found else None

    def split_query(self, text: str, now: datetime) -> tuple[str, TimeRange | None]:
        """``text`` without its time expression, and that expression's range."""
        found = self._find(text, now)
        if found is None:
            return text.strip(), None
        before, after = text[: found.start], text[found.end :]
        before = _LEAD_EN.sub("", before)
        after = _TRAIL_CN.sub("", after)
        joined = (before.rstrip() + " " + after.lstrip()).strip() if before and after else (before + after)
        cleaned = re.sub(r"\s{2,}", " ", joined).strip(" ,，、")
        cleaned = re.sub(r"\s+([?？!！.,，。])", r"\1", cleaned)
        return cleaned, found.range


def _replace_phrase(found: TimeRange, phrase: str) -> TimeRange:
    return TimeRange(found.start, found.end, found.granularity, found.fuzzy, phrase)

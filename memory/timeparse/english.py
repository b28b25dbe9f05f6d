"""English rules: days, parts of a day, weeks and weekdays, months, years and their parts."""

from __future__ import annotations

import re
from datetime import date, timedelta

from huichat.memory.timeparse.days import Calendar, part_daytime
from huichat.memory.timeparse.ranges import TimeRange
from huichat.memory.timeparse.rules import DIGITS, Piece, lead, lead_length, preceded_by, rule

__all__ = ["EN_MONTH", "EN_MONTHS", "NOCASE", "E", "W", "en_month_number", "may_be_month"]

W = r"(?<![A-Za-z])"
"""Start of an English word."""
E = r"(?![A-Za-z])"
"""End of an English word."""
NOCASE = re.IGNORECASE

EN_WEEKDAYS = ["monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"]
EN_MONTHS = {
    "january": 1, "jan": 1, "february": 2, "feb": 2, "march": 3, "mar": 3, "april": 4, "apr": 4,
    "may": 5, "june": 6, "jun": 6, "july": 7, "jul": 7, "august": 8, "aug": 8, "september": 9,
    "sep": 9, "sept": 9, "october": 10, "oct": 10, "november": 11, "nov": 11, "december": 12, "dec": 12,
}  # fmt: skip
EN_MONTH = "|".join(sorted(EN_MONTHS, key=len, reverse=True))
_PART_KEYS = {"early": (1, 10), "beginning": (1, 10), "start": (1, 10), "mid": (11, 20), "middle": (11, 20),
              "late": (21, 31), "end": (21, 31)}  # fmt: skip
_YEAR_PART_KEYS = {"early": (1, 2), "beginning": (1, 2), "start": (1, 2), "mid": (5, 8), "middle": (5, 8),
                   "late": (11, 12), "end": (11, 12), "first half": (1, 6), "second half": (7, 12)}  # fmt: skip
_REL = {"this": 0, "last": -1, "next": 1, "previous": -1, "the previous": -1, "the next": 1, "the following": 1}


def en_month_number(name: str) -> int | None:
    """January/jan/Jan. → 1."""
    return EN_MONTHS.get(name.lower().rstrip("."))


def may_be_month(name: str) -> bool:
    """Whether ``name`` is a month: "may" and "mar" are words, only their capitalised forms count."""
    return name.lower() not in ("may", "mar") or name[0] == "M"


# ---- days and parts of a day

_DAYS = {"today": 0, "yesterday": -1, "tomorrow": 1, "the day before yesterday": -2, "day before yesterday": -2,
         "the day after tomorrow": 2, "day after tomorrow": 2}  # fmt: skip


@rule(
    rf"{W}(?:the day before yesterday|day before yesterday|the day after tomorrow|day after tomorrow|today|yesterday|tomorrow){E}",
    NOCASE,
    needs=["today", "yesterday", "tomorrow"],
)
def _day(cal: Calendar, m: re.Match[str]) -> TimeRange:
    return cal.days(cal.today + timedelta(days=_DAYS[" ".join(m.group(0).lower().split())]), 1)


@rule(
    rf"{W}(?:(?P<this>this|earlier this|later this)\s+(?P<part>morning|afternoon|evening)|(?P<tonight>tonight)|"
    rf"(?P<last>last night)){E}",
    NOCASE,
    needs=["morning", "afternoon", "evening", "tonight", "night"],
)
def _this_part(cal: Calendar, m: re.Match[str]) -> Piece:
    if m["tonight"]:
        day, part = cal.today, "evening"
    elif m["last"]:
        day, part = cal.today - timedelta(days=1), "night"
    else:
        day, part = cal.today, m["part"].lower()
    daytime = part_daytime(part)
    return Piece(cal.on(day, daytime), day=day, daytime=daytime)


_PART_LEAD = re.compile(r"(?<![A-Za-z])(?P<in>in the|at)\s+$", re.IGNORECASE)


@rule(
    rf"{W}(?P<part>morning|afternoon|evening|night|noon|midday|midnight){E}",
    NOCASE,
    needs=["morning", "afternoon", "evening", "night", "noon", "midday", "midnight"],
)
def _part(cal: Calendar, m: re.Match[str]) -> Piece | None:
    part = {"midday": "noon"}.get(m["part"].lower(), m["part"].lower())
    qualifier = lead(m, _PART_LEAD)
    if qualifier and qualifier["in"].lower() == "at" and part not in ("night", "noon", "midnight"):
        qualifier = None
    daytime = part_daytime(part)
    # "in the morning" stands alone (this morning); "morning" needs a day ("Monday morning")
    return Piece(cal.on(cal.today, daytime), daytime=daytime, bare=not qualifier, lead=lead_length(m, qualifier))


@rule(rf"{W}earlier today{E}", NOCASE, needs=["earlier"])
def _earlier_today(cal: Calendar, m: re.Match[str]) -> TimeRange:
    return TimeRange(cal.at(cal.today), cal.until_now, "span")


# ---- weeks, weekends, weekdays


@rule(
    rf"{W}(?P<rel>this|last|next|previous|the previous|the next|the following)\s+(?P<unit>week|weekend|month|year){E}",
    NOCASE,
    needs=["week", "weekend", "month", "year"],
)
def _rel_unit(cal: Calendar, m: re.Match[str]) -> TimeRange | None:
    offset = _REL[" ".join(m["rel"].lower().split())]
    unit = m["unit"].lower()
    if unit == "week":
        return cal.week(offset)
    if unit == "weekend":
        return cal.weekend(offset)
    if unit == "month":
        return cal.month(*cal.month_offset(offset))
    return cal.year(cal.today.year + offset)


@rule(rf"{W}the\s+(?P<unit>week|weekend|month|year)\s+before\s+last{E}", NOCASE, needs=["before"])
def _before_last(cal: Calendar, m: re.Match[str]) -> TimeRange | None:
    unit = m["unit"].lower()
    if unit == "week":
        return cal.week(-2)
    if unit == "weekend":
        return cal.weekend(-2)
    if unit == "month":
        return cal.month(*cal.month_offset(-2))
    return cal.year(cal.today.year - 2)


@rule(rf"{W}earlier\s+this\s+(?P<unit>week|month|year){E}", NOCASE, needs=["earlier"])
def _earlier_this(cal: Calendar, m: re.Match[str]) -> TimeRange:
    unit = m["unit"].lower()
    if unit == "week":
        first = cal.week_of(cal.today)
    elif unit == "month":
        first = cal.today.replace(day=1)
    else:
        first = cal.today.replace(month=1, day=1)
    return TimeRange(cal.at(first), cal.at(cal.today), "span")


@rule(rf"{W}(?:(?:over|on|at|during)\s+the\s+weekend|this\s+past\s+weekend){E}", NOCASE, needs=["weekend"])
def _the_weekend(cal: Calendar, m: re.Match[str]) -> TimeRange:
    return cal.recent_weekend()


_EN_WD = "|".join(EN_WEEKDAYS)


_WEEKDAY_REL = re.compile(r"(?<![A-Za-z])(?P<rel>this past|on last|last|this|next|on)\s+$", re.IGNORECASE)


@rule(rf"{W}(?P<wd>{_EN_WD}){E}", NOCASE, repeat=7, needs=EN_WEEKDAYS)
def _weekday(cal: Calendar, m: re.Match[str]) -> Piece:
    qualifier = lead(m, _WEEKDAY_REL)
    weekday = EN_WEEKDAYS.index(m["wd"].lower())
    rel = " ".join(qualifier["rel"].lower().split()) if qualifier else ""
    if rel in ("last", "on last", "this past"):
        day = cal.recent_weekday(weekday, strictly_before_today=True)
    elif rel == "this":
        day = cal.weekday_in_week(0, weekday)
    elif rel == "next":
        day = cal.weekday_in_week(1, weekday)
    else:
        day = cal.recent_weekday(weekday, strictly_before_today=False)
    return Piece(cal.days(day, 1), lead=lead_length(m, qualifier) if rel != "on" else 0)


# ---- dates, months, years


@rule(
    rf"{W}(?:(?P<mon>{EN_MONTH})\.?\s+(?P<d>\d{{1,2}})(?:st|nd|rd|th)?|(?P<d2>\d{{1,2}})(?:st|nd|rd|th)?\s+(?:of\s+)?(?P<mon2>{EN_MONTH}))"
    rf"(?:,?\s+(?P<y>\d{{4}}))?(?![A-Za-z\d])",
    NOCASE,
    absolute=True,
    repeat=365,
    needs=EN_MONTHS,
)
def _date(cal: Calendar, m: re.Match[str]) -> TimeRange | None:
    name = m["mon"] or m["mon2"]
    month = en_month_number(name)
    if month is None or not may_be_month(name):
        return None
    day = int(m["d"] or m["d2"])
    if m["y"]:
        return cal.days(date(int(m["y"]), month, day), 1)
    found = cal.recent_date(month, day)
    return cal.days(found, 1) if found else None


@rule(
    rf"{W}(?P<mon>{EN_MONTH})\.?\s+(?P<d1>\d{{1,2}})(?:st|nd|rd|th)?\s*(?:-|–|to|through|until|till)\s*(?P<d2>\d{{1,2}})(?:st|nd|rd|th)?"
    rf"(?:,?\s+(?P<y>\d{{4}}))?(?![A-Za-z\d:])",
    NOCASE,
    absolute=True,
    needs=EN_MONTHS,
)
def _date_span(cal: Calendar, m: re.Match[str]) -> TimeRange | None:
    """March 3 to 10, March 3–10: the second day inherits the month."""
    month, first, last = en_month_number(m["mon"]), int(m["d1"]), int(m["d2"])
    if month is None or not may_be_month(m["mon"]) or not 1 <= first < last <= 31:
        return None
    start = date(int(m["y"]), month, first) if m["y"] else cal.recent_date(month, first)
    if start is None:
        return None
    return cal.days(start, (date(start.year, month, last) - start).days + 1, "span")


_AFTER_MODIFIER = re.compile(r"(?<![A-Za-z])(?:before|after|since|until|till)\s+$", re.IGNORECASE)
_PART_WORDS = (
    r"early|mid|late|the end of|end of|the beginning of|beginning of|the start of|start of|the middle of|middle of"
)


def _part_key(text: str | None) -> str | None:
    if not text:
        return None
    words = text.lower().replace("the ", "").replace(" of", "").split()
    return words[0] if words else None


_MONTH_LEAD = re.compile(
    rf"(?<![A-Za-z])(?:(?P<prep>in|during|from|back in|last|this|next)\s+)?(?:(?P<part>{_PART_WORDS})[\s-]+)?$",
    re.IGNORECASE,
)


@rule(
    rf"{W}(?P<mon>{EN_MONTH})(?:\s+(?P<y>\d{{4}}))?{E}(?!\.?\s*\d)", NOCASE, absolute=True, repeat=365, needs=EN_MONTHS
)
def _month(cal: Calendar, m: re.Match[str]) -> Piece | None:
    name = m["mon"]
    qualifier = lead(m, _MONTH_LEAD)
    prep = (qualifier["prep"] or "").lower() if qualifier else ""
    part = qualifier["part"] if qualifier else None
    if not qualifier and not m["y"] and not _AFTER_MODIFIER.search(m.string, max(0, m.start() - 12), m.start()):
        return None  # a bare month name ("March on", "may I") is not a time; "since March" is
    month = en_month_number(name)
    if month is None or not may_be_month(name):
        return None
    if m["y"]:
        year = int(m["y"])
    elif prep == "last":
        year = cal.today.year - 1 if month >= cal.today.month else cal.today.year
    elif prep == "next":
        year = cal.today.year + 1 if month <= cal.today.month else cal.today.year
    elif prep == "this":
        year = cal.today.year
    else:
        year = cal.recent_month(month)
    key = _part_key(part)
    found = cal.month(year, month, _PART_KEYS[key] if key else None)
    return Piece(found, lead=lead_length(m, qualifier)) if found else None


_YEAR_LEAD = re.compile(r"(?<![A-Za-z])(?:(?P<in>in|during|back in)|before|after|since|until|till)\s+$", re.IGNORECASE)


@rule(r"(?P<y>1\d\d\d|20\d\d)(?![\d:])", absolute=True, needs=DIGITS)
def _year(cal: Calendar, m: re.Match[str]) -> Piece | None:
    """in 2025 (and the year of "before 2025", "since 2020", whose word the composer reads)."""
    qualifier = lead(m, _YEAR_LEAD)
    if qualifier is None or preceded_by(m, DIGITS):
        return None
    found = cal.year(int(m["y"]))
    return Piece(found, lead=lead_length(m, qualifier) if qualifier["in"] else 0) if found else None


@rule(
    rf"{W}(?:(?P<part>{_PART_WORDS}|the first half of|first half of|the second half of|second half of)[\s-]+)"
    rf"(?:(?P<y>(?:1[0-9]|20)\d{{2}})|(?P<rel>this|last|next|the)\s+(?P<unit>year|month)){E}",
    NOCASE,
    needs=["early", "mid", "late", "end", "beginning", "start", "middle", "half"],
)
def _unit_part(cal: Calendar, m: re.Match[str]) -> TimeRange | None:
    """early 2025, the end of last month, mid this year, the first half of last year."""
    words = m["part"].lower().replace("the ", "").replace(" of", "").strip()
    key = words if words in _YEAR_PART_KEYS else words.split()[0]
    if m["y"]:
        return cal.year(int(m["y"]), _YEAR_PART_KEYS[key])
    offset = _REL.get(m["rel"].lower(), 0)
    if m["unit"].lower() == "month":
        if key not in _PART_KEYS:
            return None
        return cal.month(*cal.month_offset(offset), _PART_KEYS[key])
    return cal.year(cal.today.year + offset, _YEAR_PART_KEYS[key])

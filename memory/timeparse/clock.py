"""Clock times and parts of the day: 下午三点, 晚上八点半, 早上7:30, "at 3pm", "around 8 in the evening".

A clock time is a window on its day: from 15 minutes before to an hour after (a conversation
"at three" starts around three and goes on), or ±1 hour when said approximately (左右, 前后,
大概, "around", "about"). "三点多" is the hour after three. A bare hour ("三点", "at 3")
is a time only when joined to a day or a part of the day (昨天三点, "yesterday at 3"), or
in English when it ends the clause ("what did we say at 3?"): 三点 alone is as often
"three points" as three o'clock.
"""

from __future__ import annotations

import re

from huichat.memory.timeparse.days import Calendar, DayTime, clock_daytime, part_daytime
from huichat.memory.timeparse.english import NOCASE, E, W
from huichat.memory.timeparse.numbers import cn_number, en_number
from huichat.memory.timeparse.rules import Piece, preceded_by, rule

__all__: list[str] = []

_CN_PART = "凌晨|早上|早晨|清晨|一早|上午|中午|午后|下午|傍晚|晚上|夜里|深夜|半夜|午夜"
_CN_HOUR = r"\d{1,2}|[零〇一二两三四五六七八九十]{1,3}"
_CN_MINUTE = r"\d{1,2}|[零〇一二三四五六七八九十]{1,3}"
_CN_DIGITS = "0123456789零〇一二两三四五六七八九十百千万第"


def _piece(cal: Calendar, daytime: DayTime | None, bare: bool = False) -> Piece | None:
    if daytime is None:
        return None
    return Piece(cal.on(cal.today, daytime), daytime=daytime, bare=bare)


def _span(daytime: DayTime | None) -> DayTime | None:
    """The hour that follows the written time (三点多)."""
    if daytime is None or daytime.at is None:
        return None
    return DayTime(daytime.at, daytime.at + 60, daytime.part, daytime.hour, daytime.minute, daytime.at)


@rule(
    rf"(?P<h>{_CN_HOUR})(?:点|(?<=\d)时)(?:(?P<half>半)|(?P<quarter>一刻|三刻)|(?P<m>{_CN_MINUTE})分?|(?P<whole>整|钟))?"
    r"(?P<approx>左右|前后|多)?",
    needs="点时",
)
def _cn_clock(cal: Calendar, m: re.Match[str]) -> Piece | None:
    """三点, 八点半, 十点一刻, 三点左右, 三点多 (a part of day before it is joined by the composer)."""
    hour = cn_number(m["h"])
    if hour is None or preceded_by(m, _CN_DIGITS):
        return None
    minute = 30 if m["half"] else {"一刻": 15, "三刻": 45}.get(m["quarter"] or "", 0)
    if m["m"]:
        minute = cn_number(m["m"]) or 0
    daytime = clock_daytime(hour, minute, None, m["approx"] in ("左右", "前后"))
    if m["approx"] == "多":
        daytime = _span(daytime)
    said_as_time = m["half"] or m["quarter"] or m["m"] or m["whole"] or m["approx"]
    return _piece(cal, daytime, bare=not said_as_time)


@rule(r"(?P<h>[01]?\d|2[0-4])[:：](?P<m>[0-5]\d)(?::[0-5]\d)?(?![\d:])(?P<approx>左右|前后)?", needs=":：")
def _colon_clock(cal: Calendar, m: re.Match[str]) -> Piece | None:
    """15:30, 7:30 (早上 before it is joined by the composer)."""
    if preceded_by(m, "0123456789:.-/"):
        return None
    return _piece(cal, clock_daytime(int(m["h"]), int(m["m"]), None, bool(m["approx"])))


@rule(
    rf"(?<!上)(?P<part>{_CN_PART})(?![好安茶饭餐])", needs="凌早清一上中午下傍晚夜深半"
)  # not 上下午 (morning and afternoon)
def _cn_part(cal: Calendar, m: re.Match[str]) -> Piece:
    return _piece_part(cal, m["part"])


def _piece_part(cal: Calendar, part: str) -> Piece:
    daytime = part_daytime(part)
    return Piece(cal.on(cal.today, daytime), daytime=daytime)


# ---- English

_HOUR_WORDS = ["one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven", "twelve"]
_EN_HOUR = r"\d{1,2}|" + "|".join(_HOUR_WORDS)


@rule(
    rf"(?P<h>{_EN_HOUR})(?::(?P<m>[0-5]\d))?\s*(?:(?P<ampm>[ap])\.?m\.?(?![A-Za-z])|(?P<oclock>o'?\s?clock){E}"
    rf"|\s+(?:in\s+the\s+(?P<part>morning|afternoon|evening)|at\s+(?P<night>night)|(?P<tonight>tonight)){E})",
    NOCASE,
    needs=["am", "pm", "m", "clock", "morning", "afternoon", "evening", "night", "tonight"],
)
def _en_clock(cal: Calendar, m: re.Match[str]) -> Piece | None:
    """3pm, 8:30 a.m., 3 o'clock, 8 in the evening ("around" before it is read by the composer)."""
    hour = en_number(m["h"])
    if hour is None or preceded_by(m, "0123456789:ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"):
        return None
    part = m["part"] or ("pm" if (m["ampm"] or "").lower() == "p" else "am" if m["ampm"] else None)
    if m["night"] or m["tonight"]:
        part = "night" if m["night"] else "evening"
    if m["ampm"] and not 1 <= hour <= 12:
        return None
    return _piece(cal, clock_daytime(hour, int(m["m"] or 0), part.lower() if part else None))


@rule(
    rf"{W}(?P<w>at|around|about)\s+(?P<h>\d{{1,2}})(?::(?P<m>[0-5]\d))?(?![\d:%]|\s*(?:[ap]\.?m|o'?\s?clock|in\s+the|at\s+night|tonight))"
    r"(?P<end>(?=\s*(?:[?.!,;]|$)))?",
    NOCASE,
    needs=["at", "around", "about"],
)
def _en_bare_clock(cal: Calendar, m: re.Match[str]) -> Piece | None:
    """A bare hour ("at 3", "around 8:30"): a time when it ends the clause, else only joined to a day."""
    around = m["w"].lower() != "at"
    daytime = clock_daytime(int(m["h"]), int(m["m"] or 0), None, around)
    return _piece(cal, daytime, bare=not (m["end"] is not None or m["m"]))


@rule(
    rf"{W}(?:at\s+)?(?P<half>half|(?:a\s+)?quarter)\s+(?P<dir>past|to)\s+(?P<h>{_EN_HOUR}){E}",
    NOCASE,
    needs=["half", "quarter"],
)
def _en_past_to(cal: Calendar, m: re.Match[str]) -> Piece | None:
    hour = en_number(m["h"])
    if hour is None:
        return None
    offset = 30 if m["half"].lower() == "half" else 15
    minutes = hour * 60 + (offset if m["dir"].lower() == "past" else -offset)
    return _piece(cal, clock_daytime(minutes // 60, minutes % 60, None))

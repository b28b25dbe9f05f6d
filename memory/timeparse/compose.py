"""From rule matches to what was meant: choose pieces, join them, read spans and modifiers.

1. Every rule runs over the text; overlapping matches are settled longest first.
2. A day and a time of day next to each other are one moment: 上周三 + 下午 + 三点,
   "yesterday" + "at 3pm", "3pm" + "on Monday"; a bare hour takes the part of day before it
   (昨晚 + 八点 = 20:00).
3. Two times joined by 到/至/-/–/~/../to/through/until (or "between … and …") are a span
   from the start of the first to the end of the second: 3月3日到3月10日, 上周三到这周一.
   When the end would come before the start and the first is written without its week or
   year (从周五到周一, "from Monday to Wednesday" said on a Tuesday), the first moves back
   a week or a year: the most recent whole occurrence.
4. Modifiers: X之前/以前/前, "before/prior to X" = any time before X (fuzzy, scanned from X
   backwards; "until X" includes X); X之后/以后/后, "after X" = from the end of X to now
   (or a while after X when X is still to come); X以来/至今/起/开始, 从/自从 X, "since X" =
   from the start of X to now; X前后/左右, "around X" = X widened by its own length (at most
   a week each side; a clock time ±1 hour).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from datetime import date, datetime, timedelta

from huichat.memory.timeparse.days import Calendar, DayTime
from huichat.memory.timeparse.ranges import TimeRange, checked
from huichat.memory.timeparse.rules import RULES, Piece, present, rule

__all__ = ["MAX_PIECES", "Found", "find_all"]

MAX_PIECES = 64
"""Rule matches examined per text (bounds the cost of a text full of numbers)."""


@dataclass(frozen=True)
class Found:
    """A time expression: where it is in the text and what it resolved to."""

    start: int
    end: int
    piece: Piece


@rule(
    r"现在|目前|此刻|如今|(?<![A-Za-z])(?:now|the present)(?![A-Za-z])",
    re.IGNORECASE,
    needs=["现", "目", "此", "如", "now", "present"],
)
def _now(cal: Calendar, m: re.Match[str]) -> Piece:
    """The end of a span (从上周三到现在, "from Monday until now"); alone it is no filter."""
    return Piece(TimeRange(cal.now, cal.until_now, "hour"), bare=True, kind="now")


def find_all(text: str, cal: Calendar) -> list[Found]:
    """Every time expression in ``text``, in order, none overlapping."""
    tokens = present(text)
    matches: list[Found] = []
    for item in RULES:
        if item.needs and item.needs.isdisjoint(tokens):
            continue
        for match in item.pattern.finditer(text):
            if match.end() == match.start():
                continue
            try:
                piece = item.piece(cal, match)
            except (ValueError, OverflowError):
                continue
            if piece is not None and checked(piece.range) is not None:
                matches.append(Found(match.start() - piece.lead, match.end(), piece))
            if len(matches) >= MAX_PIECES:
                break
        if len(matches) >= MAX_PIECES:
            break
    pieces = _modifiers(text, cal, _spans(text, cal, _join_times(text, cal, _choose(text, matches))))
    return [f for f in pieces if not f.piece.bare and checked(f.piece.range) is not None]


def _choose(text: str, matches: list[Found]) -> list[Found]:
    """The longest matches that do not overlap, in text order."""
    taken = bytearray(len(text))
    chosen: list[Found] = []
    for found in sorted(matches, key=lambda f: (f.start - f.end, f.start)):
        if any(taken[found.start : found.end]):
            continue
        taken[found.start : found.end] = b"\x01" * (found.end - found.start)
        chosen.append(found)
    return sorted(chosen, key=lambda f: f.start)


# ---- 2. a day and a time of day

_JOIN_GAP = re.compile(r"[\s,，]*(?:的|at|on|in the|of|(?P<about>around|about|大约|大概|约))?\s*", re.IGNORECASE)


def _join_times(text: str, cal: Calendar, items: list[Found]) -> list[Found]:
    out: list[Found] = []
    for found in items:
        gap = _JOIN_GAP.fullmatch(text, out[-1].end, found.start) if out else None
        if gap is not None:
            second = found.piece
            if gap["about"] and second.daytime is not None:
                second = replace(second, daytime=second.daytime.approximate())
            joined = _join(cal, out[-1].piece, second)
            if joined is not None:
                out[-1] = Found(out[-1].start, found.end, joined)
                continue
        out.append(found)
    return out


def _join(cal: Calendar, first: Piece, second: Piece) -> Piece | None:
    if first.kind or second.kind:
        return None
    if first.day is not None and first.daytime is None and second.daytime is not None and second.day is None:
        return _placed(cal, first.day, second.daytime, first)
    if second.day is not None and second.daytime is None and first.daytime is not None and first.day is None:
        return _placed(cal, second.day, first.daytime, second)  # "3pm yesterday"
    if (
        first.daytime is not None
        and first.daytime.hour is None
        and first.daytime.part is not None
        and second.daytime is not None
        and second.daytime.hour is not None
        and second.day is None
        and second.daytime.part is None
    ):  # 昨晚 + 八点, 下午 + 3:30
        return _placed(cal, first.day or cal.today, second.daytime.with_part(first.daytime.part), first)
    return None


def _placed(cal: Calendar, day: date, daytime: DayTime, like: Piece) -> Piece:
    return Piece(cal.on(day, daytime), day=day, daytime=daytime, repeat=like.repeat, absolute=like.absolute)


# ---- 3. spans

_CONNECTOR = re.compile(r"\s*(?:一直到|到|至|~|～|-|–|—|\.\.|to|through|thru|until|till|and)\s*", re.IGNORECASE)
_SPAN_START = re.compile(r"(?:从|自从|自|由|(?<![A-Za-z])(?:from|between))\s*$", re.IGNORECASE)


def _spans(text: str, cal: Calendar, items: list[Found]) -> list[Found]:
    out: list[Found] = []
    for found in items:
        if out and (gap := _CONNECTOR.fullmatch(text, out[-1].end, found.start)):
            first = out[-1]
            opened = _SPAN_START.search(text, max(0, first.start - 10), first.start)
            if gap.group(0).strip().lower() == "and" and not (opened and opened.group(0).lower().startswith("between")):
                out.append(found)
                continue
            span = _span(cal, first.piece, found.piece)
            if span is not None:
                out[-1] = Found(opened.start() if opened else first.start, found.end, span)
                continue
        out.append(found)
    return out


def _span(cal: Calendar, first: Piece, second: Piece) -> Piece | None:
    if first.bare or first.range.fuzzy or second.range.fuzzy:
        return None
    clocks = _clock_span(first, second)
    if clocks is not None:
        return Piece(cal.on(first.day or cal.today, clocks), day=first.day, daytime=clocks, absolute=first.absolute)
    if second.bare and second.kind != "now":
        return None
    a, b = first.range, second.range
    start = a.start
    if b.end <= start and first.repeat:
        start = _moved_back(start, first.repeat)
    if b.end <= start:
        return None
    return Piece(TimeRange(start, b.end, "span"), absolute=first.absolute and second.absolute)


def _clock_span(first: Piece, second: Piece) -> DayTime | None:
    """下午三点到五点: from three to five (the second hour read with the first one's part of day)."""
    opening, closing = first.daytime, second.daytime
    if opening is None or closing is None or opening.at is None or closing.at is None:
        return None
    if second.day is not None and second.day != first.day:
        return None
    if opening.part and not closing.part:
        closing = closing.with_part(opening.part)
    if closing.at is None:
        return None
    high = closing.at if closing.at > opening.at else closing.at + 1440
    return DayTime(opening.at, high, opening.part)


def _moved_back(moment: datetime, repeat: int) -> datetime:
    if repeat >= 365:
        return moment.replace(year=moment.year - 1)
    return moment - timedelta(days=repeat)


# ---- 4. modifiers

_SUFFIX = re.compile(
    r"\s*(?P<mod>之前|以前|之后|以后|以来|至今|开始|起(?![来床晚])|前后|左右|前(?![天几阵段些两一年夜晚端台面边排])|后(?![天年半来端台面边排续期]))"
)
_PREFIX = re.compile(
    r"(?:(?P<zh>自从|从|自|大约|大概|约)|(?<![A-Za-z])(?P<en>before|after|since|until|till|up to|prior to|around|about)\s+(?:the\s+)?)$",
    re.IGNORECASE,
)
_MEANING = {
    "之前": "before", "以前": "before", "前": "before", "before": "before", "prior to": "before",
    "until": "until", "till": "until", "up to": "until",
    "之后": "after", "以后": "after", "后": "after", "after": "after",
    "以来": "since", "至今": "since", "开始": "since", "起": "since", "since": "since", "自从": "since",
    "前后": "around", "左右": "around", "around": "around", "about": "around", "大约": "around", "大概": "around",
    "约": "around",
}  # fmt: skip


def _modifiers(text: str, cal: Calendar, items: list[Found]) -> list[Found]:
    out: list[Found] = []
    skip_until = -1
    for found in items:
        if found.start < skip_until:
            continue
        if found.piece.bare or found.piece.range.fuzzy:
            out.append(found)
            continue
        start, end, meaning = found.start, found.end, ""
        suffix = _SUFFIX.match(text, found.end)
        prefix = _PREFIX.search(text, max(0, found.start - 12), found.start)
        if suffix:
            meaning, end = _MEANING[suffix["mod"]], suffix.end()
            if prefix and prefix["zh"]:
                start = prefix.start()
        elif prefix and prefix["en"]:
            meaning, start = _MEANING[" ".join(prefix["en"].lower().split())], prefix.start()
        elif prefix and prefix["zh"] in ("自从", "大约", "大概", "约"):
            meaning, start = _MEANING[prefix["zh"]], prefix.start()
        try:
            modified = _modified(cal, found.piece, meaning) if meaning else None
        except OverflowError:  # "after" a time at the end of year 9999: nothing follows it
            continue
        if modified is None:
            out.append(found)
            continue
        out.append(Found(start, end, modified))
        skip_until = end
    return out


def _modified(cal: Calendar, piece: Piece, meaning: str) -> Piece | None:
    r, daytime = piece.range, piece.daytime
    at = cal.moment(piece.day or cal.today, daytime.at) if daytime and daytime.at is not None else None
    day_start = cal.at(piece.day or cal.today)
    if meaning in ("before", "until"):
        if at is not None:
            return Piece(TimeRange(day_start, at, "span"))
        end = r.end if meaning == "until" else r.start
        pad = min(max((r.end - r.start) * 2, timedelta(days=7)), timedelta(days=91))
        return Piece(TimeRange(cal.open_start(), end, "span", True, "", (max(cal.open_start(), end - pad), end)))
    if meaning in ("after", "since"):
        start = (at if at is not None else r.end) if meaning == "after" else r.start
        if at is not None:
            return Piece(TimeRange(start, day_start + timedelta(days=1), "span"))
        if start < cal.now:
            return Piece(TimeRange(start, cal.until_now, "span"))
        if meaning == "since":
            return None
        return Piece(TimeRange(start, start + max(r.end - r.start, timedelta(days=7)), "span"))
    if at is not None:
        return Piece(TimeRange(at - timedelta(hours=1), at + timedelta(hours=1), "hour"), day=piece.day)
    pad = min(max(r.end - r.start, timedelta(days=1)), timedelta(days=7))
    return Piece(replace(r, start=r.start - pad, end=r.end + pad, granularity="span"))

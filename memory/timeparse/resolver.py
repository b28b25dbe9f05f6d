"""The resolver: finds time expressions in a text and resolves them against a given ``now``."""

from __future__ import annotations

import re
from dataclasses import replace
from datetime import datetime, timedelta, tzinfo

from huichat.memory.timeparse.compose import Found, find_all
from huichat.memory.timeparse.days import Calendar
from huichat.memory.timeparse.numbers import normalise
from huichat.memory.timeparse.query import QueryTime, classify
from huichat.memory.timeparse.ranges import OPEN_START_YEAR, TimeRange

__all__ = ["MAX_EVENTS", "MAX_QUERY", "MAX_TEXT", "TimeResolver"]

MAX_QUERY = 1000
"""Characters of a query examined for its time phrase; the rest is not read (bounds the cost)."""
MAX_TEXT = 2000
"""Characters of a stored turn examined for event times."""
MAX_EVENTS = 8
"""Event ranges kept per turn."""
_EVENT_SPAN = timedelta(days=400)
"""An event range longer than this (since 2020, before 2025) says little about when: skipped."""
_EVENT_FOCUS = timedelta(days=93)
"""A vague phrase names an event time only when its likely stretch is this short."""

_LEAD_EN = re.compile(r"\b(?:(?:on|in|at|from|during|since|over|about|around|of|for)\s+)?(?:the\s+)?$", re.IGNORECASE)
_TRAIL_CN = re.compile(r"^(?:的时候|时候|那会儿|那天|期间|的)")


class TimeResolver:
    """Finds and resolves time expressions. ``now`` is always passed in, never read from the clock."""

    def __init__(self, zone: tzinfo, week_start: str = "monday") -> None:
        self.zone = zone
        self.week_start = 6 if week_start == "sunday" else 0

    def _found(self, text: str, now: datetime, limit: int = MAX_QUERY) -> list[Found]:
        if not text:
            return []
        cal = Calendar(now, self.zone, self.week_start)
        original = text[:limit]
        return [
            Found(f.start, f.end, replace(f.piece, range=f.piece.range.named(original[f.start : f.end])))
            for f in find_all(normalise(original), cal)
        ]

    def parse(self, text: str, now: datetime) -> TimeRange | None:
        """The first time expression in ``text`` as a range, or None."""
        found = self._found(text, now)
        return found[0].piece.range if found else None

    def read_query(self, text: str, now: datetime) -> QueryTime:
        """The query's first time phrase, the keywords, and whether the phrase constrains the search."""
        found = self._found(text, now)
        if not found:
            return QueryTime(text.strip(), None, "none")
        first = found[0]
        rest = _without(text, first.start, first.end)
        role, reason = classify(rest[:MAX_QUERY], first.piece)
        keywords = text.strip() if role == "content" else rest
        return QueryTime(keywords, first.piece.range, role, reason)

    def split_query(self, text: str, now: datetime) -> tuple[str, TimeRange | None]:
        """The keywords of ``text`` and the range that filters the search (None unless a constraint).

        The short form of ``read_query``: a hint (a calendar date beside other words) or a time
        phrase that is part of the content filters nothing.
        """
        query = self.read_query(text, now)
        return query.keywords, query.filter

    def event_ranges(self, text: str, said_at: datetime, limit: int = MAX_EVENTS) -> tuple[TimeRange, ...]:
        """Every time a stored turn talks about, resolved against when it was said.

        Future times are kept (下个月去成都 → next month). Vague phrases give their likely
        stretch (前段时间 → 1–8 weeks before); those that would cover nearly everything
        (很久以前, 之前, before 2025) and spans over ~13 months are skipped. So are times
        around the moment of saying (今天, 这周, "this month"): the turn is placed by when it
        was said, and a whole day would make a morning's "今天天气不错" match that afternoon.
        At most ``limit``, in text order, without repeats.
        """
        ranges: list[TimeRange] = []
        for found in self._found(text, said_at, MAX_TEXT):
            event = _event(found.piece.range)
            if event is not None and event.start <= said_at < event.end:
                continue
            if event is not None and event not in ranges:
                ranges.append(event)
            if len(ranges) >= limit:
                break
        return tuple(ranges)


def _event(found: TimeRange) -> TimeRange | None:
    if found.start.year <= OPEN_START_YEAR:
        return None
    if found.fuzzy:
        if found.focus is None or found.focus[1] - found.focus[0] > _EVENT_FOCUS:
            return None if found.end - found.start > _EVENT_FOCUS else found
        return TimeRange(found.focus[0], found.focus[1], "span", True, found.phrase)
    return None if found.end - found.start > _EVENT_SPAN else found


def _without(text: str, start: int, end: int) -> str:
    """``text`` with the time phrase at ``start:end`` (and its little words) taken out."""
    before, after = text[:start], text[end:]
    before = _LEAD_EN.sub("", before)
    after = _TRAIL_CN.sub("", after)
    joined = (before.rstrip() + " " + after.lstrip()).strip() if before and after else (before + after)
    cleaned = re.sub(r"\s{2,}", " ", joined).strip(" ,，、")
    return re.sub(r"\s+([?？!！.,，。])", r"\1", cleaned)

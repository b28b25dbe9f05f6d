"""The rule registry: each rule is a regular expression and a handler that resolves its match.

A rule finds one *piece* of a time expression ("上周三", "下午三点", "到", "国庆"); the
composer (``compose.py``) joins adjacent pieces into what was meant ("上周三下午三点",
"3月3日到3月10日", "2025年之前"). Rules never backtrack badly: no nested quantifiers, and
every repetition is bounded.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from datetime import date

from memory.timeparse.days import Calendar, DayTime
from memory.timeparse.ranges import TimeRange

__all__ = ["RULES", "Piece", "Rule", "rule"]


@dataclass(frozen=True)
class Piece:
    """What one rule (or a join of several) resolved to."""

    range: TimeRange
    day: date | None = None
    """The one calendar day the piece names, when it names exactly one (a time of day may join it)."""
    daytime: DayTime | None = None
    """The time of day the piece names (placed on ``day``, or on today when alone)."""
    bare: bool = False
    """A lone hour ("八点"), part word ("afternoon") or "now": a time only when joined to another piece."""
    repeat: int = 0
    """Days after which the phrase names the same thing again (7 for a weekday, 365 for a date
    without its year): a span whose end would come before its start moves the start back."""
    absolute: bool = False
    """Written as a calendar date (2026-03-05, 3月5日, March 5), not relative to now."""
    kind: str = ""
    """What the piece is, where the composer cares: ``vague-before`` (之前), ``now``."""


Resolved = Piece | TimeRange | None
Handler = Callable[[Calendar, "re.Match[str]"], Resolved]


@dataclass(frozen=True)
class Rule:
    """A pattern and the handler that turns its matches into pieces."""

    pattern: re.Pattern[str]
    handler: Handler
    absolute: bool
    repeat: int
    hint: str
    """A substring every match contains (lower case); the rule is skipped for text without it."""

    def piece(self, cal: Calendar, match: re.Match[str]) -> Piece | None:
        """The match resolved (a plain range becomes a piece with this rule's flags)."""
        found = self.handler(cal, match)
        if found is None or isinstance(found, Piece):
            return found
        day = found.start.date() if found.granularity == "day" else None
        return Piece(found, day=day, absolute=self.absolute, repeat=self.repeat)


RULES: list[Rule] = []


def rule(
    pattern: str, flags: int = 0, *, absolute: bool = False, repeat: int = 0, hint: str = ""
) -> Callable[[Handler], Handler]:
    """Register ``handler`` for ``pattern``."""

    def register(handler: Handler) -> Handler:
        RULES.append(Rule(re.compile(pattern, flags), handler, absolute, repeat, hint))
        return handler

    return register

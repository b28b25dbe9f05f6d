"""The rule registry: each rule is a regular expression and a handler that resolves its match.

A rule finds one *piece* of a time expression ("上周三", "下午三点", "到", "国庆"); the
composer (``compose.py``) joins adjacent pieces into what was meant ("上周三下午三点",
"3月3日到3月10日", "2025年之前"). Rules never backtrack badly: no nested quantifiers, and
every repetition is bounded.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace
from datetime import date

from huichat.memory.timeparse.days import Calendar, DayTime
from huichat.memory.timeparse.ranges import TimeRange

__all__ = ["DIGITS", "RULES", "Piece", "Rule", "lead", "lead_length", "preceded_by", "present", "rule"]


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
    """What the piece is, where the composer cares: ``vague-before`` (之前), ``asked`` ("how long ago"), ``now``."""
    lead: int = 0
    """Characters just before the rule's match that belong to the phrase (去年 in 去年国庆)."""


Resolved = Piece | TimeRange | None
Handler = Callable[[Calendar, "re.Match[str]"], Resolved]


@dataclass(frozen=True)
class Rule:
    """A pattern and the handler that turns its matches into pieces."""

    pattern: re.Pattern[str]
    handler: Handler
    absolute: bool
    repeat: int
    needs: frozenset[str]
    """Characters or lower-case words of which every match contains one: a text with none of
    them is not searched (most rules are skipped for most texts; empty: always searched)."""

    def piece(self, cal: Calendar, match: re.Match[str]) -> Piece | None:
        """The match resolved, with this rule's flags (and its day, when it names one day)."""
        found = self.handler(cal, match)
        if found is None:
            return None
        if isinstance(found, TimeRange):
            day = found.start.date() if found.granularity == "day" else None
            return Piece(found, day=day, absolute=self.absolute, repeat=self.repeat)
        if found.day is None and found.daytime is None and found.range.granularity == "day":
            found = replace(found, day=found.range.start.date())
        if self.absolute or self.repeat:
            found = replace(found, absolute=found.absolute or self.absolute, repeat=found.repeat or self.repeat)
        return found


RULES: list[Rule] = []
DIGITS = "0123456789"


def rule(
    pattern: str, flags: int = 0, *, needs: str | Iterable[str], absolute: bool = False, repeat: int = 0
) -> Callable[[Handler], Handler]:
    """Register ``handler`` for ``pattern``; ``needs`` is a string of characters or an iterable of words."""

    def register(handler: Handler) -> Handler:
        tokens = frozenset(needs) if isinstance(needs, str) else frozenset(w.lower() for w in needs)
        RULES.append(Rule(re.compile(pattern, flags), handler, absolute, repeat, tokens))
        return handler

    return register


def lead(match: re.Match[str], pattern: re.Pattern[str]) -> re.Match[str] | None:
    """A qualifier written just before ``match`` (去年 before 国庆, "last" before "Christmas").

    ``pattern`` ends with ``$``; a rule whose own pattern starts with a fixed word scans fast,
    and its optional qualifiers are read here, only where the word was found.
    """
    found = pattern.search(match.string, max(0, match.start() - 24), match.start())
    return found if found is not None and found.end() > found.start() else None


def lead_length(match: re.Match[str], qualifier: re.Match[str] | None) -> int:
    """How many characters before ``match`` the qualifier adds to the phrase."""
    return match.start() - qualifier.start() if qualifier is not None else 0


def preceded_by(match: re.Match[str], characters: str) -> bool:
    """Whether the character before ``match`` is one of ``characters`` (a fast stand-in for a look-behind)."""
    return match.start() > 0 and match.string[match.start() - 1] in characters


_WORDS = re.compile(r"[a-z]+")


def present(text: str) -> set[str]:
    """The characters of ``text`` and its lower-case English words: what ``Rule.needs`` is checked against."""
    return set(text) | set(_WORDS.findall(text.lower()))

"""The resolved range, its human label, and the bounds every returned range keeps."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from datetime import UTC, datetime, time, timedelta
from typing import Any

__all__ = ["EARLIEST_YEAR", "OPEN_START_YEAR", "TimeRange", "checked"]

EARLIEST_YEAR = 1000
"""No range starts before this year: LanceDB's timestamp text needs four digits."""
OPEN_START_YEAR = 1900
"""Where "before X" and "long ago" begin: nothing said or remembered lies earlier."""


@dataclass(frozen=True)
class TimeRange:
    """A resolved time expression: ``start <= t < end`` in the local zone."""

    start: datetime
    end: datetime
    granularity: str
    """``hour``, ``part_of_day``, ``day``, ``weekend``, ``week``, ``month``, ``year`` or ``span``."""
    fuzzy: bool = False
    """A vague phrase (前段时间, "a while ago"): scanned week by week, not used as a hard filter."""
    phrase: str = ""
    focus: tuple[datetime, datetime] | None = None
    """For a fuzzy range, the stretch the phrase most likely means (前段时间: 1–8 weeks ago).

    A vague range itself runs up to ``now`` so that a scan starting at the most recent week
    skips no recent turn; ``focus`` is where the scan should weigh most (or jump to after the
    most recent week). None: the whole range is equally likely.
    """

    def describe(self) -> str:
        """A short human label, e.g. ``2026-11-18 Wed 12:00–18:00`` or ``2026-10-01 – 2026-10-07``."""
        label = _label(self.start, self.end)
        if self.focus is not None and self.focus != (self.start, self.end):
            label += f", mostly {_label(*self.focus)}"
        return label

    def named(self, phrase: str) -> TimeRange:
        """This range, carrying the words it was read from."""
        return replace(self, phrase=phrase)

    def overlaps(self, start: datetime, end: datetime) -> bool:
        """True when some moment of this range lies in ``start <= t < end``."""
        return self.start < end and start < self.end

    def to_record(self) -> dict[str, Any]:
        """The range as plain JSON-able data (``focus`` is not kept: stored ranges are event times)."""
        return {
            "start": self.start.isoformat(),
            "end": self.end.isoformat(),
            "granularity": self.granularity,
            "fuzzy": self.fuzzy,
            "phrase": self.phrase,
        }

    @classmethod
    def from_record(cls, data: Mapping[str, Any]) -> TimeRange:
        """The inverse of ``to_record``; raises ``KeyError`` or ``ValueError`` on a record that is not a range."""
        start, end = datetime.fromisoformat(str(data["start"])), datetime.fromisoformat(str(data["end"]))
        if start.tzinfo is None or end.tzinfo is None or not start < end:
            raise ValueError(f"not a time range: {data!r}")
        return cls(
            start, end, str(data.get("granularity") or "span"), bool(data.get("fuzzy")), str(data.get("phrase") or "")
        )


def _label(start: datetime, end: datetime) -> str:
    last = end - timedelta(microseconds=1)
    if start.year <= OPEN_START_YEAR and start.month == 1 and start.day == 1 and start.time() == time():
        return f"before {_point(end)}"
    if start.time() == time() and end.time() == time():
        if last.date() == start.date():
            return f"{start:%Y-%m-%d %a}"
        return f"{start:%Y-%m-%d} – {last:%Y-%m-%d}"
    if last.date() == start.date() or (end - start <= timedelta(hours=12) and end.time() != time()):
        end_label = f"{end:%H:%M}" if end.date() == start.date() else f"{end:%H:%M %m-%d}"
        if end.time() == time() and end.date() == start.date() + timedelta(days=1):
            end_label = "24:00"
        return f"{start:%Y-%m-%d %a %H:%M}–{end_label}"
    return f"{_point(start)} – {_point(end)}"


def _point(moment: datetime) -> str:
    return f"{moment:%Y-%m-%d}" if moment.time() == time() else f"{moment:%Y-%m-%d %H:%M}"


def checked(found: TimeRange | None) -> TimeRange | None:
    """``found`` when it is non-empty, within years 1000–9999 and convertible to UTC; else None."""
    if found is None:
        return None
    spans = [(found.start, found.end)] + ([found.focus] if found.focus is not None else [])
    for start, end in spans:
        if not start < end or start.year < EARLIEST_YEAR:
            return None
        try:
            start.astimezone(UTC)
            end.astimezone(UTC)
        except (OverflowError, ValueError):
            return None
    if found.focus is not None and not (found.start <= found.focus[0] and found.focus[1] <= found.end):
        return None
    return found

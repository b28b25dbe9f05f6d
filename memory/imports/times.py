"""Source timestamps to UTC instants: Unix seconds, ISO strings with or without an offset."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, tzinfo
from decimal import Decimal, InvalidOperation

_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_MILLIS_ABOVE = Decimal(100_000_000_000)  # Unix seconds reach this in the year 5138
_LATEST = datetime(2200, 1, 1, tzinfo=UTC)
_EARLIEST = datetime(1990, 1, 1, tzinfo=UTC)  # older than any chat service: a zero or a bug

Stamp = int | float | Decimal | str | None


def raw_text(value: Stamp) -> str:
    """The source's value as text, verbatim for strings and decimals (``""`` for none)."""
    if value is None:
        return ""
    return value if isinstance(value, str) else str(value)


def from_epoch(value: int | float | Decimal) -> datetime | None:
    """Unix seconds (milliseconds above 1e11) as UTC; ``None`` for values no chat can have.

    Decimal arithmetic keeps microseconds exact (floats drift in the last digit).
    """
    try:
        seconds = Decimal(str(value)) if not isinstance(value, Decimal) else value
        if seconds >= _MILLIS_ABOVE:
            seconds = seconds / 1000
        whole = int(seconds)
        micros = int(((seconds - whole) * 1_000_000).to_integral_value())
        moment = _EPOCH + timedelta(seconds=whole, microseconds=micros)
    except (InvalidOperation, OverflowError, ValueError):
        return None
    return moment if _EARLIEST <= moment < _LATEST else None


def from_iso(value: str, *, naive_zone: tzinfo = UTC) -> datetime | None:
    """An ISO-8601 string (``Z``, ``+08:00`` or naive, read in ``naive_zone``) as UTC."""
    try:
        moment = datetime.fromisoformat(value.strip())
    except ValueError:
        return None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=naive_zone)
    moment = moment.astimezone(UTC)
    return moment if _EARLIEST <= moment < _LATEST else None


def parse_stamp(value: Stamp) -> datetime | None:
    """Any source time (numbers as Unix seconds, strings as ISO or numeric text) as UTC."""
    if value is None or isinstance(value, bool):
        return None
    if isinstance(value, str):
        text = value.strip()
        if not text:
            return None
        try:
            return from_epoch(Decimal(text))
        except InvalidOperation:
            return from_iso(text)
    return from_epoch(value)

"""Dates written as numbers (2026-03-05, 2026/3/5, 05/03/2026, 5.3.2026), huichat's own labels
copied back ("2026-11-18 Wed 12:00–18:00"), and day-month-year dates in other European languages.

05/03/2026 is read month-first (as in the US), 5.3.2026 day-first (as in Europe).
"""

from __future__ import annotations

import re
from datetime import date

from huichat.memory.timeparse.days import Calendar, DayTime, clock_daytime
from huichat.memory.timeparse.ranges import TimeRange
from huichat.memory.timeparse.rules import DIGITS, Piece, rule

__all__: list[str] = []

_WEEKDAY_ABBR = r"(?:\s+(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun)\b)?"
_ISO = r"(?<![\d:/-])(?<!\d\.)(?P<y>\d{4})(?P<sep>[-/.])(?P<m>\d{1,2})(?P=sep)(?P<d>\d{1,2})"
_ISO_END = r"(?![\d/]|[-.:]\d{1,2}(?!\d))"


@rule(_ISO + _WEEKDAY_ABBR + _ISO_END, absolute=True, needs=DIGITS)
def _iso_date(cal: Calendar, m: re.Match[str]) -> TimeRange:
    return cal.days(date(int(m["y"]), int(m["m"]), int(m["d"])), 1)


@rule(
    _ISO
    + r"(?:T|\s+)(?P<h>[01]?\d|2[0-3]):(?P<min>[0-5]\d)(?::[0-5]\d(?:\.\d{1,9})?)?(?:Z|[+-]\d{2}:?\d{2})?(?![\d:])",
    absolute=True,
    needs=DIGITS,
)
def _iso_datetime(cal: Calendar, m: re.Match[str]) -> Piece | None:
    """2026-03-05T10:00 / 2026-03-05 10:00: a clock time on that day (any offset ignored: local)."""
    day = date(int(m["y"]), int(m["m"]), int(m["d"]))
    daytime = clock_daytime(int(m["h"]), int(m["min"]), "am" if int(m["h"]) < 12 else None)
    if daytime is None:
        return None
    return Piece(cal.on(day, daytime), day=day, daytime=daytime, absolute=True)


@rule(
    r"(?<![\d-])(?P<y>\d{4})-(?P<m>\d{2})-(?P<d>\d{2})"
    + _WEEKDAY_ABBR
    + r"\s+(?P<h1>\d{2}):(?P<m1>\d{2})\s*[–-]\s*(?P<h2>\d{2}):(?P<m2>\d{2})(?:\s+(?P<m3>\d{2})-(?P<d3>\d{2}))?(?![\d:])",
    absolute=True,
    needs=DIGITS,
)
def _label_hours(cal: Calendar, m: re.Match[str]) -> Piece:
    """huichat's own label, copied back: ``2026-11-25 Wed 22:00–04:00 11-26``."""
    day = date(int(m["y"]), int(m["m"]), int(m["d"]))
    low = int(m["h1"]) * 60 + int(m["m1"])
    high = int(m["h2"]) * 60 + int(m["m2"])
    if m["m3"]:
        end_day = date(day.year, int(m["m3"]), int(m["d3"]))
        if end_day < day:  # 12-31 … 01-01
            end_day = date(day.year + 1, end_day.month, end_day.day)
        high += (end_day - day).days * 1440
    elif high <= low:
        high += 1440
    daytime = DayTime(low, high)
    return Piece(
        TimeRange(cal.moment(day, low), cal.moment(day, high), "hour"), day=day, daytime=daytime, absolute=True
    )


@rule(
    r"(?<![\d/.-])(?P<a>\d{1,2})(?P<sep>[/.])(?P<b>\d{1,2})(?P=sep)(?P<y>\d{4})(?![\d/.-])", absolute=True, needs=DIGITS
)
def _numeric_date(cal: Calendar, m: re.Match[str]) -> TimeRange:
    month, day = (int(m["a"]), int(m["b"])) if m["sep"] == "/" else (int(m["b"]), int(m["a"]))
    return cal.days(date(int(m["y"]), month, day), 1)


_FOREIGN_MONTHS = {
    # French, German, Spanish, Italian, Portuguese, Dutch, Russian (genitive)
    "janvier": 1, "février": 2, "fevrier": 2, "mars": 3, "avril": 4, "mai": 5, "juin": 6, "juillet": 7,
    "août": 8, "aout": 8, "septembre": 9, "octobre": 10, "novembre": 11, "décembre": 12, "decembre": 12,
    "januar": 1, "jänner": 1, "februar": 2, "märz": 3, "maerz": 3, "juni": 6, "juli": 7, "oktober": 10,
    "dezember": 12, "enero": 1, "febrero": 2, "marzo": 3, "abril": 4, "mayo": 5, "junio": 6, "julio": 7,
    "agosto": 8, "septiembre": 9, "setiembre": 9, "octubre": 10, "noviembre": 11, "diciembre": 12,
    "gennaio": 1, "febbraio": 2, "aprile": 4, "maggio": 5, "giugno": 6, "luglio": 7, "settembre": 9,
    "ottobre": 10, "dicembre": 12, "janeiro": 1, "fevereiro": 2, "março": 3, "maio": 5, "junho": 6,
    "julho": 7, "setembro": 9, "outubro": 10, "novembro": 11, "dezembro": 12, "januari": 1,
    "februari": 2, "maart": 3, "mei": 5, "augustus": 8,
    "января": 1, "февраля": 2, "марта": 3, "апреля": 4, "мая": 5, "июня": 6, "июля": 7, "августа": 8,
    "сентября": 9, "октября": 10, "ноября": 11, "декабря": 12,
}  # fmt: skip


@rule(
    r"(?<![\w])(?P<d>\d{1,2})\.?\s+(?:de\s+)?(?P<mon>[^\W\d_]{3,10})\.?,?\s+(?:de\s+)?(?P<y>\d{4})(?![\w])",
    absolute=True,
    needs=DIGITS,
)
def _foreign_date(cal: Calendar, m: re.Match[str]) -> TimeRange | None:
    month = _FOREIGN_MONTHS.get(m["mon"].lower())
    if month is None:
        return None
    return cal.days(date(int(m["y"]), month, int(m["d"])), 1)

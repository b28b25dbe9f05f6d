"""Fuzzing the resolver: random and hostile strings raise nothing and give only valid ranges.

A fixed seed and 10,000 examples by default; the reliability suite asks for more with
``HUICHAT_FUZZ_EXAMPLES=50000``. Timing is not asserted here (``huichat bench timegen
--resolver`` measures it).
"""

from __future__ import annotations

import os
import random
from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import HealthCheck, given, seed, settings
from hypothesis import strategies as st

from huichat.memory.timeparse import TimeRange, TimeResolver
from tests.conftest import ZONE
from tests.memory.test_timeparse_table import ROWS

EXAMPLES = int(os.environ.get("HUICHAT_FUZZ_EXAMPLES", "10000"))

_TIME_CHARS = (
    "年月日号周天星期礼拜前后上下这本去今明昨大点半刻时分早晚午夜凌晨季度旬初底末之以来到至从自起左右多"
    "零〇一二两三四五六七八九十百千万第每几个春节国庆中秋元旦除夕"
)
_ALPHABET = [
    *_TIME_CHARS,
    *"0123456789 -:./~–—,，。?？!Qq",
    "１",
    "２",
    "：",
    "🎉",
    "🚀",
    "\x00",
    "\u200b",
    "İ",
    "ß",
    "𝟘",
]
_WORDS = [
    *(row[0] for row in ROWS),
    "100000", "99999999", "9999", "0", "1900", "2025", "年", "周", "前", "之前", "以后", "到", "至", "from", "to",
    "between", "and", "before", "after", "since", "around", "ago", "last", "next", "at", "pm", "Q4", "九九九九",
    "二〇二六", "十一", "五一", "半", "几", "Christmas", "weeks", "months", "years",
]  # fmt: skip


def garbage(rng: random.Random) -> str:
    """One hostile string: time characters, phrases glued together, any Unicode, or very long."""
    kind = rng.randrange(6)
    if kind == 0:
        return "".join(rng.choice(_ALPHABET) for _ in range(rng.randrange(120)))
    if kind == 1:
        return " ".join(rng.choice(_WORDS) for _ in range(rng.randrange(12)))
    if kind == 2:
        return "".join(rng.choice(_WORDS) for _ in range(rng.randrange(12)))
    if kind == 3:
        parts = [rng.choice(_WORDS) if rng.random() < 0.5 else rng.choice(_ALPHABET) for _ in range(rng.randrange(30))]
        return "".join(parts)
    if kind == 4:
        return "".join(
            chr(rng.choice([rng.randrange(32, 0x2FFFF), rng.randrange(0x4E00, 0x9FFF)]))
            for _ in range(rng.randrange(200))
        )
    return rng.choice(_WORDS) * rng.randrange(1, 800)


NOWS = [datetime(2026, 11, 25, 15, 0), datetime(2024, 2, 29, 23, 59), datetime(2027, 1, 1, 0, 0),
        datetime(1001, 1, 1, 0, 0), datetime(9998, 12, 31, 23, 0), datetime(1970, 1, 1, 8, 0)]  # fmt: skip


def a_now(rng: random.Random) -> datetime:
    """A fixed edge case or any moment between the years 1000 and 9999."""
    if rng.random() < 0.7:
        moment = rng.choice(NOWS)
    else:
        moment = datetime(1000, 1, 2) + timedelta(seconds=rng.randrange(int(9000 * 365.2425 * 86400)))
    return moment.replace(tzinfo=ZONE)


def _valid(found: TimeRange) -> None:
    assert found.start < found.end, found
    assert found.start.year >= 1000 and found.end.year <= 9999, found
    found.start.astimezone(UTC)
    found.end.astimezone(UTC)
    if found.focus is not None:
        assert found.start <= found.focus[0] < found.focus[1] <= found.end, found


@seed(20261125)
@settings(max_examples=EXAMPLES, deadline=None, database=None, suppress_health_check=[HealthCheck.too_slow])
@given(case=st.integers(min_value=0, max_value=2**64).map(random.Random))
def test_any_text_gives_only_valid_ranges(case: random.Random) -> None:
    _check(garbage(case), a_now(case), case.random() < 0.5)


@pytest.mark.parametrize(
    ("text", "now"),
    [("2025年之前 VPN", datetime(2026, 11, 25)), ("100000周前", datetime(2026, 11, 25)), ("九九九九年前", datetime(2026, 11, 25)),
     ("9999年12月31日", datetime(9999, 12, 30)), ("上上上上上上周" * 100, datetime(1000, 1, 2)), ("年" * 5000, datetime(2026, 11, 25)),
     ("3月3日到" * 1500, datetime(2026, 11, 25)), ("1234567890" * 600, datetime(2026, 11, 25)),
     ("last week " * 600, datetime(2026, 11, 25)), ("上周" * 3000, datetime(9998, 12, 31, 23))],
)  # fmt: skip
def test_hostile_strings_give_only_valid_ranges(text: str, now: datetime) -> None:
    _check(text, now.replace(tzinfo=ZONE), False)
    _check(text, now.replace(tzinfo=ZONE), True)


def _check(text: str, now: datetime, sunday: bool) -> None:
    resolver = TimeResolver(ZONE, "sunday" if sunday else "monday")
    query = resolver.read_query(text, now)
    if query.range is not None:
        _valid(query.range)
    for event in resolver.event_ranges(text, now):
        _valid(event)


def test_before_a_year_is_before_that_year() -> None:
    found = TimeResolver(ZONE).parse("2025年之前 VPN", datetime(2026, 11, 25, tzinfo=ZONE))
    assert found is not None and found.fuzzy
    assert found.end == datetime(2025, 1, 1, tzinfo=ZONE)


def test_huge_counts_resolve_to_nothing() -> None:
    now = datetime(2026, 11, 25, tzinfo=ZONE)
    for text in ("100000周前", "九九九九年前", "99999999 days ago", "九九九九九九九九天前", "过去100000年"):
        assert TimeResolver(ZONE).parse(text, now) is None, text

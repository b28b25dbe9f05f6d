"""Citation markers and source times, table-driven."""

from __future__ import annotations

from datetime import UTC, datetime
from decimal import Decimal

import pytest

from huichat.memory.imports.text import readable_citations
from huichat.memory.imports.times import from_epoch, from_iso, parse_stamp


@pytest.mark.parametrize(
    ("text", "readable"),
    [
        ("see \ue200cite\ue202turn0search0\ue201.", "see [cite: turn0search0]."),
        ("\ue200cite\ue202turn0news1\ue202turn0news2\ue201", "[cite: turn0news1, turn0news2]"),
        ("\ue203highlighted\ue204 text", "highlighted text"),
        ('\ue200entity\ue202["people","Lu Xun"]\ue201 wrote', '[entity: ["people","Lu Xun"]] wrote'),
        ("as shown 【4:0†source】 and 【12†L1-L5】", "as shown [cite: 4:0†source] and [cite: 12†L1-L5]"),
        ("【重要】通知", "【重要】通知"),
        ("plain", "plain"),
    ],
)
def test_citation_markers(text: str, readable: str) -> None:
    assert readable_citations(text) == readable


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (Decimal("1700000000.123456"), datetime(2023, 11, 14, 22, 13, 20, 123456, tzinfo=UTC)),
        (1700000000, datetime(2023, 11, 14, 22, 13, 20, tzinfo=UTC)),
        (1700000000123, datetime(2023, 11, 14, 22, 13, 20, 123000, tzinfo=UTC)),  # milliseconds
        (0, None),
        (-5, None),
        (Decimal("NaN"), None),
        (1e300, None),
    ],
)
def test_unix_times(value: int | float | Decimal, expected: datetime | None) -> None:
    assert from_epoch(value) == expected


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("2025-01-27T13:39:24.513000+08:00", datetime(2025, 1, 27, 5, 39, 24, 513000, tzinfo=UTC)),
        ("2025-03-01T09:01:00.000000Z", datetime(2025, 3, 1, 9, 1, tzinfo=UTC)),
        ("2024-05-01 10:00:01", datetime(2024, 5, 1, 10, 0, 1, tzinfo=UTC)),
        ("1763826160.25", datetime(2025, 11, 22, 15, 42, 40, 250000, tzinfo=UTC)),
        ("yesterday", None),
        ("", None),
        (None, None),
    ],
)
def test_any_stamp(value: str | None, expected: datetime | None) -> None:
    assert parse_stamp(value) == expected


def test_iso_without_a_zone_can_be_read_in_another_zone() -> None:
    from zoneinfo import ZoneInfo

    assert from_iso("2024-05-01 18:00:00", naive_zone=ZoneInfo("Asia/Shanghai")) == datetime(2024, 5, 1, 10, tzinfo=UTC)

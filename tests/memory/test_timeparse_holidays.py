"""Holiday dates: the computus, the lunar calendar's range, years given explicitly."""

from __future__ import annotations

from datetime import date, datetime

import pytest

from huichat.memory.timeparse import TimeResolver
from huichat.memory.timeparse.holidays import easter, lunar, solar_term
from tests.conftest import NOW, ZONE


@pytest.mark.parametrize(
    ("year", "sunday"),
    [(2000, date(2000, 4, 23)), (2008, date(2008, 3, 23)), (2011, date(2011, 4, 24)), (2019, date(2019, 4, 21)),
     (2024, date(2024, 3, 31)), (2025, date(2025, 4, 20)), (2038, date(2038, 4, 25))],
)  # fmt: skip
def test_easter_sunday(year: int, sunday: date) -> None:
    assert easter(year) == sunday


def test_lunar_dates_fall_in_the_gregorian_year_asked_for() -> None:
    assert lunar(1, 1)(2026) == date(2026, 2, 17)
    assert lunar(12, 8)(2026) == date(2026, 1, 26)  # 腊八 of lunar 2025 falls in January 2026
    assert lunar(8, 15)(2150) is None  # outside the library's 1900–2100
    assert solar_term("清明")(2026) == date(2026, 4, 5)
    assert solar_term("清明")(2150) is None


@pytest.mark.parametrize(
    ("phrase", "start", "end"),
    [("2150年国庆", date(2150, 10, 1), date(2150, 10, 8)), ("2030年中秋", date(2030, 9, 12), date(2030, 9, 13)),
     ("1999年春节", date(1999, 2, 15), date(1999, 2, 23))],
)  # fmt: skip
def test_a_year_given_explicitly(phrase: str, start: date, end: date) -> None:
    found = TimeResolver(ZONE).parse(phrase, NOW)
    assert found is not None
    assert (found.start.date(), found.end.date()) == (start, end)


def test_a_lunar_holiday_outside_the_calendar_leaves_only_its_year() -> None:
    found = TimeResolver(ZONE).parse("2150年中秋", NOW)
    assert found is not None and (found.phrase, found.granularity) == ("2150年", "year")


def test_the_holiday_going_on_now_is_the_recent_one() -> None:
    during = datetime(2026, 10, 3, 12, 0, tzinfo=ZONE)
    found = TimeResolver(ZONE).parse("国庆", during)
    assert found is not None and found.start.date() == date(2026, 10, 1)
    found = TimeResolver(ZONE).parse("last Christmas", datetime(2026, 12, 25, 12, 0, tzinfo=ZONE))
    assert found is not None and found.start.date() == date(2025, 12, 25)

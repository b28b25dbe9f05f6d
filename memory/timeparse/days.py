"""Calendar arithmetic in one zone with one first weekday; times of day on a day."""

from __future__ import annotations

import calendar
from dataclasses import dataclass
from datetime import date, datetime, time, timedelta, tzinfo

from huichat.memory.timeparse.ranges import OPEN_START_YEAR, TimeRange

__all__ = ["PARTS", "Calendar", "DayTime", "clock_minutes"]

# Parts of the day as hours [low, high) of the day they are said of (28 = 04:00 the next day).
PARTS: dict[str, tuple[int, int]] = {
    "凌晨": (0, 6), "早上": (6, 9), "早晨": (6, 9), "清晨": (6, 9), "一早": (6, 9), "上午": (6, 12),
    "中午": (11, 13), "午后": (12, 15), "下午": (12, 18), "傍晚": (17, 19), "晚上": (18, 24), "夜里": (22, 28),
    "深夜": (22, 28), "半夜": (22, 28), "午夜": (23, 25),
    "morning": (6, 12), "noon": (11, 13), "afternoon": (12, 18), "evening": (18, 24), "night": (18, 24),
    "late night": (22, 28), "midnight": (23, 25),
}  # fmt: skip
_AFTERNOON = {"下午", "午后", "傍晚", "晚上", "afternoon", "evening", "pm"}
_NIGHT = {"夜里", "深夜", "半夜", "night", "late night"}
_MORNING = {"凌晨", "早上", "早晨", "清晨", "一早", "am", "午夜", "midnight"}


@dataclass(frozen=True)
class DayTime:
    """A time of day not yet placed on a day: minutes after that day's midnight, ``[low, high)``.

    ``high`` may pass 1440 (the small hours of the next day). ``part`` is the part-of-day word
    that was said (it decides whether a bare "八点" joined to it is morning or evening);
    ``hour``/``minute`` the clock time as written and ``at`` as understood, when one was said.
    """

    low: int
    high: int
    part: str | None = None
    hour: int | None = None
    minute: int = 0
    at: int | None = None

    def approximate(self) -> DayTime:
        """The clock time said approximately ("around 4pm"): an hour either side."""
        if self.at is None:
            return self
        return DayTime(self.at - 60, self.at + 60, self.part, self.hour, self.minute, self.at)

    def with_part(self, part: str) -> DayTime:
        """A clock time said without a part of day, read again with ``part`` (八点 after 晚上)."""
        if self.hour is None or self.at is None:
            return self
        at = clock_minutes(self.hour, self.minute, part)
        if at is None:
            return self
        shift = at - self.at
        return DayTime(self.low + shift, self.high + shift, part, self.hour, self.minute, at)


def clock_minutes(hour: int, minute: int, part: str | None) -> int | None:
    """A written clock time in minutes after midnight, read with its part of day.

    Without a part, 1–6 o'clock is afternoon (三点开会 is 15:00) and 7–11 morning.
    """
    if not (0 <= hour <= 24 and 0 <= minute < 60) or (hour == 24 and minute):
        return None
    if part in _AFTERNOON:
        hour = hour + 12 if hour < 12 else hour
    elif part in _NIGHT:
        hour = hour + 24 if hour < 6 else hour + 12 if hour < 12 else 24 if hour == 12 else hour
    elif part in _MORNING:
        hour = 0 if hour == 12 else hour
    elif part in ("中午", "noon"):
        hour = hour + 12 if hour <= 2 else hour
    elif part is None and 1 <= hour <= 6:
        hour += 12
    return hour * 60 + minute


def clock_daytime(hour: int, minute: int, part: str | None, around: bool = False) -> DayTime | None:
    """The window around a clock time: 15 minutes before to an hour after, or ±1 hour when approximate."""
    at = clock_minutes(hour, minute, part)
    if at is None:
        return None
    low, high = (at - 60, at + 60) if around else (at - 15, at + 60)
    return DayTime(low, high, part, hour, minute, at)


def part_daytime(part: str) -> DayTime:
    """The hours of a part of the day."""
    low, high = PARTS[part]
    return DayTime(low * 60, high * 60, part)


class Calendar:
    """Date arithmetic around ``now`` in one zone, weeks starting on ``week_start`` (0 = Monday)."""

    def __init__(self, now: datetime, zone: tzinfo, week_start: int) -> None:
        self.zone = zone
        self.now = now.astimezone(zone)
        self.today = self.now.date()
        self.week_start = week_start
        self.until_now = self.now + timedelta(minutes=1)
        """The end of a range that runs up to now (a turn of this very minute included)."""

    # ---- moments and days

    def at(self, day: date) -> datetime:
        """Local midnight at the start of ``day``."""
        return datetime.combine(day, time(), tzinfo=self.zone)

    def moment(self, day: date, minutes: int) -> datetime:
        """Wall-clock ``minutes`` after ``day``'s midnight (DST-safe: whole days first)."""
        days, rest = divmod(minutes, 1440)
        return self.at(day + timedelta(days=days)).replace(hour=rest // 60, minute=rest % 60)

    def days(self, first: date, count: int, granularity: str = "day") -> TimeRange:
        """``count`` whole days from ``first``."""
        return TimeRange(self.at(first), self.at(first + timedelta(days=count)), granularity)

    def on(self, day: date, daytime: DayTime) -> TimeRange:
        """A time of day placed on ``day``."""
        granularity = "hour" if daytime.hour is not None else "part_of_day"
        return TimeRange(self.moment(day, daytime.low), self.moment(day, daytime.high), granularity)

    def back_to_now(self, first: date, focus: tuple[date, date] | None = None) -> TimeRange:
        """A vague range from ``first`` up to now, weighing ``focus`` (days, end exclusive) most."""
        weighted = (self.at(focus[0]), self.at(focus[1])) if focus else None
        return TimeRange(self.at(first), self.until_now, "span", True, "", weighted)

    def open_start(self) -> datetime:
        """The start of open-ended ranges ("before X", "long ago")."""
        return self.at(date(OPEN_START_YEAR, 1, 1))

    # ---- weeks

    def week_of(self, day: date) -> date:
        """The first day of ``day``'s week."""
        return day - timedelta(days=(day.weekday() - self.week_start) % 7)

    def week(self, offset: int) -> TimeRange:
        """The calendar week ``offset`` weeks from this one."""
        first = self.week_of(self.today) + timedelta(weeks=offset)
        return self.days(first, 7, "week")

    def weekday_in_week(self, offset: int, weekday: int) -> date:
        """``weekday`` (0 = Monday) of the week ``offset`` weeks from this one."""
        first = self.week_of(self.today) + timedelta(weeks=offset)
        return first + timedelta(days=(weekday - self.week_start) % 7)

    def weekend(self, offset: int) -> TimeRange:
        """This weekend (the first Saturday–Sunday of this week not over yet) moved by ``offset`` weeks.

        In a Monday-first week that is the coming Saturday and Sunday; on a Sunday in a
        Sunday-first week it is the weekend of today.
        """
        first = self.week_of(self.today)
        saturday = first + timedelta(days=(5 - first.weekday()) % 7)
        if saturday - timedelta(days=6) >= self.today:  # the Sunday of the weekend before is still to come
            saturday -= timedelta(days=7)
        return self.days(saturday + timedelta(weeks=offset), 2, "weekend")

    def recent_weekend(self) -> TimeRange:
        """The weekend going on now or the last one before today."""
        return self.days(self.recent_weekday(5, strictly_before_today=False), 2, "weekend")

    def recent_weekday(self, weekday: int, strictly_before_today: bool) -> date:
        """The most recent ``weekday`` (today included unless ``strictly_before_today``)."""
        back = (self.today.weekday() - weekday) % 7
        if back == 0 and strictly_before_today:
            back = 7
        return self.today - timedelta(days=back)

    # ---- months and years

    def month(self, year: int, month: int, part: tuple[int, int] | None = None) -> TimeRange | None:
        """A calendar month, or days ``part`` = (first, last) of it (last capped at the month's end)."""
        if not (1 <= month <= 12) or not (1 <= year <= 9998):
            return None
        last_day = calendar.monthrange(year, month)[1]
        if part is None:
            return self.days(date(year, month, 1), last_day, "month")
        low, high = part[0], min(part[1], last_day)
        return self.days(date(year, month, low), high - low + 1, "span")

    def month_offset(self, offset: int) -> tuple[int, int]:
        """(year, month) ``offset`` months from this one."""
        index = self.today.year * 12 + self.today.month - 1 + offset
        return index // 12, index % 12 + 1

    def months_before(self, day: date, count: int) -> date:
        """``day`` moved back ``count`` months (the day clamped to the month's length)."""
        index = day.year * 12 + day.month - 1 - count
        year, month = index // 12, index % 12 + 1
        return date(year, month, min(day.day, calendar.monthrange(year, month)[1]))

    def year(self, year: int, months: tuple[int, int] | None = None) -> TimeRange | None:
        """A calendar year, or months ``months`` = (first, last) of it."""
        if not (1 <= year <= 9998):
            return None
        if months is None:
            return TimeRange(self.at(date(year, 1, 1)), self.at(date(year + 1, 1, 1)), "year")
        low, high = months
        end = date(year + 1, 1, 1) if high == 12 else date(year, high + 1, 1)
        return TimeRange(self.at(date(year, low, 1)), self.at(end), "span")

    def recent_month(self, month: int) -> int:
        """The year of the most recent ``month`` not in the future."""
        return self.today.year if month <= self.today.month else self.today.year - 1

    def recent_date(self, month: int, day: int) -> date | None:
        """The most recent ``month``/``day`` not in the future (Feb 29: the last leap year's)."""
        for year in range(self.today.year, self.today.year - 8, -1):
            try:
                candidate = date(year, month, day)
            except ValueError:
                continue
            if candidate <= self.today:
                return candidate
        return None

    def around(self, point: date, half_days: int) -> TimeRange:
        """Days ``point - half_days`` to ``point + half_days`` inclusive."""
        return self.days(point - timedelta(days=half_days), 2 * half_days + 1, "span")

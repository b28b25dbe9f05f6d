"""Time expressions in Chinese and English → half-open local ranges ``[start, end)``.

A rule layer of our own (dateparser misses nearly every Chinese form that matters and reads
English "we" as Wednesday). Everything is a pure function of the text, ``now``, the display
zone and the first day of the week. Rules find pieces (``chinese``, ``english``, ``clock``,
``holidays``, ``windows``, ``vague``, ``dates``); ``compose`` joins them; ``resolver`` is the
API; ``query`` decides whether a query's time phrase is a constraint or content.

How phrases are read where speakers differ (each choice is tested):

- A weekday alone (周三, Wednesday) is the most recent such day, today included; "last
  Wednesday" the most recent before today; "this/next Wednesday" that day of this/next
  week; 上周三 / 这周一 / 本周三 / 大上周 / 上上周末 are calendar weeks, ``week_start``
  honoured (上周日 in a Sunday-first week is the first day of last week).
- 周末 / "the weekend" is the weekend going on or the last one; 这周末 the first weekend of
  this week not over yet; 上周末 / "last weekend" the one before it.
- A month or date without a year is its most recent occurrence not in the future; so is a
  holiday (``holidays``), unless 今年/去年/明年/a year is said.
- Parts of the day (the same table for both languages): 凌晨 00–06, 早上/早晨 06–09, 上午 /
  morning 06–12, 中午 / noon 11–13, 下午 / afternoon 12–18, 傍晚 17–19, 晚上 / evening,
  night 18–24, 深夜/半夜/夜里 / late night 22–04 the next day. A part alone is today's.
- Clock times are a window from 15 minutes before to an hour after; ±1 hour when approximate
  (``clock``). Without a part of day, 1–6 o'clock is afternoon and 7–11 morning.
- Month parts: 月初/上旬/early = days 1–10, 月中/中旬/mid = 11–20, 月底/月末/下旬/late/end =
  21–end. Year parts: 年初/early = Jan–Feb, 年中/mid = May–Aug, 年底/年末/late/end = Nov–Dec,
  上半年/下半年 = Jan–Jun/Jul–Dec. Quarters Q1–Q4 (上个季度, "last quarter"); a bare Qn is
  the most recent that has begun.
- Counted windows (过去三天, "the past week") run from that many days back to now; points
  in the past ("两个月前", "a year ago") are a window around the point, not a calendar
  block (``windows``).
- Vague phrases are fuzzy and run up to now, with ``TimeRange.focus`` where they weigh most
  (``vague``): a progressive scan that starts at the most recent week skips nothing.
- "2025年之前", "before March" mean any time before it (fuzzy, scanned from it backwards);
  spans, "since", "after" and "around" are read by ``compose``.
- Years are read between 1000 and 9999; every returned range is non-empty and converts to
  UTC. Only the first 1,000 characters of a query (2,000 of a stored turn) are read, and at
  most 64 rule matches: the cost per text is bounded.
- Not time: names and words that contain time characters (周杰伦, 一周年, 第一次, 周报,
  下午茶, 三点建议, "second", "may I", "march on", "Easter egg").
"""

from huichat.memory.timeparse import chinese, clock, dates, english, holidays, vague, windows
from huichat.memory.timeparse.numbers import cn_number
from huichat.memory.timeparse.query import QueryTime, Role
from huichat.memory.timeparse.ranges import TimeRange
from huichat.memory.timeparse.resolver import TimeResolver

__all__ = ["QueryTime", "Role", "TimeRange", "TimeResolver", "cn_number"]

_RULE_MODULES = (chinese, clock, dates, english, holidays, vague, windows)  # imported to register their rules

"""Vague phrases: fuzzy ranges that run up to now, with the stretch the phrase points at as ``focus``.

A vague range ends at now, so a progressive scan that starts at the most recent week skips
no recent turn; ``focus`` says where the phrase weighs most::

    刚才 刚刚 方才 / just now, a moment ago          the last 2 hours
    前几天 几天前 前些天 这几天 / a few days ago,      the 7 days before today up to now,
      the other day, a couple of days ago              mostly the 7 days before today
    最近 近来 近期 / recently, lately, these days      the last 14 days up to now
    前阵子 前段时间 前些日子 / a while ago, some       the last 8 weeks up to now,
      time ago, a few weeks ago, not long ago          mostly 1–8 weeks ago
    早些时候 早先 先前 / earlier on                    the last 8 weeks up to now, mostly the last 7 days
    很久以前 好久以前 / long ago, ages ago, way back   since 1900 up to now, mostly before 3 months ago
    之前 以前 / previously                             since 1900 up to now
    how long ago, how many years ago                   since 1900 up to now: the time asked for, never
                                                         a constraint ("How long ago did Tim start the violin?")
"""

from __future__ import annotations

import re
from datetime import timedelta

from huichat.memory.timeparse.days import Calendar
from huichat.memory.timeparse.english import E, W
from huichat.memory.timeparse.ranges import TimeRange
from huichat.memory.timeparse.rules import Piece, rule

__all__ = ["vague"]


def vague(cal: Calendar, kind: str) -> TimeRange:
    """The fuzzy range of a vague phrase of ``kind`` (see the module docstring)."""
    today = cal.today
    if kind == "just_now":
        return TimeRange(cal.now - timedelta(hours=2), cal.until_now, "hour", True)
    if kind == "few_days":
        return cal.back_to_now(today - timedelta(days=7), (today - timedelta(days=7), today))
    if kind == "recent":
        return cal.back_to_now(today - timedelta(days=14))
    if kind == "while":
        return cal.back_to_now(today - timedelta(weeks=8), (today - timedelta(weeks=8), today - timedelta(weeks=1)))
    if kind == "earlier":
        start = cal.at(today - timedelta(weeks=8))
        return TimeRange(start, cal.until_now, "span", True, "", (cal.at(today - timedelta(days=7)), cal.until_now))
    start = cal.open_start()
    if kind == "long_ago":
        return TimeRange(start, cal.until_now, "span", True, "", (start, cal.at(today - timedelta(days=90))))
    return TimeRange(start, cal.until_now, "span", True)


_VAGUE_CN = {
    "刚才": "just_now", "刚刚": "just_now", "方才": "just_now",
    "前几天": "few_days", "这几天": "few_days", "近几天": "few_days", "前些天": "few_days", "前两天": "few_days",
    "几天前": "few_days", "前几日": "few_days",
    "最近": "recent", "近来": "recent", "近期": "recent", "最近几天": "recent", "这些天": "recent",
    "前阵子": "while", "前一阵子": "while", "前一阵": "while", "前段时间": "while", "前些日子": "while",
    "前一段时间": "while", "不久前": "while", "前些时候": "while",
    "早些时候": "earlier", "早先": "earlier", "先前": "earlier",
    "很久以前": "long_ago", "好久以前": "long_ago", "很早以前": "long_ago", "很久之前": "long_ago",
    "好久之前": "long_ago", "老早": "long_ago", "以往": "before",
    "之前": "before", "以前": "before",
}  # fmt: skip


@rule("|".join(sorted(_VAGUE_CN, key=len, reverse=True)), needs="".join(name[0] for name in _VAGUE_CN))
def _cn_vague(cal: Calendar, m: re.Match[str]) -> Piece:
    kind = _VAGUE_CN[m.group(0)]
    return Piece(vague(cal, kind), kind=_piece_kind(kind))


_VAGUE_EN = {
    "just now": "just_now", "a moment ago": "just_now", "a few minutes ago": "just_now",
    "a little while ago": "just_now",
    "a few days ago": "few_days", "a few days back": "few_days", "the other day": "few_days",
    "several days ago": "few_days", "a couple days ago": "few_days", "a couple of days ago": "few_days",
    "recently": "recent", "lately": "recent", "these days": "recent", "the past few days": "recent",
    "the last few days": "recent", "of late": "recent",
    "a while ago": "while", "a while back": "while", "some time ago": "while", "a few weeks ago": "while",
    "the other week": "while", "not long ago": "while", "not so long ago": "while",
    "a couple of weeks ago": "while", "some weeks ago": "while",
    "earlier on": "earlier",
    "a long time ago": "long_ago", "long ago": "long_ago", "ages ago": "long_ago", "way back": "long_ago",
    "a long while ago": "long_ago", "years ago": "long_ago",
    "previously": "before",
    "how long ago": "asked", "how many years ago": "asked", "how many months ago": "asked",
    "how many weeks ago": "asked", "how many days ago": "asked",
}  # fmt: skip


@rule(
    W + "(?:" + "|".join(sorted(map(re.escape, _VAGUE_EN), key=len, reverse=True)) + ")" + E,
    re.IGNORECASE,
    needs={max(name.split(), key=len) for name in _VAGUE_EN},
)
def _en_vague(cal: Calendar, m: re.Match[str]) -> Piece:
    kind = _VAGUE_EN[" ".join(m.group(0).lower().split())]
    return Piece(vague(cal, kind), kind=_piece_kind(kind))


def _piece_kind(kind: str) -> str:
    """``vague-before`` for 之前/以前/previously (before now: no constraint at all), ``asked`` for "how
    long ago" (the time is what is asked for), ``vague-soft`` for 刚才/最近/recently (a recency that
    orders but excludes nothing), else '' (see ``query``)."""
    if kind in ("before", "asked"):
        return "vague-before" if kind == "before" else "asked"
    return "vague-soft" if kind in ("just_now", "recent") else ""

"""Is a query's time phrase a constraint of the search, or part of what is looked for?

Queries are often written by the model. "上周三下午我们聊了什么" asks for turns of that
afternoon; "下个月我要去成都出差" is a sentence the user said, looked for as it is. The rule,
applied in order to the query (the time phrase taken out for the word tests):

1. **bare filter** — nothing but the time phrase is left (``上周三下午``, "last week"): constraint.
2. **question or search request** — a question mark, a question word (什么 哪 谁 吗 呢 几
   多少 怎么 有没有…; what which when where who why how, or a sentence opening with
   did/do/was/is/can…), or search wording (找 搜 查 回忆 记得 提到 聊过 说过 关于…; find,
   search, show, list, recall, remember, remind, notes, messages…): constraint.
3. **description of a thing** — a noun phrase naming what is sought: Chinese ``…的X`` with
   no predicate after the last 的 (上周的会议, 昨天我们讨论的VPN问题, 下个月的安排);
   English "the X (that) we/I … -ed": constraint.
4. **statement** — a clause that says something: Chinese with a predicate marker (要 会 打算
   准备 了 过 在 是 已经 正在…) in four or more characters of content; English with a subject
   (I, we, my, the …) and a finite verb (is, was, will, 'm, went, happened, -ed…): content.
   The time phrase stays in the keywords and restricts nothing.
5. **keywords** — anything else ("上周三下午 部署", "VPN last week"): constraint.

A calendar date (2026-03-05, 3月5日, "March 5", a clock time on one) given with other words
is a **hint**, not a one-day filter: models make dates up. The caller ranks turns inside it
first and still finds the rest. A relative phrase (昨天, 上周三, "two weeks ago") is the
user's own word and stays a filter.

Two kinds of vague phrase never restrict a search that holds other words. 之前 / 以前 /
previously ("before now") exclude nothing and are mostly part of a noun phrase (以前的室友,
"my former roommate"): content. 刚才 / 最近 / recently are as often chit-chat or an aside
(刚才一直在想…, 最近有哪些安排) as a constraint: a hint, ranking recent turns first and
dropping none. "How long ago" (how many years ago…) asks for a time and constrains nothing
("How long ago did Tim start the violin?" was a filter to "long ago", 1900 to three months back
with the scan's focus there: recall of such questions on LoCoMo-dev fell from 0.89 to 0.65).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import timedelta
from typing import Literal

from huichat.memory.timeparse.ranges import TimeRange
from huichat.memory.timeparse.rules import Piece

__all__ = ["QueryTime", "Role", "classify"]

Role = Literal["none", "filter", "hint", "content"]


@dataclass(frozen=True)
class QueryTime:
    """How a query's time phrase is to be used."""

    keywords: str
    """What to search for: the query without the time phrase, or all of it when the phrase is content."""
    range: TimeRange | None
    """The first time phrase's range, whatever its role (None: no time phrase)."""
    role: Role
    """``filter``: restrict the search to ``range``; ``hint``: rank turns inside it first but
    exclude nothing; ``content``: the phrase is part of what is looked for; ``none``: no time."""
    reason: str = ""
    """Why, in a few words (``question``, ``statement``, ``calendar date with other words``…)."""

    @property
    def filter(self) -> TimeRange | None:
        """The range when it restricts the search."""
        return self.range if self.role == "filter" else None


_QUESTION_ZH = re.compile(
    r"[?？]|什么|啥|哪|谁|几[点天个次号时]|多少|怎么|怎样|如何|为什么|为啥|吗|呢|是否|有没有|是不是|有无"
)
_QUESTION_EN = re.compile(
    r"\?|(?<![A-Za-z])(?:what|which|when|where|who|whom|whose|why|how)(?![A-Za-z])|"
    r"^\s*(?:did|do|does|was|were|is|are|have|has|had|can|could|should|would|will)(?![A-Za-z])",
    re.IGNORECASE,
)
_SEARCH = re.compile(
    r"找|搜|查|回忆|回顾|看看|翻|列出|列一下|总结|汇总|记得|提到|聊过|说过|讲过|讨论过|关于|有关|相关|记录|聊天|对话|消息|"
    r"(?<![A-Za-z])(?:find|search|show|list|recall|remember|remind|look\s+up|pull\s+up|summari[sz]e|tell\s+me|give\s+me|"
    r"notes?|messages?|conversations?|chats?|anything|everything|mentions?|regarding|related)(?![A-Za-z])",
    re.IGNORECASE,
)
_PREDICATE_ZH = re.compile(
    r"(?<![纪重主需只摘概])要(?![点求素])|会(?![议员话计谈场])|打算|准备|计划|将|了(?![解])|过(?![程滤])|在(?![线])|是(?![否])|已经|正在|刚|把|被|"
    r"想(?![法])|去|来(?![源])|给"
)
_NOUN_TAIL_ZH = re.compile(r"的(?P<tail>[^的，。！,.!]{1,12})$")
_SUBJECT_EN = re.compile(
    r"^\s*(?:(?i:i|we|you|he|she|they|it|my|our|your|his|her|their|the|this|that|these|those)|[A-Z][a-z]+)(?![A-Za-z])",
)
_FINITE_EN = re.compile(
    r"(?<![A-Za-z])(?:am|is|are|was|were|will|shall|had|has|have|went|got|did|made|said|told|met|bought|took|"
    r"saw|wrote|sent|left|came|gave|found|began|broke|ran|flew|paid)(?![A-Za-z])|'(?:m|re|s|ll|ve|d)(?![A-Za-z])|"
    r"(?<![A-Za-z])[a-z]{3,}ed(?![A-Za-z])",
    re.IGNORECASE,
)
_RELATIVE_EN = re.compile(
    r"^\s*(?:the|that|those|this|these|any|some|all)\s+[^.!?]*?(?<![A-Za-z])(?:that|which|we|i|you|they|he|she)\s+"
    r"(?:[a-z]+ed|said|told|had|did|made|wrote|sent|saw|met|bought|got|went|took|set|put)(?![A-Za-z])",
    re.IGNORECASE,
)
_CJK = re.compile(r"[\u4e00-\u9fff]")


def classify(rest: str, piece: Piece) -> tuple[Role, str]:
    """The role of the time phrase ``piece`` in a query; ``rest`` is the query without it."""
    if piece.kind == "vague-before":
        return "content", "before now (no constraint)"
    if piece.kind == "asked":
        return "content", "the time asked for"
    role, reason = _role(rest)
    if role == "filter" and reason != "bare filter" and _calendar_day(piece):
        return "hint", "calendar date with other words"
    if role == "filter" and reason != "bare filter" and piece.kind == "vague-soft":
        return "hint", "vague recency with other words"
    return role, reason


def _role(rest: str) -> tuple[Role, str]:
    words = rest.strip(" \t\n,，。.!！、:：;；-—–")
    if not words:
        return "filter", "bare filter"
    if _QUESTION_ZH.search(rest) or _QUESTION_EN.search(rest):
        return "filter", "question"
    if _SEARCH.search(rest):
        return "filter", "search request"
    tail = _NOUN_TAIL_ZH.search(words)
    if tail and not _PREDICATE_ZH.search(tail["tail"]):
        return "filter", "description"
    if _RELATIVE_EN.search(rest):
        return "filter", "description"
    if len(_CJK.findall(words)) >= 4 and _PREDICATE_ZH.search(words):
        return "content", "statement"
    if _SUBJECT_EN.search(rest) and _FINITE_EN.search(rest):
        return "content", "statement"
    return "filter", "keywords"


def _calendar_day(piece: Piece) -> bool:
    span = piece.range.end - piece.range.start
    return piece.absolute and span <= timedelta(days=1, hours=1)

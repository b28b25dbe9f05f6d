"""How much a turn matters: the seed's five-part importance score, each part in [0, 1].

| part | seed weight | what it reads |
|---|---|---|
| novelty | 0.25 | 1 − the highest cosine similarity to an earlier turn (measured when it is embedded) |
| sentiment | 0.15 | strong-emotion words and marks, Chinese and English |
| feedback | 0.30 | accesses, decaying by 5 % a day since the last one |
| access | 0.20 | how often it was retrieved at all (saturating, no decay) |
| density | 0.10 | entities, numbers, code blocks, headings, list items |

The score ranks and tiers turns; it never removes one. Novelty is fixed when the turn gets
its vector; sentiment and density follow the text; feedback and access follow the access
statistics and are recomputed by the lifecycle jobs with the time of the run.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from datetime import datetime

from huichat.memory.config import ImportanceWeights
from huichat.memory.turns import ImportanceParts

NEUTRAL_NOVELTY = 0.5
"""Counted for a turn that has no vector yet (words first, vectors later)."""
_FEEDBACK_SATURATION = 10
_FEEDBACK_DECAY = 0.95
_ACCESS_SCALE = 5.0

_STRONG = (
    "非常重要", "特别重要", "重要", "关键", "紧急", "必须", "务必", "千万", "一定要", "记住", "别忘",
    "喜欢", "最爱", "讨厌", "爱", "恨", "开心", "高兴", "激动", "难过", "伤心", "生气", "愤怒",
    "害怕", "担心", "焦虑", "崩溃", "后悔", "感谢", "太好了", "糟糕", "完蛋",
    "very important", "important", "critical", "urgent", "must", "never forget", "remember",
    "love", "hate", "favorite", "favourite", "essential", "excited", "thrilled", "angry", "furious",
    "upset", "sad", "scared", "afraid", "worried", "anxious", "devastated", "amazing", "terrible",
    "awful", "disaster", "grateful", "regret",
)  # fmt: skip
_MEDIUM = (
    "需要", "应该", "希望", "想要", "打算", "担忧", "不错", "可惜",
    "need", "should", "want", "hope", "prefer", "wish", "glad", "sorry", "unfortunately",
)  # fmt: skip
_ASCII_WORD = re.compile(r"^[a-z ]+$")
_STRONG_MARKS = re.compile(r"[!！]{1,}|[?？][!！]|[😀-🙏❤💔😭😡🎉]")
_SHOUTING = re.compile(r"\b[A-Z]{4,}\b")

_ENTITY_PATTERNS = (
    re.compile(r"\b[\w.+-]+@[\w-]+\.[\w.]+\b"),  # e-mail
    re.compile(r"https?://\S+"),  # link
    re.compile(r"(?<![\w.])\d+(?:[.:/-]\d+)*"),  # numbers, dates, times, versions
    re.compile(r"\b(?=[A-Za-z]*\d)(?=\d*[A-Za-z])[A-Za-z0-9]{4,}\b"),  # codes: E12345678, ABC123
    re.compile(r"(?<![\w#])#[\w-]+"),  # hashtag
    re.compile(r"(?<!\w)@\w+"),  # mention
    re.compile(r"(?<=[a-z,;:] )[A-Z][a-zA-Z]+(?: [A-Z][a-zA-Z]+)*"),  # a capitalised name mid-sentence
    re.compile(r"《[^》]{1,40}》|「[^」]{1,40}」|“[^”]{1,40}”"),  # Chinese titles and quotations
    re.compile(r"`[^`\n]{1,80}`"),  # inline code
)
_CODE_FENCE = re.compile(r"^\s*(```|~~~)", re.MULTILINE)
_HEADING = re.compile(r"^\s*#{1,6}\s", re.MULTILINE)
_LIST_ITEM = re.compile(r"^\s*(?:[-*+•]|\d+[.)、])\s", re.MULTILINE)


def _count_words(text: str, words: Sequence[str]) -> int:
    lowered = text.lower()
    count = 0
    for word in words:
        if _ASCII_WORD.match(word):
            count += len(re.findall(rf"\b{re.escape(word)}\b", lowered))
        else:
            count += lowered.count(word)
    return count


def sentiment(text: str) -> float:
    """Strength of emotion: strong and medium emotion words, exclamation marks, shouting, emoji."""
    strong = _count_words(text, _STRONG)
    medium = _count_words(text, _MEDIUM)
    marks = len(_STRONG_MARKS.findall(text)) + len(_SHOUTING.findall(text))
    return min(1.0, 0.3 * strong + 0.15 * medium + 0.1 * min(marks, 3))


def density(text: str) -> float:
    """Information density: entities and numbers, code blocks, headings and list items."""
    if not text.strip():
        return 0.0
    entities = sum(len(p.findall(text)) for p in _ENTITY_PATTERNS)
    code_blocks = len(_CODE_FENCE.findall(text)) // 2
    headings = len(_HEADING.findall(text))
    items = len(_LIST_ITEM.findall(text))
    return min(1.0, entities / 8 + min(0.3, 0.15 * code_blocks) + min(0.2, 0.05 * headings) + min(0.2, 0.04 * items))


def feedback(access_count: int, last_accessed_at: datetime | None, now: datetime) -> float:
    """Accesses with time decay: ten recent accesses score 1; each idle day takes 5 % off."""
    if access_count <= 0 or last_accessed_at is None:
        return 0.0
    days = max(0.0, (now - last_accessed_at).total_seconds() / 86400)
    return float(min(1.0, access_count / _FEEDBACK_SATURATION) * _FEEDBACK_DECAY**days)


def access_frequency(access_count: int) -> float:
    """How often a turn was retrieved, saturating (five accesses ≈ 0.63)."""
    return 1.0 - math.exp(-max(0, access_count) / _ACCESS_SCALE)


def novelty(nearest_similarity: float | None) -> float | None:
    """1 − the highest similarity to an earlier turn; None while the turn has no vector."""
    if nearest_similarity is None:
        return None
    return max(0.0, min(1.0, 1.0 - nearest_similarity))


def parts_for(
    text: str,
    access_count: int,
    last_accessed_at: datetime | None,
    now: datetime,
    novelty_part: float | None,
) -> ImportanceParts:
    """The five parts of one turn's importance."""
    return ImportanceParts(
        novelty_part,
        sentiment(text),
        feedback(access_count, last_accessed_at, now),
        access_frequency(access_count),
        density(text),
    )


def rescored(
    parts: ImportanceParts, access_count: int, last_accessed_at: datetime | None, now: datetime
) -> ImportanceParts:
    """The same parts with feedback and access brought up to ``now`` (the text-bound parts are kept)."""
    return ImportanceParts(
        parts.novelty,
        parts.sentiment,
        feedback(access_count, last_accessed_at, now),
        access_frequency(access_count),
        parts.density,
    )


def score(parts: ImportanceParts, weights: ImportanceWeights) -> float:
    """The weighted mean of the parts, in [0, 1]."""
    novelty_part = NEUTRAL_NOVELTY if parts.novelty is None else parts.novelty
    pairs = (
        (weights.novelty, novelty_part),
        (weights.sentiment, parts.sentiment),
        (weights.feedback, parts.feedback),
        (weights.access, parts.access),
        (weights.density, parts.density),
    )
    total = sum(w for w, _ in pairs)
    return 0.0 if total <= 0 else round(sum(w * p for w, p in pairs) / total, 4)

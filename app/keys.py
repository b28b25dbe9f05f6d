"""Keys written by the model: a few facts per stretch of a session, each citing the turns it came from.

A raw turn often holds its fact in words a later question does not share: "I'm off to go
swimming with the kids" answers "What activities does Melanie do?" without her name or the
word. Asked once per stretch of a session (``keys.turns_per_request`` turns), the configured
model restates what was said as short facts that name people and places ("Melanie goes
swimming with her kids"), each ending with the numbers of the messages it comes from. The
memory keeps them beside the turns (``memory.keys``): a search that matches a fact finds the
turns it cites. Nothing is replaced and nothing is paraphrased into the transcript; a fact
citing no message it was shown is dropped.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from huichat.app.prompts import uses_chinese
from huichat.app.titles import _THINKING
from huichat.memory.turns import STATUS_FAILED, Turn, shorten
from huichat.providers.events import TextDelta

if TYPE_CHECKING:
    from huichat.providers.llm import LLMClient

EXCERPT_CHARS = 300
"""Characters of each message the model sees (a long answer's start says what it is about)."""
FACT_CHARS = 200
"""The longest fact kept."""

_ASK = {
    "en": "Above is a conversation. List at most {count} facts from it, one a line, for an index that finds "
    "them later. Each fact is a short sentence that names the person (never I, you, he or she) and says what "
    "they did, have, like, plan or feel, with the day when it is said. End each line with the numbers of "
    "the messages it comes from, in brackets. Go through the conversation from its first message to its last; "
    "say each fact once; skip greetings and thanks. For example:\n"
    "- Anna adopted a cat named Miso in March. [4]\n"
    "- Ben plans to run a marathon in Berlin. [7, 8]\n"
    "Reply with the list only.",
    "zh": "上面是一段对话。列出其中最多 {count} 条事实，每行一条，用于以后检索。每条是一句简短的话，写出人名"
    "（不要用我、你、他、她），说明他们做了、有、喜欢、计划或感受什么，提到日子时写上日子。每行末尾用方括号"
    "写出它来自哪几条消息的编号。从第一条消息看到最后一条；每条事实只写一次；略过问候和感谢。例如：\n"
    "- 小林三月领养了一只叫米粒的猫。[4]\n"
    "- 老王打算去柏林跑马拉松。[7, 8]\n"
    "只回复这份列表。",
}
_HEADER = {"en": "Conversation of {day}:", "zh": "{day} 的对话："}
_REFERENCE = re.compile(r"[\[【(（]\s*((?:\d+\s*[,，、;；]?\s*)+)[\]】)）]\s*[.。]?\s*$")
_BULLET = re.compile(r"^\s*(?:[-*•·]|\d+[.)、]|（?\d+）)\s*")


@dataclass(frozen=True)
class WrittenKey:
    """One fact the model wrote and the turns it cites (ids, in the order the model gave them)."""

    text: str
    turn_ids: tuple[str, ...]


def _language(turns: Sequence[Turn]) -> str:
    said = " ".join(m.text for t in turns for m in t.messages if m.is_chat)[:2000]
    return "zh" if uses_chinese(said) else "en"


def _label(turn: Turn, role: str, speaker: str) -> str:
    if speaker and speaker != role:
        return speaker
    return "assistant" if role == "assistant" else "user"


def keys_request(turns: Sequence[Turn], count: int) -> tuple[list[dict[str, Any]], list[str]]:
    """The messages that ask for ``count`` facts about ``turns``, and the turn id behind each message number.

    Each chat message is one numbered line (its first ``EXCERPT_CHARS`` characters); a turn
    of a question and its answer gives two numbers, both pointing at it.
    """
    said = [t for t in turns if t.status != STATUS_FAILED]
    language = _language(said)
    numbered: list[str] = []
    lines: list[str] = []
    for turn in said:
        for message in turn.messages:
            if not (message.is_chat and message.text.strip()):
                continue
            numbered.append(turn.id)
            excerpt = shorten(" ".join(message.text.split()), EXCERPT_CHARS)
            lines.append(f"[{len(numbered)}] {_label(turn, message.role, message.speaker)}: {excerpt}")
    day = said[0].timestamp.strftime("%Y-%m-%d") if said else ""
    content = _HEADER[language].format(day=day) + "\n" + "\n".join(lines)
    return [{"role": "user", "content": content + "\n\n" + _ASK[language].format(count=count)}], numbered


def parse_keys(answer: str, numbered: Sequence[str], count: int) -> list[WrittenKey]:
    """The facts in a model's answer that cite at least one message it was shown (at most ``count``).

    A line without a citation, or citing only numbers that were not shown, is dropped: a fact
    that cannot point at its turns could only mislead. Repeated facts are kept once.
    """
    kept: list[WrittenKey] = []
    seen: set[str] = set()
    for raw in _THINKING.sub("", answer).splitlines():
        line = _BULLET.sub("", raw.strip()).strip()
        match = _REFERENCE.search(line)
        if not match:
            continue
        numbers = [int(n) for n in re.findall(r"\d+", match.group(1))]
        ids = tuple(dict.fromkeys(numbered[n - 1] for n in numbers if 1 <= n <= len(numbered)))
        text = " ".join(line[: match.start()].split()).strip(" -:：")
        if not ids or len(text) < 6 or text.casefold() in seen:
            continue
        seen.add(text.casefold())
        kept.append(WrittenKey(shorten(text, FACT_CHARS), ids))
        if len(kept) == count:
            break
    return kept


async def model_keys(
    llm: LLMClient, turns: Sequence[Turn], count: int, *, provider: str | None = None
) -> list[WrittenKey]:
    """``provider``'s facts about ``turns``; raises ``ProviderError``.

    The request goes straight to the provider: it is never a turn, never stored as one.
    """
    messages, numbered = keys_request(turns, count)
    if not numbered:
        return []
    stream = llm.stream(messages, provider=provider)
    pieces = [event.text async for event in stream if isinstance(event, TextDelta)]
    return parse_keys("".join(pieces), numbered, count)

"""Session titles: what the model is asked, what is kept of its answer, and the local fallback.

A title is the session's topic (话题): the sessions list, the memory panel and every tool
result show it. The model writes it in the user's language after the first exchange and
looks again every ``chat.retitle_every`` turns (it keeps the title when the conversation
has not moved on). Without a provider, or when the request fails, the first message's
leading clause stands in — no request, no wait.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from huichat.app.prompts import language_of_message
from huichat.memory.turns import STATUS_FAILED, Turn, first_said, shorten
from huichat.providers.events import TextDelta

if TYPE_CHECKING:
    from huichat.providers.llm import LLMClient

TITLE_CHARS = 40
"""The longest title kept from the model."""
_EXCERPT_CHARS = 300
"""Characters of each message the model sees (the first turn and the most recent ones)."""
_RECENT_TURNS = 4
_THINKING = re.compile(r"<think>.*?(</think>|$)", re.DOTALL)
_LABEL = re.compile(r"^(title|标题|题目|话题)\s*[:：]\s*", re.IGNORECASE)
_QUOTES = "\"'“”‘’「」『』《》`*_#"

_ASK = {
    "zh": "你为对话起标题。只回复一个不超过 12 个字的中文标题，说清这段对话在谈什么；"
    "不要引号，不要句号，不要任何别的内容。",
    "en": "You name conversations. Reply with one title of at most 6 words that says what this "
    "conversation is about, in English. No quotes, no final full stop, nothing else.",
}
_KEEP = {
    "zh": "现在的标题是「{title}」。如果它仍然概括这段对话，就原样回复它；否则回复新标题。",
    "en": 'The current title is "{title}". If it still fits the conversation, reply with it unchanged; '
    "otherwise reply with a new title.",
}


def clean_title(answer: str) -> str:
    """The title in a model's answer: no thinking, label, quotes or markup; one line, not too long ('' if none)."""
    text = _THINKING.sub("", answer)
    line = next((ln.strip() for ln in text.splitlines() if ln.strip()), "")
    line = _LABEL.sub("", line).strip(_QUOTES + " ").rstrip("。.!！")
    return shorten(" ".join(line.split()).strip(_QUOTES + " "), TITLE_CHARS)


def language_of(turns: Sequence[Turn]) -> str:
    """The language of the session's first user message (``zh`` or ``en``): the language of its prompts."""
    return language_of_message(first_said(turns))


def title_request(turns: Sequence[Turn], current: str = "") -> list[dict[str, Any]]:
    """The messages that ask for a title: the first turn and the most recent ones, cut short."""
    language = language_of(turns)
    said = [t for t in turns if t.status != STATUS_FAILED] or list(turns)
    shown = said[:1] + [t for t in said[-_RECENT_TURNS:] if t is not said[0]]
    lines = []
    for turn in shown:
        for message in turn.messages:
            if message.is_chat and message.text.strip():
                excerpt = " ".join(message.text.split())[:_EXCERPT_CHARS]
                lines.append(f"{'assistant' if message.role == 'assistant' else 'user'}: {excerpt}")
    content = "\n".join(lines)
    if current:
        content += "\n\n" + _KEEP[language].format(title=current)
    return [{"role": "system", "content": _ASK[language]}, {"role": "user", "content": content}]


async def model_title(llm: LLMClient, turns: Sequence[Turn], current: str = "", *, provider: str | None = None) -> str:
    """``provider``'s title for ``turns`` ('' when its answer holds none); raises ``ProviderError``.

    The request goes straight to the provider: it is never a turn, never stored, never searched.
    """
    stream = llm.stream(title_request(turns, current), provider=provider)
    pieces = [event.text async for event in stream if isinstance(event, TextDelta)]
    return clean_title("".join(pieces))


def title_due(turn_count: int, titled_at: int | None, every: int) -> bool:
    """Whether a session of ``turn_count`` turns wants a (new) title.

    Never titled: after its first exchange. Titled at ``titled_at`` turns: again once
    ``every`` more turns were said (0: never again).
    """
    if turn_count < 1:
        return False
    if titled_at is None:
        return True
    return every > 0 and turn_count - titled_at >= every

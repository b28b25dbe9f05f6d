"""What a streaming reply yields: our own event types, never litellm's chunks."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class TextDelta:
    """A piece of the reply's text, in order (never a part of a tool call printed as text)."""

    text: str


@dataclass(frozen=True)
class ToolCallRequest:
    """A complete tool call the model asked for (assembled from streamed deltas or read from its text)."""

    id: str
    """The provider's call id (the tool result answers it); made up when the call was read from text."""
    name: str
    arguments: dict[str, Any]
    """The arguments as parsed (empty when they could not be)."""
    raw_arguments: str = ""
    """The arguments as the model wrote them (shown when they could not be parsed; what tells repeats apart)."""
    error: str = ""
    """Set when the call could not be read (invalid JSON, no tool name); it is answered with this error."""
    from_text: bool = False
    """True when the model printed the call as text instead of making a structured call."""


@dataclass(frozen=True)
class ReplyDone:
    """The model finished this request."""

    finish_reason: str
    model: str
    """The model that answered, as the provider names it."""
    tool_calls: tuple[ToolCallRequest, ...] = field(default=())
    text: str = ""
    """Everything the model wrote, call markup included (the ``TextDelta``s are the part fit to show)."""


ProviderEvent = TextDelta | ToolCallRequest | ReplyDone


def repair_text(text: str) -> str:
    """``text`` with surrogate pairs (split across streamed chunks, then joined) made whole.

    A lone surrogate cannot be written as UTF-8; it becomes U+FFFD.
    """
    if not any("\ud800" <= ch <= "\udfff" for ch in text):
        return text
    return text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "replace")


class TextJoiner:
    """Turns streamed pieces into pieces that are valid text: a high surrogate that ends one
    piece waits for the low surrogate that starts the next."""

    def __init__(self) -> None:
        self._pending = ""

    def feed(self, piece: str) -> str:
        """The part of ``pending + piece`` that is complete."""
        text = self._pending + piece
        if text and "\ud800" <= text[-1] <= "\udbff":
            self._pending, text = text[-1], text[:-1]
        else:
            self._pending = ""
        return repair_text(text)

    def flush(self) -> str:
        """What is still pending at the end of the stream (a lone surrogate, repaired)."""
        pending, self._pending = self._pending, ""
        return repair_text(pending)

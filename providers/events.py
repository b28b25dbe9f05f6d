"""What a streaming reply yields: our own event types, never litellm's chunks."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class TextDelta:
    """A piece of the reply's text, in order."""

    text: str


@dataclass(frozen=True)
class ToolCallRequest:
    """A complete tool call the model asked for (assembled from streamed deltas)."""

    id: str
    name: str
    arguments: dict[str, Any]
    raw_arguments: str = ""
    error: str = ""
    """Set when the arguments were not valid JSON; the call is answered with this error."""
    from_text: bool = False
    """True when the model printed the call as JSON text instead of a structured call."""


@dataclass(frozen=True)
class ReplyDone:
    """The model finished this request."""

    finish_reason: str
    model: str
    tool_calls: tuple[ToolCallRequest, ...] = field(default=())
    text: str = ""


ProviderEvent = TextDelta | ToolCallRequest | ReplyDone

"""One reply as it arrives, streamed or whole: its text made fit to show, its tool calls assembled.

It reads litellm's chunk and response objects by their OpenAI field names only, so it needs
no litellm import (``providers/llm.py`` stays the only module that has one).
"""

from __future__ import annotations

from collections.abc import Collection
from typing import Any

from huichat.providers.events import ReplyDone, TextJoiner
from huichat.providers.textcalls import CallSieve
from huichat.providers.toolcalls import ToolCallAssembler


class ReplyReader:
    """One reply as it arrives: text through the joiner and the call sieve, tool-call deltas assembled."""

    def __init__(self, tool_names: Collection[str], model: str) -> None:
        self.joiner = TextJoiner()
        self.sieve = CallSieve(tool_names) if tool_names else None
        self.assembler = ToolCallAssembler()
        self.pieces: list[str] = []
        self.finish = ""
        self.model = model

    @property
    def empty(self) -> bool:
        """Nothing came: no text, no tool call."""
        return not "".join(self.pieces).strip() and not self.assembler.calls()

    def text(self, piece: str) -> str:
        """Take a piece of text; returns what is fit to show now."""
        whole = self.joiner.feed(piece)
        self.pieces.append(whole)
        return self.sieve.feed(whole) if self.sieve else whole

    def chunk(self, chunk: Any) -> list[str]:
        """Take one streamed chunk; returns the text fit to show now."""
        self.model = getattr(chunk, "model", None) or self.model
        if not chunk.choices:
            return []
        choice = chunk.choices[0]
        delta = choice.delta
        shown = self.text(delta.content) if delta is not None and delta.content else ""
        for call in (delta.tool_calls if delta is not None else None) or []:
            function = call.function
            self.assembler.add(
                call.index, call.id, function.name if function else None, function.arguments if function else None
            )
        if choice.finish_reason:
            self.finish = choice.finish_reason
        return [shown] if shown else []

    def message(self, response: Any) -> str:
        """Take a whole (unstreamed) response; returns the text fit to show."""
        self.model = getattr(response, "model", None) or self.model
        choice = response.choices[0]
        message = choice.message
        for index, call in enumerate(message.tool_calls or []):
            self.assembler.add(index, call.id, call.function.name, call.function.arguments)
        self.finish = choice.finish_reason or ""
        return self.text(str(message.content)) if message.content else ""

    def done(self) -> tuple[str, ReplyDone]:
        """The text still to show, and the finished reply."""
        rest = self.joiner.flush()
        self.pieces.append(rest)
        calls = tuple(self.assembler.calls())
        tail = rest
        if self.sieve is not None:
            tail = self.sieve.feed(rest)
            sifted = self.sieve.finish()
            tail += sifted.tail
            calls = calls or sifted.calls
        text = "".join(self.pieces)
        return tail, ReplyDone(self.finish or ("tool_calls" if calls else "stop"), str(self.model), calls, text)

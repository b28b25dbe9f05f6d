"""Cutting a visible branch into huichat turns.

The rules (deliberate, tested):

- A user message starts a turn; the assistant and tool messages after it join it — the
  reply, and its reasoning, tool calls and tool results as typed, non-chat parts. Several
  assistant messages in a row (thoughts, recap, answer; an answer continued) are one reply.
- A user message followed by another user message got no reply: it is a one-message turn,
  and the next user message starts the next turn. Messages are never merged or reordered.
- An assistant or tool message with no user message before it (a greeting, a reply whose
  prompt was hidden) starts a turn of its own; what follows it joins as above.
- A note (or a system message a source left visible) is a one-message turn.
- Sources with their own turns (huichat transcripts: ``source_turn``) keep them exactly.

Each turn keeps the source ids of every message in it: with the conversation's service and
id they are the idempotency keys.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from huichat.memory.imports.model import ImportedMessage, Role


@dataclass(frozen=True)
class ImportedTurn:
    """One huichat turn made of consecutive messages of a visible branch."""

    messages: tuple[ImportedMessage, ...]

    @property
    def source_ids(self) -> tuple[str, ...]:
        """The source ids of every message in the turn, in order."""
        return tuple(m.id for m in self.messages)

    @property
    def timestamp(self) -> datetime:
        """When the turn began: its first message's time (tree order, not the earliest clock)."""
        return self.messages[0].time.instant

    @property
    def time_estimated(self) -> bool:
        """True when the turn's own time was not the source's value."""
        return self.messages[0].time.estimated

    @property
    def chat_messages(self) -> tuple[ImportedMessage, ...]:
        """The messages with visible text (what a transcript shows as the conversation)."""
        return tuple(m for m in self.messages if m.text)


_ALONE = (Role.NOTE, Role.SYSTEM)


def group_turns(messages: Sequence[ImportedMessage]) -> list[ImportedTurn]:
    """The turns of a visible branch (see the module doc for the rules)."""
    turns: list[list[ImportedMessage]] = []
    for message in messages:
        current = turns[-1] if turns else None
        if message.source_turn:
            joins = current is not None and current[-1].source_turn == message.source_turn
        elif current is None or current[-1].source_turn or message.role in _ALONE or current[0].role in _ALONE:
            joins = False
        else:
            joins = message.role in (Role.ASSISTANT, Role.TOOL)
        if joins and current is not None:
            current.append(message)
        else:
            turns.append([message])
    return [ImportedTurn(tuple(turn)) for turn in turns]

"""Where the next turn of a session goes, and how a draft becomes that turn (``MemoryKernel.append_turns``)."""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import UTC
from typing import Any

from huichat.memory.branches import AFTER
from huichat.memory.index_schema import EventReader
from huichat.memory.turns import Turn, TurnDraft, plain_text

_SURROGATE = re.compile("[\ud800-\udfff]")


@dataclass
class SessionHandle:
    """Where the next turn of a session goes."""

    session_id: str
    session_file: str
    next_index: int = 0
    last_turn: Turn | None = None
    """The previous turn: the next one links to it, and its tail is embedded with the next one when in context."""
    fork: bool = False
    """The next turn does not follow the last one written in the transcript (a new branch, or
    one the user switched to): it records which turn it follows (``memory.branches``)."""


@dataclass(frozen=True)
class SessionWrite:
    """Turns to append to one session, and the facts for the header of a new transcript."""

    session: SessionHandle
    drafts: Sequence[TurnDraft]
    session_meta: Mapping[str, Any] | None = None


def drafted_turns(
    session: SessionHandle, drafts: Sequence[TurnDraft], fresh_id: Callable[[str], str], read_events: EventReader
) -> list[Turn]:
    """The turns ``drafts`` become at the end of ``session`` (which is not moved on): each with a
    ``fresh_id(its wanted id)``, linked to the one before, with the times it talks about (``read_events``)."""
    turns: list[Turn] = []
    previous = session.last_turn.id if session.last_turn else None
    for draft in map(_storable, drafts):
        timestamp = draft.timestamp.astimezone(UTC)
        turn = Turn(
            id=fresh_id(draft.wanted_id),
            session_id=session.session_id,
            session_file=session.session_file,
            turn_index=session.next_index + len(turns),
            timestamp=timestamp,
            messages=draft.messages,
            topic=draft.topic,
            prev_id=previous,
            recalled_ids=draft.recalled_ids,
            status=draft.status,
            extra=tuple(sorted({**dict(draft.extra), AFTER: previous or ""}.items()))
            if session.fork and not turns
            else draft.extra,
            events=read_events(plain_text(draft.messages), timestamp),
        )
        turns.append(turn)
        previous = turn.id
    return turns


def _storable(draft: TurnDraft) -> TurnDraft:
    """The draft with any lone surrogate (half of a character pair) replaced by U+FFFD.

    Such text cannot be encoded, in a transcript or in the index; the rest of the turn is kept.
    """
    if not any(_SURROGATE.search(m.text) for m in draft.messages):
        return draft
    messages = tuple(replace(m, text=_SURROGATE.sub("\ufffd", m.text)) for m in draft.messages)
    return replace(draft, messages=messages)

"""The turn model: one round of conversation with its anchors in the linked list."""

from __future__ import annotations

import hashlib
import re
import secrets
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime, timedelta
from pathlib import PurePosixPath

TURN_ID_RE = re.compile(r"^[a-z0-9]{6}$")
_ALPHABET = "abcdefghijklmnopqrstuvwxyz0123456789"

STATUS_OK = "ok"
STATUS_FAILED = "failed"


@dataclass(frozen=True)
class Message:
    """One utterance inside a turn."""

    role: str
    """``user``, ``assistant`` or ``note`` (imported one-message turns)."""
    text: str
    speaker: str = ""
    """Who said it; defaults to the role."""

    @property
    def who(self) -> str:
        """The name shown for this message."""
        return self.speaker or self.role


@dataclass(frozen=True)
class Turn:
    """One stored round of conversation.

    ``timestamp`` is timezone-aware UTC. ``prev_id``/``next_id`` link the turns of a
    session both ways; ``recalled_ids`` is the tool trace (what memory was used).
    """

    id: str
    session_id: str
    session_file: str
    turn_index: int
    timestamp: datetime
    messages: tuple[Message, ...]
    topic: str = ""
    prev_id: str | None = None
    next_id: str | None = None
    recalled_ids: tuple[str, ...] = ()
    status: str = STATUS_OK
    access_count: int = 0
    last_accessed_at: datetime | None = None
    extra: tuple[tuple[str, str], ...] = field(default=(), compare=False)

    @property
    def text(self) -> str:
        """The turn as plain text, one ``speaker: message`` paragraph per message."""
        return "\n".join(f"{m.who}: {m.text}" for m in self.messages)

    def with_links(self, prev_id: str | None, next_id: str | None) -> Turn:
        """A copy with other neighbours."""
        return replace(self, prev_id=prev_id, next_id=next_id)


CONTEXT_CHARS = 300
"""How much of the previous turn is indexed with a turn (its conversational context)."""
CONTEXT_GAP = timedelta(minutes=15)
"""The longest pause after which the previous turn still counts as a turn's context."""


def in_context(turn: Turn, previous: Turn | None) -> bool:
    """True when ``previous`` is the conversation ``turn`` continues: same session, no long pause.

    A reply written right after a message answers it; a message written hours later in
    the same session is usually about something else, and mixing the two blurs both.
    """
    return (
        previous is not None
        and previous.session_id == turn.session_id
        and abs(turn.timestamp - previous.timestamp) <= CONTEXT_GAP
    )


def search_text(turn: Turn, previous: Turn | None) -> str:
    """What is embedded for ``turn``: its text, after the tail of the turn before when in context.

    A reply like "yes, twice a week" means little alone; with the question before it, it
    is findable. Measured in BENCHMARKS.md.
    """
    if previous is None or not in_context(turn, previous):
        return turn.text
    return f"{previous.text[-CONTEXT_CHARS:]}\n{turn.text}"


def index_digest(text: str, turn: Turn) -> str:
    """A digest of what is indexed for a turn, to notice edited transcripts."""
    digest = hashlib.blake2b(digest_size=12)
    for part in (text, turn.topic, turn.timestamp.isoformat(), turn.status):
        digest.update(part.encode("utf-8"))
        digest.update(b"\x00")
    return digest.hexdigest()


def new_turn_id() -> str:
    """A random 6-character id (lowercase letters and digits); callers check it is unused."""
    return "".join(secrets.choice(_ALPHABET) for _ in range(6))


def is_turn_id(value: str) -> bool:
    """True when ``value`` has the shape of a turn id."""
    return bool(TURN_ID_RE.match(value))


def new_session_id(local_now: datetime) -> str:
    """A readable, sortable session id: ``YYYYMMDD-HHMMSS-xxxx`` (local time given)."""
    return local_now.strftime("%Y%m%d-%H%M%S-") + "".join(secrets.choice(_ALPHABET) for _ in range(4))


def session_relpath(session_id: str, started: datetime) -> str:
    """The seed's layout: ``<YYYY>-W<ww>/<YYYY-MM-DD>/chat_<session>.md`` (local date)."""
    iso = started.isocalendar()
    week = f"{iso.year}-W{iso.week:02d}"
    return str(PurePosixPath(week) / started.strftime("%Y-%m-%d") / f"chat_{session_id}.md")


def utc_now() -> datetime:
    """The current time in UTC (only composition roots call this)."""
    return datetime.now(UTC)

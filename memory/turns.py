"""The turn model: one round of conversation with its anchors in the linked list."""

from __future__ import annotations

import hashlib
import re
import secrets
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime, timedelta
from functools import cached_property
from pathlib import PurePosixPath
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from huichat.memory.timeparse.ranges import TimeRange

TURN_ID_RE = re.compile(r"^[a-z0-9]{6}$")
_ALPHABET = "abcdefghijklmnopqrstuvwxyz0123456789"

TEXT = "text"
"""The kind of a message that was said (the other kinds are typed parts)."""
CORRECTION = "correction"
"""The kind of a note the user attached to a turn later (``huichat correct``): searched and
recalled with the turn, marked as a later correction; its ``speaker`` is when it was written."""

STATUS_OK = "ok"
STATUS_FAILED = "failed"
STOPPED = "the reply was stopped"
"""The ``error`` of a failed turn whose reply the user stopped (what arrived was kept)."""

TIER_WORKING = "working"
TIER_LONG_TERM = "long_term"
TIER_ARCHIVE = "archive"
TIERS = (TIER_WORKING, TIER_LONG_TERM, TIER_ARCHIVE)
"""The seed's three tiers. They rank and group turns; no tier ever removes one."""

ROLE_REPRESENTATIVE = "representative"
ROLE_MEMBER = "member"
ROLE_SEPARATE = "separate"
"""Cluster roles: the turn that stands for its near-duplicates, one of those, or a turn the
user took out of a cluster (consolidation leaves it alone from then on)."""


@dataclass(frozen=True)
class Message:
    """One part of a turn: an utterance, or a typed part that is kept but not chat.

    ``kind`` is ``text`` for what was said; the other kinds — ``reasoning``, ``tool_call``,
    ``tool_result``, ``attachment`` (a placeholder for a non-text part) and ``raw`` (kept
    as found) — are stored and shown but are not part of the turn's searchable text; a
    ``correction`` (read from the transcript's later records, never stored in the turn) is.
    """

    role: str
    """``user``, ``assistant``, ``note`` (imported one-message turns), ``system`` or ``tool``."""
    text: str
    speaker: str = ""
    """Who said it (for a tool part: the tool's name); defaults to the role."""
    kind: str = TEXT

    @property
    def who(self) -> str:
        """The name shown for this message."""
        return self.speaker or self.role

    @property
    def is_chat(self) -> bool:
        """True for what was said (searchable), False for typed parts (tool calls, reasoning…)."""
        return self.kind == TEXT

    def to_record(self) -> dict[str, Any]:
        """The message as plain data (the one encoding used by transcripts, the index and the APIs)."""
        record: dict[str, Any] = {"role": self.role, "speaker": self.speaker, "text": self.text}
        if self.kind != TEXT:
            record["kind"] = self.kind
        return record

    @classmethod
    def from_record(cls, data: Mapping[str, Any]) -> Message:
        """The inverse of ``to_record``."""
        return cls(
            str(data.get("role") or "user"),
            str(data.get("text") or ""),
            str(data.get("speaker") or ""),
            str(data.get("kind") or TEXT),
        )


@dataclass(frozen=True)
class ImportanceParts:
    """The seed's five parts of a turn's importance, each in [0, 1].

    ``novelty`` is None until the turn has a vector (it compares the turn with earlier ones).
    """

    novelty: float | None
    sentiment: float
    feedback: float
    access: float
    density: float

    def to_record(self) -> dict[str, float | None]:
        """The parts as plain data (rounded: they are estimates, not measurements)."""
        return {
            "novelty": None if self.novelty is None else round(self.novelty, 4),
            "sentiment": round(self.sentiment, 4),
            "feedback": round(self.feedback, 4),
            "access": round(self.access, 4),
            "density": round(self.density, 4),
        }

    @classmethod
    def from_record(cls, data: Mapping[str, Any]) -> ImportanceParts:
        """The inverse of ``to_record``."""
        novelty = data.get("novelty")
        return cls(
            None if novelty is None else float(novelty),
            float(data.get("sentiment") or 0.0),
            float(data.get("feedback") or 0.0),
            float(data.get("access") or 0.0),
            float(data.get("density") or 0.0),
        )


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
    tier: str = TIER_WORKING
    importance: float | None = None
    """0–1, None until scored (see ``memory.importance``)."""
    importance_parts: ImportanceParts | None = None
    cluster_id: str = ""
    """The consolidation cluster of near-duplicates this turn belongs to ('' for none)."""
    cluster_role: str = ""
    """``representative``, ``member``, ``separate`` or '' (see the ROLE_ constants)."""
    events: tuple[TimeRange, ...] = field(default=(), compare=False)
    """The times the turn talks about, resolved against when it was said (``TimeResolver.event_ranges``).

    Read from the text once when the turn is written, and kept in its transcript and index
    row; a turn indexed from its transcript has them read again from its text
    (``Indexer.transcript_entries``), so an edited transcript or a better resolver rebuilds them."""

    @cached_property
    def text(self) -> str:
        """What was said, as plain text (``plain_text``; made once: a search reads it of every candidate a few times)."""
        return plain_text(self.messages)

    def with_links(self, prev_id: str | None, next_id: str | None) -> Turn:
        """A copy with other neighbours."""
        return replace(self, prev_id=prev_id, next_id=next_id)

    def to_record(self) -> dict[str, Any]:
        """Every field as plain JSON-able data, under the one set of field names.

        Transcripts, the index, ``huichat show --json`` and the HTTP API all encode a turn
        with this; each keeps the fields it needs.
        """
        return {
            "id": self.id,
            "session_id": self.session_id,
            "session_file": self.session_file,
            "turn_index": self.turn_index,
            "timestamp": self.timestamp.isoformat(),
            "topic": self.topic,
            "prev_id": self.prev_id,
            "next_id": self.next_id,
            "messages": [m.to_record() for m in self.messages],
            "recalled_ids": list(self.recalled_ids),
            "status": self.status,
            "access_count": self.access_count,
            "last_accessed_at": self.last_accessed_at.isoformat() if self.last_accessed_at else None,
            "extra": dict(self.extra),
            "tier": self.tier,
            "importance": None if self.importance is None else round(self.importance, 4),
            "importance_parts": self.importance_parts.to_record() if self.importance_parts else None,
            "cluster_id": self.cluster_id,
            "cluster_role": self.cluster_role,
            "events": [r.to_record() for r in self.events],
        }

    @classmethod
    def from_record(cls, data: Mapping[str, Any]) -> Turn:
        """The inverse of ``to_record``; missing optional fields take their defaults.

        Raises ``KeyError``, ``ValueError`` or ``TypeError`` on a record that cannot be a turn.
        """
        last = data.get("last_accessed_at")
        return cls(
            id=str(data["id"]),
            session_id=str(data["session_id"]),
            session_file=str(data["session_file"]),
            turn_index=int(data["turn_index"]),
            timestamp=_utc(data["timestamp"]),
            messages=tuple(Message.from_record(m) for m in data.get("messages") or ()),
            topic=str(data.get("topic") or ""),
            prev_id=data.get("prev_id") or None,
            next_id=data.get("next_id") or None,
            recalled_ids=tuple(str(i) for i in data.get("recalled_ids") or ()),
            status=str(data.get("status") or STATUS_OK),
            access_count=int(data.get("access_count") or 0),
            last_accessed_at=_utc(last) if last else None,
            extra=tuple(sorted((str(k), str(v)) for k, v in (data.get("extra") or {}).items())),
            tier=str(data.get("tier") or TIER_WORKING),
            importance=None if data.get("importance") is None else float(data["importance"]),
            importance_parts=ImportanceParts.from_record(parts) if (parts := data.get("importance_parts")) else None,
            cluster_id=str(data.get("cluster_id") or ""),
            cluster_role=str(data.get("cluster_role") or ""),
            events=_events(data.get("events") or ()),
        )


def _events(records: Sequence[Mapping[str, Any]]) -> tuple[TimeRange, ...]:
    """Event ranges as stored; one that is not a range (a transcript edited by hand) is left out:
    the index derives them again from the text."""
    if not records:
        return ()
    # imported here: the resolver's rules take longer to load than the whole UI takes to paint
    from huichat.memory.timeparse.ranges import TimeRange

    events = []
    for record in records:
        try:
            events.append(TimeRange.from_record(record))
        except (KeyError, TypeError, ValueError, AttributeError):
            continue
    return tuple(events)


def _utc(value: datetime | str) -> datetime:
    moment = value if isinstance(value, datetime) else datetime.fromisoformat(value)
    if moment.tzinfo is None:
        raise ValueError(f"a turn's time must carry its zone: {value!r}")
    return moment.astimezone(UTC)


def plain_text(messages: Sequence[Message]) -> str:
    """What was said, as plain text: one ``speaker: message`` paragraph per chat message, then
    each later correction, marked as one (``✎ later correction (2026-12-02): …``)."""
    said = [f"{m.who}: {m.text}" for m in messages if m.is_chat]
    notes = [f"✎ later correction ({m.speaker[:10]}): {m.text}" for m in messages if m.kind == CORRECTION]
    return "\n".join([*said, *notes])


@dataclass(frozen=True)
class TurnDraft:
    """A turn to be written: what was said, when, by whom."""

    messages: tuple[Message, ...]
    timestamp: datetime
    topic: str = ""
    recalled_ids: tuple[str, ...] = ()
    status: str = STATUS_OK
    extra: tuple[tuple[str, str], ...] = ()
    wanted_id: str = ""
    """The id the turn had where it was read from (a huichat export): kept where no stored turn has it."""


TOPIC_CHARS = 24
"""The longest topic cut from a message (a session's local title)."""
_CLAUSE = re.compile(r"[\n。！？!?；;，,]")
_GREETING = re.compile(r"^(hi|hello|hey|你好|您好|嗨|哈喽|在吗)\W*$", re.IGNORECASE)


def shorten(text: str, limit: int) -> str:
    """``text`` in at most ``limit`` characters, ending in … when cut; a Latin word is not cut in two."""
    if len(text) <= limit:
        return text
    cut = text[: limit - 1]
    if text[limit - 1].isascii() and text[limit - 1].isalnum() and " " in cut:
        cut = cut.rsplit(" ", 1)[0]
    return cut.rstrip() + "…"


def derive_topic(text: str, limit: int = TOPIC_CHARS) -> str:
    """A topic cut from a first message, without asking a model: its first clause that is more
    than a greeting, shortened (a session's local title; an imported conversation's without one)."""
    clauses = [c.strip(" \t:：.、") for c in _CLAUSE.split(text.strip())]
    meaningful = [c for c in clauses if c and not _GREETING.match(c)]
    return shorten((meaningful or [c for c in clauses if c] or [""])[0], limit)


def first_said(turns: Sequence[Turn]) -> str:
    """What the user said first in ``turns`` (what a session's local title is cut from)."""
    return next((m.text for t in turns for m in t.messages if m.role == "user" and m.is_chat), "")


def local_title(turns: Sequence[Turn]) -> str:
    """A session's title without asking a model: cut from its first user message (``derive_topic``)."""
    return derive_topic(first_said(turns))


TITLE_MODEL = "model"
TITLE_LOCAL = "local"
TITLE_IMPORTED = "imported"
"""A title recorded without saying who wrote it: an imported conversation's own."""
TITLE_USER = "user"
"""A title the user gave (the palette's "Rename session…", ``huichat retitle ID --title``): no
automatic titling replaces it — not the model's, not a local one cut again after a forget."""


@dataclass(frozen=True)
class SessionTitle:
    """A session's title: every turn's topic (话题), recorded in the session's transcript."""

    text: str
    source: str = TITLE_LOCAL
    """``model`` (written by the LLM), ``local`` (cut from the first message, no request), ``imported``
    or ``user`` (given by the user: it stays until the user gives another)."""
    turns: int = 0
    """How many turns the session had when it was titled (when to look again)."""

    def to_meta(self) -> dict[str, Any]:
        """The session-level fields a transcript records."""
        return {"title": self.text, "title_source": self.source, "title_turns": self.turns}

    @classmethod
    def from_meta(cls, meta: Mapping[str, Any]) -> SessionTitle | None:
        """The title a transcript's session fields hold, or None (a session never titled)."""
        text = str(meta.get("title") or "").strip()
        if not text:
            return None
        turns = meta.get("title_turns")
        return cls(text, str(meta.get("title_source") or TITLE_IMPORTED), turns if isinstance(turns, int) else 0)


def one_line(text: str) -> str:
    """``text`` with its line breaks as spaces: for a line of its own (a heading, a label), where a
    line break would start a block of another kind (a forged turn in a transcript, a fake hit)."""
    return " ".join(text.splitlines())


def anchor_line(turn_id: str, prev_id: str | None, next_id: str | None, similarity: float | None = None) -> str:
    """The anchor line, ``[id:a3f2c7 | prev: k7f2a1 | next: d2n7p3 | 相似度: 0.778]`` (the seed's form).

    Without a similarity it is the line a transcript and the turn view show.
    """
    score = "" if similarity is None else f" | 相似度: {similarity:.3f}"
    return f"[id:{turn_id} | prev: {prev_id or 'none'} | next: {next_id or 'none'}{score}]"


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
    # one draw from the OS instead of six (an import makes tens of thousands of ids)
    number = secrets.randbelow(36**6)
    chars = []
    for _ in range(6):
        number, digit = divmod(number, 36)
        chars.append(_ALPHABET[digit])
    return "".join(chars)


def parse_turn_id(value: str) -> str | None:
    """The id in what a user typed or copied (``A3F2C7``, ``id:a3f2c7``, ``[id:a3f2c7]`` as an anchor
    line begins, `` a3f2c7 ``), or None when it is not one."""
    cleaned = (value or "").strip().removeprefix("[").removesuffix("]").strip().lower().removeprefix("id:").strip()
    return cleaned if is_turn_id(cleaned) else None


def not_a_turn_id(value: str) -> str:
    """The one line that says ``value`` is not a turn id."""
    return f"{(value or '')[:40]!r} is not a turn id (6 lowercase letters or digits, e.g. a3f2c7)"


def is_turn_id(value: str) -> bool:
    """True when ``value`` has the shape of a turn id."""
    return bool(TURN_ID_RE.match(value))


def asked_turn_id(query: str) -> tuple[str, bool] | None:
    """``(id, said as id:…)`` when the whole query is a turn id (``tsr5bv``, ``id:tsr5bv``,
    ``[id:tsr5bv]``, as results print them), else None. A bare id is also a word (``python`` has
    the shape of one): where no turn has it, it is searched for; ``id:`` says it is none."""
    inner = query.strip().removeprefix("[").removesuffix("]").strip()
    turn_id = parse_turn_id(query)
    return (turn_id, inner.lower().startswith("id:")) if turn_id is not None else None


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

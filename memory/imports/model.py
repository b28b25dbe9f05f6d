"""The neutral model every reader produces: conversations, messages and their typed parts.

Each source's quirks stop in its reader; what comes out is this one shape, whatever the
service. A conversation keeps everything the source held: the visible branch in tree order,
the branches the user did not end on (edits, regenerations), the nodes left out of the visible
chain (kept raw, with the reason) and notes on what had to be guessed.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass, field, fields
from datetime import datetime
from enum import StrEnum
from typing import Any

from huichat.memory.errors import KernelError


def _aware(text: str) -> datetime:
    moment = datetime.fromisoformat(text)
    if moment.tzinfo is None:
        raise ValueError(f"a time without a zone: {text!r}")
    return moment


class ImportFormatError(KernelError):
    """A file that cannot be read as a chat export; the text names the file and what was expected."""


class SourceFormat(StrEnum):
    """The export formats huichat reads, as named by ``--format``."""

    CHATGPT = "chatgpt"
    CLAUDE = "claude"
    DEEPSEEK = "deepseek"
    """The official DeepSeek export (``mapping`` with ``inserted_at`` and fragments)."""
    DEEPSEEK_WEB = "deepseek-web"
    """The web-API JSON that DeepSeek exporter scripts save (``data.biz_data``)."""
    LLM = "llm"
    """simonw/llm's ``logs.db``."""
    ELIA = "elia"
    JSONL = "jsonl"
    """OpenAI-style chat JSONL: ``{"messages": [...]}`` per line."""
    HUICHAT = "huichat"
    """huichat's own session transcripts (Markdown)."""
    HUICHAT_JSONL = "huichat-jsonl"
    """huichat's own JSONL export (``huichat export --format jsonl``)."""

    @property
    def service(self) -> str:
        """The service the ids belong to: both DeepSeek forms share one id space."""
        return "deepseek" if self is SourceFormat.DEEPSEEK_WEB else self.value


class Role(StrEnum):
    """Who wrote a message."""

    USER = "user"
    ASSISTANT = "assistant"
    SYSTEM = "system"
    TOOL = "tool"
    NOTE = "note"
    """huichat's own one-message note turns (only from huichat transcripts)."""

    @classmethod
    def from_chat(cls, name: str) -> Role:
        """The role of an OpenAI-style role name, as ChatGPT, elia, llm and chat JSONL store it;
        a name it does not know (``function``, a plugin's) is a tool's, never huichat's ``note``."""
        return cls(name) if name in ("user", "assistant", "system", "tool") else cls.TOOL


class PartKind(StrEnum):
    """What a piece of a message is. Only ``TEXT`` and ``ATTACHMENT`` are chat text."""

    TEXT = "text"
    REASONING = "reasoning"
    TOOL_CALL = "tool_call"
    TOOL_RESULT = "tool_result"
    ATTACHMENT = "attachment"
    """A file, image or audio clip; ``text`` is a readable placeholder such as ``[image photo.png, 1024×768]``."""
    CONTEXT = "context"
    """Text a platform injected into a message (memory, date), said by nobody."""
    UNKNOWN = "unknown"
    """A content type this importer does not know: ``raw`` holds it whole."""

    @property
    def is_chat(self) -> bool:
        """True for the parts that make up what was visibly said."""
        return self in (PartKind.TEXT, PartKind.ATTACHMENT)


@dataclass(frozen=True)
class Part:
    """One typed piece of a message."""

    kind: PartKind
    text: str = ""
    """TEXT: the text; REASONING: the reasoning; TOOL_CALL: the call's input (code or JSON);
    TOOL_RESULT: the output; ATTACHMENT and UNKNOWN: a readable placeholder."""
    name: str = ""
    """The tool, the attachment's file name, or the unknown content type."""
    call_id: str = ""
    """Pairs a tool call with its result where the source says so."""
    content: str = ""
    """An attachment's own text when the source carries it (Claude's ``extracted_content``)."""
    raw: str = ""
    """The source object as JSON when ``text`` does not hold all of it."""

    def to_record(self) -> dict[str, Any]:
        """The part as plain data (empty fields left out)."""
        record: dict[str, Any] = {"kind": self.kind.value}
        record.update((f.name, getattr(self, f.name)) for f in fields(self)[1:] if getattr(self, f.name))
        return record

    @classmethod
    def from_record(cls, data: Mapping[str, Any]) -> Part:
        """The inverse of ``to_record``; an unknown kind is read as ``unknown``."""
        kinds = {k.value for k in PartKind}
        kind = str(data.get("kind") or "")
        return cls(
            PartKind(kind) if kind in kinds else PartKind.UNKNOWN,
            *(str(data.get(name) or "") for name in ("text", "name", "call_id", "content", "raw")),
        )


@dataclass(frozen=True)
class SourceTime:
    """A time as the source wrote it and as a UTC instant.

    ``raw`` is the source's value verbatim (``""`` when it had none); ``estimated`` is true
    when the instant was not the source's own value for this message (inherited from the
    message before, or synthesised).
    """

    raw: str
    instant: datetime
    estimated: bool = False

    def to_record(self) -> dict[str, Any]:
        """The time as plain data: ``{"raw", "at"}`` and ``estimated`` when true."""
        record: dict[str, Any] = {"raw": self.raw, "at": self.instant.isoformat()}
        if self.estimated:
            record["estimated"] = True
        return record

    @classmethod
    def from_record(cls, data: Mapping[str, Any]) -> SourceTime:
        """The inverse of ``to_record``; raises ``KeyError`` or ``ValueError`` on a bad record."""
        return cls(str(data.get("raw") or ""), _aware(str(data["at"])), bool(data.get("estimated")))


@dataclass(frozen=True)
class MessageFields:
    """What a message is, in the source's own ids, whether its time is settled
    (``ImportedMessage``) or not yet (a reader's draft, ``tree.Node``); the optional
    fields are passed by name."""

    id: str
    parent_id: str | None
    """The source's parent id verbatim (it may name a skipped or structural node)."""
    role: Role
    parts: tuple[Part, ...]
    speaker: str = field(default="", kw_only=True)
    """The author's name where the source has one (a tool's name, a custom GPT)."""
    model: str = field(default="", kw_only=True)
    source_turn: str = field(default="", kw_only=True)
    """The source's own turn id when the source groups messages into turns (huichat transcripts)."""
    extra: tuple[tuple[str, str], ...] = field(default=(), kw_only=True)
    """Source details worth keeping that have no field (a status, a topic)."""


@dataclass(frozen=True)
class ImportedMessage(MessageFields):
    """One message of a conversation, in the source's own ids."""

    time: SourceTime
    held_by: str = field(default="", kw_only=True, compare=False)
    """The huichat turn that held it, where it was read from a huichat store or export (not kept in
    records: the turn it becomes keeps that id where it is free)."""

    @property
    def text(self) -> str:
        """What was visibly said: the chat parts joined by blank lines."""
        return "\n\n".join(part.text for part in self.parts if part.kind.is_chat and part.text)

    def to_record(self) -> dict[str, Any]:
        """The message as plain data (kept whole in an import's record of branches)."""
        record: dict[str, Any] = {
            "id": self.id,
            "parent_id": self.parent_id,
            "role": self.role.value,
            "parts": [part.to_record() for part in self.parts],
            "time": self.time.to_record(),
        }
        for name in ("speaker", "model", "source_turn"):
            if getattr(self, name):
                record[name] = getattr(self, name)
        if self.extra:
            record["extra"] = dict(self.extra)
        return record

    @classmethod
    def from_record(cls, data: Mapping[str, Any]) -> ImportedMessage:
        """The inverse of ``to_record``; raises ``KeyError``, ``ValueError`` or ``TypeError`` on a bad record."""
        roles = {r.value for r in Role}
        role = str(data.get("role") or "")
        parent = data.get("parent_id")
        return cls(
            id=str(data["id"]),
            parent_id=str(parent) if parent is not None else None,
            role=Role(role) if role in roles else Role.TOOL,
            parts=tuple(Part.from_record(p) for p in data.get("parts") or ()),
            time=SourceTime.from_record(data["time"]),
            speaker=str(data.get("speaker") or ""),
            model=str(data.get("model") or ""),
            source_turn=str(data.get("source_turn") or ""),
            extra=tuple((str(k), str(v)) for k, v in (data.get("extra") or {}).items()),
        )


@dataclass(frozen=True)
class Branch:
    """A non-current branch: messages in tree order that follow ``parent_id``.

    ``parent_id`` is the nearest kept message before the branch (on the visible branch or on
    another alternative), ``None`` for a second root (an edited first prompt).
    """

    parent_id: str | None
    messages: tuple[ImportedMessage, ...]


class SkipReason(StrEnum):
    """Why a node is not part of the visible chain."""

    HIDDEN = "hidden"
    SYSTEM = "system"
    CONTEXT = "context"
    EMPTY = "empty"


@dataclass(frozen=True)
class SkippedNode:
    """A node left out of the visible chain, kept whole as the source's JSON."""

    id: str
    parent_id: str | None
    reason: SkipReason
    role: str
    raw: str
    on_visible_branch: bool

    def to_record(self) -> dict[str, Any]:
        """The node as plain data: its fields, by name."""
        return {**asdict(self), "reason": self.reason.value}

    @classmethod
    def from_record(cls, data: Mapping[str, Any]) -> SkippedNode:
        """The inverse of ``to_record``; raises ``KeyError`` or ``ValueError`` on a bad record."""
        parent = data.get("parent_id")
        return cls(
            str(data["id"]),
            str(parent) if parent is not None else None,
            SkipReason(str(data["reason"])),
            str(data.get("role") or ""),
            str(data.get("raw") or ""),
            bool(data.get("on_visible_branch")),
        )


class NoteKind(StrEnum):
    """What an importer had to guess, repair or keep without understanding."""

    TIME_ESTIMATED = "time estimated"
    TIME_SYNTHESISED = "time synthesised"
    TIME_ASSUMED_UTC = "naive time read as UTC"
    TIME_INVALID = "invalid time"
    UNKNOWN_CONTENT = "unknown content kept raw"
    BRANCH_HEURISTIC = "current branch guessed"
    MISSING_PARENT = "missing parent"
    CYCLE = "cycle in the tree"
    INTERRUPTED = "interrupted reply"
    EMPTY_CONVERSATION = "empty conversation"
    CONTINUES = "continues another conversation"


@dataclass(frozen=True)
class Note:
    """One thing worth telling the user about a conversation."""

    kind: NoteKind
    detail: str
    message_id: str = ""


@dataclass(frozen=True)
class ImportedConversation:
    """One conversation as read from its source."""

    source: SourceFormat
    conversation_id: str
    title: str
    created: SourceTime
    updated: SourceTime | None
    messages: tuple[ImportedMessage, ...]
    """The visible branch, in tree order (never re-sorted by time)."""
    alternatives: tuple[Branch, ...] = ()
    skipped: tuple[SkippedNode, ...] = ()
    notes: tuple[Note, ...] = ()
    origin: str = ""
    """The file (and archive member) it came from."""
    model: str = ""
    branch_heuristic: bool = False
    """True when the source has no pointer to the current branch and it was guessed."""
    extra: tuple[tuple[str, str], ...] = ()

    @property
    def service(self) -> str:
        """The id space of ``conversation_id`` and the message ids."""
        return self.source.service

    def key(self, message_id: str) -> tuple[str, str, str]:
        """The idempotency key of one message: (service, conversation id, message id)."""
        return (self.service, self.conversation_id, message_id)

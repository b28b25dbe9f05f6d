"""How an imported conversation is kept as a huichat session, and how it is read back.

One conversation is one session, with a deterministic id: ``YYYYMMDD-HHMMSS`` of the
conversation's start in the configured zone and 4 base36 characters of
``blake2b(service|conversation id)`` (huichat's own sessions keep their id). The visible
branch becomes turns (``group_turns``); every part of a source message becomes one
``Message`` of the part's kind, in order (context and unknown parts are ``raw``). What a
``Message`` cannot hold travels in ``Turn.extra`` (strings):

- ``source`` (the service), ``source_conversation``, ``source_ids`` (JSON list of the
  source message ids in the turn: with the service and conversation, the idempotency keys);
- ``source_messages``: a JSON list aligned with ``source_ids``, one object per message with
  only what differs from the obvious: ``parts`` (how many messages of the turn are its
  parts, when not 1), ``time`` (the source's raw value), ``at`` (its instant, when not the
  turn's), ``estimated``, ``model``, ``speaker`` (the source's author name), ``after``
  (the kept message it follows, when not the one before it in the session), ``parent``
  (the source's parent id verbatim, when not ``after``), ``turn`` and ``extra``;
- ``time_estimated`` (``true``: the turn's own time is an estimate), ``model`` (the reply's
  model), ``topic_derived`` (``true``: the conversation had no title; the topic is its first
  user line).

Part details (tool names, call ids, raw source objects) go to the session's import record
(``memory.imports.sidecar``); ``restore`` puts everything back together.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import replace
from datetime import datetime, tzinfo
from typing import Any

from huichat.memory.imports.grouping import group_turns
from huichat.memory.imports.model import (
    ImportedConversation,
    ImportedMessage,
    Part,
    PartKind,
    Role,
    SourceFormat,
    SourceTime,
)
from huichat.memory.turns import STATUS_OK, TEXT, Message, Turn, TurnDraft, derive_topic

HUICHAT = "huichat"
_SESSION_ID = re.compile(r"^\d{8}-\d{6}-[a-z0-9]{4,}$")
_BASE36 = "0123456789abcdefghijklmnopqrstuvwxyz"
KIND_OF_PART = {
    PartKind.TEXT: TEXT,
    PartKind.REASONING: "reasoning",
    PartKind.TOOL_CALL: "tool_call",
    PartKind.TOOL_RESULT: "tool_result",
    PartKind.ATTACHMENT: "attachment",
    PartKind.CONTEXT: "raw",
    PartKind.UNKNOWN: "raw",
}
PART_OF_KIND = {kind: part for part, kind in KIND_OF_PART.items() if part is not PartKind.CONTEXT}
_ROLES = {role.value: role for role in Role}


def session_id_for(service: str, conversation_id: str, created: datetime, zone: tzinfo, length: int = 4) -> str:
    """The session of a conversation: its start (local) and a digest of its identity.

    ``length`` grows only when two conversations started in the same second share the
    first characters of their digests.
    """
    if service == HUICHAT and _SESSION_ID.match(conversation_id):
        return conversation_id
    digest = hashlib.blake2b(f"{service}|{conversation_id}".encode("utf-8", "surrogatepass"), digest_size=8)
    number, chars = int.from_bytes(digest.digest(), "big"), []
    for _ in range(13):
        number, rest = divmod(number, 36)
        chars.append(_BASE36[rest])
    return created.astimezone(zone).strftime("%Y%m%d-%H%M%S-") + "".join(chars)[:length]


def topic_of(conversation: ImportedConversation) -> tuple[str, bool]:
    """The turns' topic: the title, else a label from the first user line (derived: True)."""
    if conversation.title.strip():
        return conversation.title.strip(), False
    first = next((m.text for m in conversation.messages if m.role is Role.USER and m.text.strip()), "")
    return derive_topic(first or next((m.text for m in conversation.messages if m.text.strip()), "")), True


def session_header(conversation: ImportedConversation, now: datetime) -> dict[str, Any]:
    """The session-level facts of an imported conversation (the transcript's header)."""
    return {
        "title": conversation.title,
        "source": {
            "service": conversation.service,
            "format": conversation.source.value,
            "conversation_id": conversation.conversation_id,
            "origin": conversation.origin,
            "created": conversation.created.to_record(),
            "updated": conversation.updated.to_record() if conversation.updated else None,
            "model": conversation.model,
            "branch_heuristic": conversation.branch_heuristic,
            "topic_derived": topic_of(conversation)[1],
            "extra": dict(conversation.extra),
            "imported_at": now.isoformat(),
        },
    }


def _speaker(conversation: ImportedConversation, message: ImportedMessage, part: Part) -> str:
    if conversation.service == HUICHAT:
        return message.speaker
    if part.kind in (PartKind.TOOL_CALL, PartKind.TOOL_RESULT):
        return part.name or message.speaker
    if message.role is Role.ASSISTANT:  # a chat JSONL file names no service: "jsonl" is its format
        service = "" if conversation.source is SourceFormat.JSONL else conversation.service
        return message.model or message.speaker or conversation.model or service
    return message.speaker


def _messages(conversation: ImportedConversation, message: ImportedMessage) -> list[Message]:
    if not message.parts:  # kept as one empty message, so the source message keeps its place
        return [Message(message.role.value, "", message.speaker)]
    return [
        Message(message.role.value, part.text, _speaker(conversation, message, part), KIND_OF_PART[part.kind])
        for part in message.parts
    ]


def _entry(message: ImportedMessage, start: datetime, after: str | None, previous: str | None) -> dict[str, Any]:
    entry: dict[str, Any] = {}
    if len(message.parts) != 1:
        entry["parts"] = len(message.parts)
    if message.time.raw:
        entry["time"] = message.time.raw
    if message.time.instant != start:
        entry["at"] = message.time.instant.isoformat()
    if message.time.estimated:
        entry["estimated"] = True
    for key, value in (("model", message.model), ("speaker", message.speaker), ("turn", message.source_turn)):
        if value:
            entry[key] = value
    if after != previous:
        entry["after"] = after
    if message.parent_id != after:
        entry["parent"] = message.parent_id
    if message.extra:
        entry["extra"] = dict(message.extra)
    return entry


def turn_drafts(
    conversation: ImportedConversation, new: Sequence[ImportedMessage], previous: str | None
) -> list[TurnDraft]:
    """Drafts for ``new`` visible messages, appended after the stored message ``previous``."""
    after = {m.id: (conversation.messages[i - 1].id if i else None) for i, m in enumerate(conversation.messages)}
    topic, derived = topic_of(conversation)
    drafts = []
    for turn in group_turns(new):
        messages: list[Message] = []
        entries = []
        for message in turn.messages:
            messages += _messages(conversation, message)
            entries.append(_entry(message, turn.timestamp, after.get(message.id, previous), previous))
            previous = message.id
        first = dict(turn.messages[0].extra)
        native = conversation.service == HUICHAT
        extra = {
            "source": conversation.service,
            "source_conversation": conversation.conversation_id,
            "source_ids": json.dumps(list(turn.source_ids), ensure_ascii=False),
            "source_messages": json.dumps(entries, ensure_ascii=False, separators=(",", ":")),
        }
        if turn.time_estimated:
            extra["time_estimated"] = "true"
        model = next((m.model for m in turn.messages if m.model), "")
        if model:
            extra["model"] = model
        if derived:
            extra["topic_derived"] = "true"
        drafts.append(
            TurnDraft(
                tuple(messages),
                turn.timestamp,
                first.get("topic", topic) if native else topic,
                status=first.get("status", STATUS_OK) if native else STATUS_OK,
                extra=tuple(sorted(extra.items())),
                wanted_id=turn.messages[0].held_by,
            )
        )
    return drafts


def part_details(message: ImportedMessage) -> list[dict[str, Any]] | None:
    """The parts of a message without their text, when they hold more than a transcript shows."""
    if not any(p.name or p.call_id or p.content or p.raw or p.kind is PartKind.CONTEXT for p in message.parts):
        return None
    return [{k: v for k, v in p.to_record().items() if k != "text"} for p in message.parts]


def _json(value: str, default: Any) -> Any:
    try:
        return json.loads(value)
    except ValueError:
        return default


def imported(turn: Turn) -> bool:
    """True for a turn an import wrote (it names its source messages), False for one said here."""
    return isinstance(_json(dict(turn.extra).get("source_ids", ""), None), list)


def decode_turn(turn: Turn, previous: str | None) -> list[tuple[ImportedMessage, str | None]]:
    """The source messages of a stored turn, each with the kept message it follows.

    A turn written in huichat (no source ids) gives one message per ``Message``, with the
    id ``<turn id>.<position>``; a message added to an imported turn by hand, likewise.
    """
    extra = dict(turn.extra)
    ids = _json(extra.get("source_ids", ""), None)
    entries = _json(extra.get("source_messages", ""), [])
    if not isinstance(ids, list):
        ids, entries = [], []
    if not isinstance(entries, list) or len(entries) != len(ids):
        entries = [{}] * len(ids)
    found: list[tuple[ImportedMessage, str | None]] = []
    position = 0
    for message_id, entry in zip(ids, entries, strict=True):
        entry = entry if isinstance(entry, dict) else {}
        count = int(entry.get("parts", 1))
        chunk = turn.messages[position : position + max(count, 1)]
        position += max(count, 1)
        after = entry.get("after", previous)
        at = entry.get("at")
        message = ImportedMessage(
            id=str(message_id),
            parent_id=entry.get("parent", after),
            role=_ROLES.get(chunk[0].role if chunk else "", Role.NOTE),
            parts=tuple(Part(PART_OF_KIND.get(m.kind, PartKind.UNKNOWN), m.text) for m in chunk) if count else (),
            time=SourceTime(
                str(entry.get("time", "")),
                datetime.fromisoformat(at) if isinstance(at, str) else turn.timestamp,
                bool(entry.get("estimated")),
            ),
            speaker=str(entry.get("speaker", "")),
            model=str(entry.get("model", "")),
            source_turn=str(entry.get("turn", "")),
            extra=tuple((str(k), str(v)) for k, v in (entry.get("extra") or {}).items()),
            held_by=turn.id,
        )
        found.append((message, after))
        previous = message.id
    kept = [("topic", turn.topic), ("status", turn.status), ("recalled", " ".join(turn.recalled_ids))]
    native_extra = tuple((k, v) for k, v in [*kept, *turn.extra] if v) if not ids else ()
    # the model that answered, kept with a reply made in huichat (as an import keeps its source's)
    answered_by = dict(turn.extra).get("model", "") if not ids else ""
    for index in range(position, len(turn.messages)):
        said = turn.messages[index]
        message = ImportedMessage(
            id=f"{turn.id}.{index}",
            parent_id=previous,
            role=_ROLES.get(said.role, Role.NOTE),
            parts=(Part(PART_OF_KIND.get(said.kind, PartKind.UNKNOWN), said.text),),
            time=SourceTime(turn.timestamp.isoformat(), turn.timestamp),
            speaker=said.speaker,
            model=answered_by if said.role == "assistant" and said.is_chat else "",
            source_turn=turn.id,
            extra=native_extra,
            held_by=turn.id,
        )
        found.append((message, previous))
        previous = message.id
    return found


def with_details(message: ImportedMessage, details: Sequence[Mapping[str, Any]]) -> ImportedMessage:
    """``message`` with its parts' details (kinds, names, raw objects) put back by position."""
    parts = tuple(
        Part.from_record({**details[i], "text": part.text}) if i < len(details) else part
        for i, part in enumerate(message.parts)
    )
    return replace(message, parts=parts)

"""Claude.ai export: ``conversations.json`` with ``chat_messages``.

The current branch is the one the last array element ends (parents by
``parent_message_uuid``, the root being the zero UUID); exports without parent ids are read
in array order. Text comes from the ``content`` blocks, not the lossy ``text`` field (which
mixes in thinking and a "not supported" placeholder); ``text`` is the fallback only when
there are no blocks.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from huichat.memory.imports import model
from huichat.memory.imports.sources import Source, json_values, required
from huichat.memory.imports.text import as_dict, as_list, as_text, human_size, placeholder, stable_id, to_json
from huichat.memory.imports.times import from_iso
from huichat.memory.imports.tree import Header, Node, assemble, skip_reason, unknown_notes

EXPECTED = "a Claude export (a JSON array of conversations with chat_messages)"
ROOT = "00000000-0000-4000-8000-000000000000"
UNSUPPORTED = "This block is not supported on your current device yet."
_ROLES = {"human": model.Role.USER, "user": model.Role.USER, "assistant": model.Role.ASSISTANT}
_SILENT = {"token_budget"}  # blocks with no content at all


def _time(value: Any) -> model.SourceTime | None:
    instant = from_iso(value) if isinstance(value, str) else None
    return model.SourceTime(value, instant) if instant and isinstance(value, str) else None


def _tool_result_text(block: Mapping[str, Any]) -> str:
    pieces = []
    for item in as_list(block.get("content")):
        item = as_dict(item)
        pieces.append(as_text(item.get("text")) if item.get("type") == "text" else to_json(item))
    return "\n".join(p for p in pieces if p)


def _block(block: Mapping[str, Any]) -> model.Part | None:
    kind = str(block.get("type") or "")
    if kind == "text":
        text = as_text(block.get("text"))
        if not text.strip() or text.strip() == UNSUPPORTED:
            return None  # empty blocks and the app's own placeholder are not content
        citations = as_list(block.get("citations"))
        return model.Part(model.PartKind.TEXT, text, raw=to_json(citations) if citations else "")
    if kind == "thinking":
        text = as_text(block.get("thinking")) or "\n".join(
            as_text(as_dict(s).get("summary")) for s in as_list(block.get("summaries"))
        )
        return model.Part(model.PartKind.REASONING, text)
    if kind == "tool_use":
        return model.Part(
            model.PartKind.TOOL_CALL,
            as_text(block.get("input")),
            name=as_text(block.get("name")),
            call_id=as_text(block.get("id")),
        )
    if kind == "tool_result":
        return model.Part(
            model.PartKind.TOOL_RESULT,
            _tool_result_text(block),
            name=as_text(block.get("name")),
            call_id=as_text(block.get("tool_use_id")),
            raw=to_json({"is_error": True}) if block.get("is_error") else "",
        )
    if kind == "injected_prompt_block":
        return model.Part(
            model.PartKind.CONTEXT, as_text(block.get("text") or block.get("content")), name=kind, raw=to_json(block)
        )
    if kind in _SILENT:
        return None
    return model.Part(model.PartKind.UNKNOWN, placeholder("unsupported content", kind), name=kind, raw=to_json(block))


def _files(message: Mapping[str, Any]) -> list[model.Part]:
    parts = []
    for item in as_list(message.get("attachments")):
        item = as_dict(item)
        name = as_text(item.get("file_name"))
        shown = placeholder("attachment", name, as_text(item.get("file_type")), human_size(item.get("file_size")))
        parts.append(
            model.Part(model.PartKind.ATTACHMENT, shown, name=name, content=as_text(item.get("extracted_content")))
        )
    for item in as_list(message.get("files")):
        item = as_dict(item)
        name = as_text(item.get("file_name"))
        parts.append(model.Part(model.PartKind.ATTACHMENT, placeholder("file", name), name=name, raw=to_json(item)))
    return parts


def _node(message: Mapping[str, Any], index: int, notes: list[model.Note]) -> Node:
    node_id = as_text(message.get("uuid")) or f"#{index}"
    parent = message.get("parent_message_uuid")
    role = _ROLES.get(str(message.get("sender")), model.Role.TOOL)
    blocks = [as_dict(b) for b in as_list(message.get("content"))]
    parts = [part for part in (_block(b) for b in blocks) if part is not None]
    notes += unknown_notes(parts, "content block", node_id)
    if not parts:  # no usable block: the flat text field is all there is
        text = as_text(message.get("text")).replace(UNSUPPORTED, "").strip("\n")
        if text.strip():
            parts.append(model.Part(model.PartKind.TEXT, text))
    parts = _files(message) + parts
    time = _time(message.get("created_at"))
    skip = skip_reason(role, any(p.text or p.content for p in parts))  # no system role here: only empty
    return Node(
        id=node_id,
        parent_id=as_text(parent) if isinstance(parent, str) and parent else None,
        role=role,
        parts=tuple(parts),
        time_raw=as_text(message.get("created_at")),
        instant=time.instant if time else None,
        skip=skip,
        raw=to_json(message) if skip else "",
    )


def conversation(item: Mapping[str, Any], source: Source, index: int) -> model.ImportedConversation:
    """One Claude conversation object as an ``ImportedConversation``."""
    raw_messages = required(item, "chat_messages", list, f"{source.label}: conversation {index}", EXPECTED)
    notes: list[model.Note] = []
    messages = [as_dict(m) for m in raw_messages]
    order = [_node(m, i, notes) for i, m in enumerate(messages)]
    tree = any("parent_message_uuid" in m for m in messages)
    extra = (("summary", as_text(item["summary"])),) if item.get("summary") else ()
    head = Header(
        source=model.SourceFormat.CLAUDE,
        conversation_id=as_text(item.get("uuid"))
        or stable_id(as_text(item.get("created_at")), as_text(item.get("name")), *(n.id for n in order)),
        title=as_text(item.get("name")),
        origin=source.label,
        created=_time(item.get("created_at")),
        updated=_time(item.get("updated_at")),
        fallback_time=source.modified,
        notes=tuple(notes),
        extra=extra,
    )
    # the last element is the current leaf (the app's own export reader says so; parents precede children)
    leaf = order[-1].id if order else None
    return assemble(head, order, leaf, links={ROOT: None}, linear=not tree)


def read(source: Source) -> Iterator[model.ImportedConversation]:
    """The conversations of a Claude export file, one at a time."""
    for index, item in json_values(source, EXPECTED):
        if not isinstance(item, dict):
            raise model.ImportFormatError(f"{source.label}: item {index} is not a conversation; expected {EXPECTED}")
        yield conversation(item, source, index)

"""ChatGPT "Export data": ``conversations.json`` (or its ``conversations-NNN.json`` splits).

The visible branch is the one ``current_node`` ends; hidden, system and context nodes and
empty placeholders stay out of it but are kept raw; tool calls, tool results and reasoning
are typed parts; image and audio parts become readable placeholders.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from huichat.memory.imports import model
from huichat.memory.imports.sources import Source, json_values, required
from huichat.memory.imports.text import (
    as_dict,
    as_list,
    as_text,
    dimensions,
    human_size,
    placeholder,
    readable_citations,
    stable_id,
    to_json,
)
from huichat.memory.imports.times import from_epoch, raw_text
from huichat.memory.imports.tree import Header, Node, assemble, latest_leaf, read_mapping

EXPECTED = "a ChatGPT export (a JSON array of conversations with mapping and current_node)"
_CONTEXT_TYPES = {"user_editable_context", "model_editable_context"}
_SYSTEM_FLAGS = (
    "is_user_system_message",
    "is_contextual_answers_system_message",
    "rebase_developer_message",
    "rebase_system_message",
)


def _time(value: Any) -> tuple[str, model.SourceTime | None]:
    instant = from_epoch(value) if value is not None and not isinstance(value, bool | str) else None
    return raw_text(value), model.SourceTime(raw_text(value), instant) if instant else None


def _asset(part: Mapping[str, Any], names: Mapping[str, str]) -> model.Part:
    kind = str(part.get("content_type") or "")
    pointer = str(part.get("asset_pointer") or "")
    if kind == "image_asset_pointer":
        name = next((n for file_id, n in names.items() if file_id and file_id in pointer), "")
        text = placeholder("image", name, dimensions(part.get("width"), part.get("height")))
        return model.Part(model.PartKind.ATTACHMENT, text, name=name or pointer, raw=to_json(part))
    if kind == "audio_transcription":
        # what was said aloud: it is the message's text
        return model.Part(model.PartKind.TEXT, as_text(part.get("text")), name=kind)
    if kind == "audio_asset_pointer":
        return model.Part(
            model.PartKind.ATTACHMENT,
            placeholder("audio", human_size(part.get("size_bytes"))),
            name=pointer,
            raw=to_json(part),
        )
    if kind == "real_time_user_audio_video_asset_pointer":
        return model.Part(model.PartKind.ATTACHMENT, placeholder("audio/video"), name=pointer, raw=to_json(part))
    return model.Part(model.PartKind.UNKNOWN, placeholder("unsupported part", kind), name=kind, raw=to_json(part))


def _attachments(metadata: Mapping[str, Any], represented: str) -> list[model.Part]:
    """Uploaded files named in ``metadata.attachments`` that no image part already shows."""
    parts = []
    for item in as_list(metadata.get("attachments")):
        item = as_dict(item)
        if item.get("id") and str(item["id"]) in represented:
            continue
        mime = item.get("mime_type") or item.get("mimeType") or ""
        name = as_text(item.get("name"))
        kind = "image" if str(mime).startswith("image/") else "file"
        shown = dimensions(item.get("width"), item.get("height")) or human_size(item.get("size"))
        parts.append(
            model.Part(model.PartKind.ATTACHMENT, placeholder(kind, name, mime, shown), name=name, raw=to_json(item))
        )
    return parts


def _text_parts(content: Mapping[str, Any], metadata: Mapping[str, Any], role: model.Role) -> list[model.Part]:
    """``text`` and ``multimodal_text``: strings, asset placeholders, then uploads not shown already."""
    uploads = as_list(metadata.get("attachments"))
    names = {str(as_dict(a).get("id") or ""): as_text(as_dict(a).get("name")) for a in uploads}
    parts: list[model.Part] = []
    pointers: list[str] = []
    for piece in as_list(content.get("parts")):
        if isinstance(piece, str):
            if piece:
                parts.append(
                    model.Part(
                        model.PartKind.TEXT, readable_citations(piece) if role is model.Role.ASSISTANT else piece
                    )
                )
        elif isinstance(piece, dict):
            parts.append(_asset(piece, names))
            pointers.append(as_text(piece.get("asset_pointer")))
    if uploads:
        parts += _attachments(metadata, " ".join(pointers))
    return parts


def _content_parts(message: Mapping[str, Any], role: model.Role) -> tuple[list[model.Part], str]:
    """The typed parts of a message, and its content type when it is one this reader does not know."""
    content = as_dict(message.get("content"))
    kind = str(content.get("content_type") or "")
    metadata = as_dict(message.get("metadata"))
    recipient = str(message.get("recipient") or "all")
    tool = as_text(as_dict(message.get("author")).get("name")) or recipient
    parts: list[model.Part] = []
    unknown = ""
    if kind in ("text", "multimodal_text"):
        parts = _text_parts(content, metadata, role)
        unknown = next((p.name for p in parts if p.kind is model.PartKind.UNKNOWN), "")
        if recipient != "all":  # text addressed to a tool (bio, dalle, web) is a call
            parts = [
                model.Part(model.PartKind.TOOL_CALL, p.text, name=recipient) if p.kind is model.PartKind.TEXT else p
                for p in parts
            ]
        elif role is model.Role.TOOL:
            parts = [
                model.Part(model.PartKind.TOOL_RESULT, p.text, name=tool) if p.kind is model.PartKind.TEXT else p
                for p in parts
            ]
    elif kind == "code":
        code, language = as_text(content.get("text")), as_text(content.get("language"))
        if recipient != "all":
            parts.append(
                model.Part(model.PartKind.TOOL_CALL, code, name=recipient, raw=to_json({"language": language}))
            )
        elif code:
            parts.append(
                model.Part(model.PartKind.TEXT, f"```{'' if language == 'unknown' else language}\n{code}\n```")
            )
    elif kind == "execution_output":
        parts.append(model.Part(model.PartKind.TOOL_RESULT, as_text(content.get("text")), name=tool))
    elif kind == "system_error":
        text = as_text(content.get("text"))
        parts.append(
            model.Part(
                model.PartKind.TOOL_RESULT, text, name=as_text(content.get("name")) or tool, raw=to_json(content)
            )
        )
    elif kind == "tether_browsing_display":
        text = as_text(content.get("result")) or as_text(content.get("summary"))
        parts.append(model.Part(model.PartKind.TOOL_RESULT, text, name=tool, raw=to_json(content)))
    elif kind == "tether_quote":
        text = "\n".join(as_text(content.get(k)) for k in ("title", "url", "text") if content.get(k))
        parts.append(model.Part(model.PartKind.TOOL_RESULT, text, name=tool, raw=to_json(content)))
    elif kind == "thoughts":
        thoughts = [as_dict(t) for t in as_list(content.get("thoughts"))]
        text = "\n\n".join("\n".join(as_text(t.get(k)) for k in ("summary", "content") if t.get(k)) for t in thoughts)
        parts.append(model.Part(model.PartKind.REASONING, text))
    elif kind == "reasoning_recap":
        parts.append(model.Part(model.PartKind.REASONING, as_text(content.get("content"))))
    elif kind in _CONTEXT_TYPES:
        text = "\n\n".join(as_text(v) for k, v in content.items() if k != "content_type" and v)
        parts.append(model.Part(model.PartKind.CONTEXT, text, name=kind))
    elif content:
        unknown = kind or "(no content_type)"
        parts.append(
            model.Part(
                model.PartKind.UNKNOWN, placeholder("unsupported content", unknown), name=unknown, raw=to_json(content)
            )
        )
    return parts, unknown


def _skip(message: Mapping[str, Any], role: model.Role, parts: list[model.Part]) -> model.SkipReason | None:
    metadata = as_dict(message.get("metadata"))
    kind = str(as_dict(message.get("content")).get("content_type") or "")
    if role is model.Role.SYSTEM or any(metadata.get(flag) for flag in _SYSTEM_FLAGS):
        return model.SkipReason.SYSTEM
    if kind in _CONTEXT_TYPES:
        return model.SkipReason.CONTEXT
    weight = message.get("weight", 1)
    if metadata.get("is_visually_hidden_from_conversation") or (weight is not None and weight == 0):
        return model.SkipReason.HIDDEN
    if not any(p.text or p.raw for p in parts):
        return model.SkipReason.EMPTY
    return None


def _node(node_id: str, parent: str | None, message: Mapping[str, Any], notes: list[model.Note]) -> Node:
    author = as_dict(message.get("author"))
    role = model.Role.from_chat(str(author.get("role")))
    parts, unknown = _content_parts(message, role)
    if unknown:
        notes.append(model.Note(model.NoteKind.UNKNOWN_CONTENT, f"content type {unknown} kept raw", node_id))
    extra: tuple[tuple[str, str], ...] = ()
    if message.get("status") == "in_progress":
        notes.append(model.Note(model.NoteKind.INTERRUPTED, "the reply was interrupted", node_id))
        extra = (("status", "in_progress"),)
    skip = _skip(message, role, parts)
    raw, time = _time(message.get("create_time"))
    metadata = as_dict(message.get("metadata"))
    return Node(
        id=node_id,
        parent_id=parent,
        role=role,
        parts=tuple(parts),
        time_raw=raw,
        instant=time.instant if time else None,
        speaker=as_text(author.get("name")),
        model=as_text(metadata.get("model_slug")),
        skip=skip,
        raw=to_json(message) if skip else "",
        extra=extra,
    )


def conversation(item: Mapping[str, Any], source: Source, index: int) -> model.ImportedConversation:
    """One ChatGPT conversation object as an ``ImportedConversation``."""
    mapping = required(item, "mapping", dict, f"{source.label}: conversation {index}", EXPECTED)
    order, links, notes = read_mapping(mapping, _node)
    leaf = item.get("current_node")
    heuristic = not isinstance(leaf, str) or (leaf not in mapping)
    if heuristic:
        leaf = latest_leaf(order)
        notes.append(model.Note(model.NoteKind.BRANCH_HEURISTIC, "current_node is missing: the latest leaf was taken"))
    created_raw, created = _time(item.get("create_time"))
    _, updated = _time(item.get("update_time"))
    # without an id, one from the content: the same conversation gets the same id on every import
    conversation_id = as_text(item.get("conversation_id") or item.get("id")) or stable_id(
        created_raw, as_text(item.get("title")), *sorted(mapping)
    )
    flags = tuple((k, as_text(item[k])) for k in ("is_archived", "is_starred", "gizmo_id") if item.get(k))
    head = Header(
        source=model.SourceFormat.CHATGPT,
        conversation_id=conversation_id,
        title=as_text(item.get("title")),
        origin=source.label,
        created=created,
        updated=updated,
        fallback_time=source.modified,
        model=as_text(item.get("default_model_slug")),
        branch_heuristic=heuristic,
        notes=tuple(notes),
        extra=flags,
    )
    return assemble(head, order, leaf if isinstance(leaf, str) else None, links=links)


def read(source: Source) -> Iterator[model.ImportedConversation]:
    """The conversations of a ChatGPT export file, one at a time."""
    for index, item in json_values(source, EXPECTED):
        if not isinstance(item, dict):
            raise model.ImportFormatError(f"{source.label}: item {index} is not a conversation; expected {EXPECTED}")
        yield conversation(item, source, index)

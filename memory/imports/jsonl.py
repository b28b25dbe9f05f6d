"""OpenAI-style chat JSONL: ``{"messages": [...]}`` per line (also a JSON array of such objects).

These files carry no ids and no times. A conversation's id is a digest of its messages (the
same line imports as the same conversation again); message ids are positions; every time is
the file's own modification time, flagged as synthesised.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from huichat.memory.imports.model import (
    ImportedConversation,
    ImportFormatError,
    Note,
    NoteKind,
    Part,
    PartKind,
    Role,
    SourceFormat,
    SourceTime,
)
from huichat.memory.imports.sources import Source, json_values
from huichat.memory.imports.text import as_dict, as_list, as_text, placeholder, stable_id, to_json
from huichat.memory.imports.tree import Header, Node, assemble, skip_reason, unknown_notes

EXPECTED = 'OpenAI-style chat JSONL ({"messages": [...]} on each line)'


def _content(content: object, role: Role) -> list[Part]:
    if isinstance(content, str) or content is None:
        text = content or ""
        return [Part(PartKind.TOOL_RESULT if role is Role.TOOL else PartKind.TEXT, text)] if text else []
    parts = []
    for item in as_list(content):
        item = as_dict(item)
        kind = str(item.get("type") or "")
        if kind in ("text", "input_text", "output_text"):
            parts.append(Part(PartKind.TOOL_RESULT if role is Role.TOOL else PartKind.TEXT, as_text(item.get("text"))))
        elif kind in ("image_url", "input_image"):
            url = as_text(as_dict(item.get("image_url")).get("url") or item.get("image_url"))
            # inline base64 images are not kept: huichat stores what was said, not the pixels
            shown = "" if url.startswith("data:") else url
            parts.append(Part(PartKind.ATTACHMENT, placeholder("image", shown), name=shown))
        elif kind in ("input_audio", "file", "input_file"):
            name = as_text(as_dict(item.get("file")).get("filename") or item.get("filename"))
            parts.append(
                Part(PartKind.ATTACHMENT, placeholder("audio" if "audio" in kind else "file", name), name=name)
            )
        else:
            parts.append(Part(PartKind.UNKNOWN, placeholder("unsupported part", kind), name=kind, raw=to_json(item)))
    return parts


def _node(index: int, message: Mapping[str, Any], notes: list[Note]) -> Node:
    name = str(message.get("role"))
    role = Role.SYSTEM if name == "developer" else Role.from_chat(name)  # newer OpenAI models' system prompt
    parts = _content(message.get("content"), role)
    if role is Role.TOOL:
        parts = [
            Part(p.kind, p.text, name=as_text(message.get("name")), call_id=as_text(message.get("tool_call_id")))
            for p in parts
        ]
    for call in as_list(message.get("tool_calls")):
        call = as_dict(call)
        function = as_dict(call.get("function"))
        parts.append(
            Part(
                PartKind.TOOL_CALL,
                as_text(function.get("arguments")),
                name=as_text(function.get("name")),
                call_id=as_text(call.get("id")),
            )
        )
    notes += unknown_notes(parts, "content part", str(index))
    skip = skip_reason(role, any(p.text or p.raw for p in parts))
    return Node(
        id=str(index),
        parent_id=str(index - 1) if index else None,
        role=role,
        parts=tuple(parts),
        time_raw="",
        instant=None,
        speaker=as_text(message.get("name")) if role is not Role.TOOL else "",
        skip=skip,
        raw=to_json(message) if skip else "",
    )


def conversation(item: Mapping[str, Any], source: Source, index: int) -> ImportedConversation:
    """One ``{"messages": [...]}`` object."""
    messages = item.get("messages")
    if not isinstance(messages, list):
        raise ImportFormatError(f"{source.label}: record {index + 1} has no messages list; expected {EXPECTED}")
    notes = [Note(NoteKind.TIME_SYNTHESISED, "the file has no times: the file's modification time is used")]
    order = [_node(i, as_dict(m), notes) for i, m in enumerate(messages)]
    head = Header(
        source=SourceFormat.JSONL,
        conversation_id=as_text(item.get("id")) or stable_id(to_json(messages)),
        title=as_text(item.get("title")),
        origin=f"{source.label}#{index + 1}",
        created=SourceTime("", source.modified, estimated=True),
        updated=None,
        fallback_time=source.modified,
        notes=tuple(notes),
    )
    return assemble(head, order, None, linear=True)


def read(source: Source) -> Iterator[ImportedConversation]:
    """The conversations of a chat JSONL file, one line at a time."""
    for index, item in json_values(source, EXPECTED):
        if not isinstance(item, dict):
            raise ImportFormatError(f"{source.label}: record {index + 1} is not an object; expected {EXPECTED}")
        yield conversation(item, source, index)

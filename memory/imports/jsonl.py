"""OpenAI-style chat JSONL: ``{"messages": [...]}`` per line (also a JSON array of such objects).

These files carry no ids and no times. A conversation's id is a digest of its messages (the
same line imports as the same conversation again); message ids are positions; every time is
the file's own modification time, flagged as synthesised.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from huichat.memory.imports import model
from huichat.memory.imports.sources import Source, json_values, required
from huichat.memory.imports.text import as_dict, as_list, as_text, placeholder, stable_id, to_json
from huichat.memory.imports.tree import Header, Node, assemble, skip_reason, unknown_notes

EXPECTED = 'OpenAI-style chat JSONL ({"messages": [...]} on each line)'


def _content(content: object, role: model.Role) -> list[model.Part]:
    if isinstance(content, str) or content is None:
        text = content or ""
        return (
            [model.Part(model.PartKind.TOOL_RESULT if role is model.Role.TOOL else model.PartKind.TEXT, text)]
            if text
            else []
        )
    parts = []
    for item in as_list(content):
        item = as_dict(item)
        kind = str(item.get("type") or "")
        if kind in ("text", "input_text", "output_text"):
            parts.append(
                model.Part(
                    model.PartKind.TOOL_RESULT if role is model.Role.TOOL else model.PartKind.TEXT,
                    as_text(item.get("text")),
                )
            )
        elif kind in ("image_url", "input_image"):
            url = as_text(as_dict(item.get("image_url")).get("url") or item.get("image_url"))
            # inline base64 images are not kept: huichat stores what was said, not the pixels
            shown = "" if url.startswith("data:") else url
            parts.append(model.Part(model.PartKind.ATTACHMENT, placeholder("image", shown), name=shown))
        elif kind in ("input_audio", "file", "input_file"):
            name = as_text(as_dict(item.get("file")).get("filename") or item.get("filename"))
            parts.append(
                model.Part(
                    model.PartKind.ATTACHMENT, placeholder("audio" if "audio" in kind else "file", name), name=name
                )
            )
        else:
            parts.append(
                model.Part(model.PartKind.UNKNOWN, placeholder("unsupported part", kind), name=kind, raw=to_json(item))
            )
    return parts


def _node(index: int, message: Mapping[str, Any], notes: list[model.Note]) -> Node:
    name = str(message.get("role"))
    role = (
        model.Role.SYSTEM if name == "developer" else model.Role.from_chat(name)
    )  # newer OpenAI models' system prompt
    parts = _content(message.get("content"), role)
    if role is model.Role.TOOL:
        parts = [
            model.Part(p.kind, p.text, name=as_text(message.get("name")), call_id=as_text(message.get("tool_call_id")))
            for p in parts
        ]
    for call in as_list(message.get("tool_calls")):
        call = as_dict(call)
        function = as_dict(call.get("function"))
        parts.append(
            model.Part(
                model.PartKind.TOOL_CALL,
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
        speaker=as_text(message.get("name")) if role is not model.Role.TOOL else "",
        skip=skip,
        raw=to_json(message) if skip else "",
    )


def conversation(item: Mapping[str, Any], source: Source, index: int) -> model.ImportedConversation:
    """One ``{"messages": [...]}`` object."""
    messages = required(item, "messages", list, f"{source.label}: record {index + 1}", EXPECTED)
    notes = [model.Note(model.NoteKind.TIME_SYNTHESISED, "the file has no times: the file's modification time is used")]
    order = [_node(i, as_dict(m), notes) for i, m in enumerate(messages)]
    head = Header(
        source=model.SourceFormat.JSONL,
        conversation_id=as_text(item.get("id")) or stable_id(to_json(messages)),
        title=as_text(item.get("title")),
        origin=f"{source.label}#{index + 1}",
        created=model.SourceTime("", source.modified, estimated=True),
        updated=None,
        fallback_time=source.modified,
        notes=tuple(notes),
    )
    return assemble(head, order, None, linear=True)


def read(source: Source) -> Iterator[model.ImportedConversation]:
    """The conversations of a chat JSONL file, one line at a time."""
    for index, item in json_values(source, EXPECTED):
        if not isinstance(item, dict):
            raise model.ImportFormatError(f"{source.label}: record {index + 1} is not an object; expected {EXPECTED}")
        yield conversation(item, source, index)

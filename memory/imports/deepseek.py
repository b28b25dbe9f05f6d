"""DeepSeek: the official export and the web-API JSON that exporter scripts save.

The official export mimics ChatGPT's ``mapping`` but has no ``current_node``: the leaf with
the latest ``inserted_at`` is taken and the conversation is marked as guessed when there was
more than one leaf. The web-API form names its ``current_message_id``; several
``parent_id: null`` roots there are edits of the first prompt. Roles come from the fragment
types where there is no role field (REQUEST is the user; RESPONSE, THINK, SEARCH the model).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from huichat.memory.imports import model
from huichat.memory.imports.sources import Source, json_values, required
from huichat.memory.imports.text import as_dict, as_list, as_text, human_size, placeholder, stable_id, to_json
from huichat.memory.imports.times import parse_stamp, raw_text
from huichat.memory.imports.tree import Header, Node, assemble, latest_leaf, read_mapping, skip_reason, unknown_notes

EXPECTED_EXPORT = "a DeepSeek export (a JSON array of conversations with mapping and inserted_at)"
EXPECTED_WEB = "DeepSeek web-API JSON (data.biz_data with chat_session and chat_messages)"


def _time(value: Any) -> model.SourceTime | None:
    instant = parse_stamp(value) if not isinstance(value, dict | list) else None
    return model.SourceTime(raw_text(value), instant) if instant else None


def _fragment(fragment: Mapping[str, Any]) -> model.Part:
    kind = str(fragment.get("type") or "").upper()
    content = as_text(fragment.get("content"))
    if kind in ("REQUEST", "RESPONSE"):
        return model.Part(model.PartKind.TEXT, content)
    if kind == "THINK":
        return model.Part(model.PartKind.REASONING, content)
    if kind == "SEARCH" or kind.startswith("TOOL"):
        results = [as_dict(r) for r in as_list(fragment.get("results"))]
        text = content or "\n".join(" ".join(as_text(r.get(k)) for k in ("title", "url") if r.get(k)) for r in results)
        return model.Part(model.PartKind.TOOL_RESULT, text, name=kind.lower(), raw=to_json(fragment))
    return model.Part(
        model.PartKind.UNKNOWN, placeholder("unsupported fragment", kind), name=kind, raw=to_json(fragment)
    )


def _parts(message: Mapping[str, Any]) -> list[model.Part]:
    parts = []
    for item in as_list(message.get("files")):
        item = as_dict(item)
        name = as_text(item.get("file_name") or item.get("name"))
        parts.append(
            model.Part(
                model.PartKind.ATTACHMENT,
                placeholder("file", name, human_size(item.get("file_size"))),
                name=name,
                raw=to_json(item),
            )
        )
    fragments = [as_dict(f) for f in as_list(message.get("fragments"))]
    if fragments:
        parts += [_fragment(f) for f in fragments]
    else:  # the web API before fragments: flat fields
        if message.get("thinking_content"):
            parts.append(model.Part(model.PartKind.REASONING, as_text(message["thinking_content"])))
        if message.get("content"):
            parts.append(model.Part(model.PartKind.TEXT, as_text(message["content"])))
    return parts


def _node(
    node_id: str,
    parent: str | None,
    message: Mapping[str, Any],
    notes: list[model.Note],
    role: model.Role | None = None,
) -> Node:
    parts = _parts(message)
    kinds = {str(as_dict(f).get("type") or "").upper() for f in as_list(message.get("fragments"))}
    if role is None:
        role = model.Role.USER if "REQUEST" in kinds else model.Role.ASSISTANT
    notes += unknown_notes(parts, "fragment", node_id)
    status = as_text(message.get("status"))
    if status and status != "FINISHED":
        notes.append(model.Note(model.NoteKind.INTERRUPTED, f"status {status}", node_id))
    time = _time(message.get("inserted_at"))
    skip = skip_reason(role, any(p.text for p in parts))  # no system role here: only empty
    return Node(
        id=node_id,
        parent_id=parent,
        role=role,
        parts=tuple(parts),
        time_raw=raw_text(message.get("inserted_at"))
        if not isinstance(message.get("inserted_at"), dict | list)
        else "",
        instant=time.instant if time else None,
        model=as_text(message.get("model")),
        skip=skip,
        raw=to_json(message) if skip else "",
        extra=(("status", status),) if status and status != "FINISHED" else (),
    )


def _head(
    item: Mapping[str, Any],
    source: Source,
    order: Sequence[Node],
    fmt: model.SourceFormat,
    notes: list[model.Note],
    heuristic: bool,
) -> Header:
    # without an id, one from the content: the same conversation gets the same id on every import
    return Header(
        source=fmt,
        conversation_id=as_text(item.get("id"))
        or stable_id(raw_text(item.get("inserted_at")), as_text(item.get("title")), *sorted(n.id for n in order)),
        title=as_text(item.get("title")),
        origin=source.label,
        created=_time(item.get("inserted_at")),
        updated=_time(item.get("updated_at")),
        fallback_time=source.modified,
        branch_heuristic=heuristic,
        notes=tuple(notes),
    )


def export_conversation(item: Mapping[str, Any], source: Source, index: int) -> model.ImportedConversation:
    """One conversation of the official export."""
    mapping = required(item, "mapping", dict, f"{source.label}: conversation {index}", EXPECTED_EXPORT)
    order, links, notes = read_mapping(mapping, _node)
    parents = {n.parent_id for n in order}
    heuristic = sum(1 for n in order if n.id not in parents and n.skip is None) > 1
    if heuristic:
        notes.append(
            model.Note(model.NoteKind.BRANCH_HEURISTIC, "no current-branch pointer: the latest leaf was taken")
        )
    head = _head(item, source, order, model.SourceFormat.DEEPSEEK, notes, heuristic)
    return assemble(head, order, latest_leaf(order), links=links)


def web_conversation(item: Mapping[str, Any], source: Source, index: int) -> model.ImportedConversation:
    """One conversation saved from the web API (``{data: {biz_data: …}}`` or ``biz_data`` itself)."""
    biz = as_dict(as_dict(item.get("data")).get("biz_data")) or item
    session = as_dict(biz.get("chat_session"))
    messages = biz.get("chat_messages")
    if not session or not isinstance(messages, list):
        raise model.ImportFormatError(f"{source.label}: item {index} has no chat_session; expected {EXPECTED_WEB}")
    notes: list[model.Note] = []
    order = []
    for raw in messages:
        message = as_dict(raw)
        parent = message.get("parent_id")
        role = {"USER": model.Role.USER, "ASSISTANT": model.Role.ASSISTANT}.get(str(message.get("role")).upper())
        node_id = as_text(message.get("message_id"))
        order.append(_node(node_id, as_text(parent) if parent is not None else None, message, notes, role))
    current = session.get("current_message_id")
    leaf = as_text(current) if current is not None else None
    heuristic = leaf is None or all(n.id != leaf for n in order)
    if heuristic:
        leaf = latest_leaf(order)
        notes.append(
            model.Note(model.NoteKind.BRANCH_HEURISTIC, "current_message_id is missing: the latest leaf was taken")
        )
    return assemble(_head(session, source, order, model.SourceFormat.DEEPSEEK_WEB, notes, heuristic), order, leaf)


def read_export(source: Source) -> Iterator[model.ImportedConversation]:
    """The conversations of an official DeepSeek export file."""
    for index, item in json_values(source, EXPECTED_EXPORT):
        yield export_conversation(as_dict(item), source, index)


def read_web(source: Source) -> Iterator[model.ImportedConversation]:
    """The conversation(s) of a saved web-API response (one object, or an array of them)."""
    for index, item in json_values(source, EXPECTED_WEB):
        yield web_conversation(as_dict(item), source, index)

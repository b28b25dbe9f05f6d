"""A conversation as ChatGPT's export writes one, so tools that read ``conversations.json`` read huichat.

The tree is rebuilt whole: the visible branch ends at ``current_node``, alternatives hang
from the message they follow, and a ChatGPT conversation's hidden nodes come back as they
were (their raw JSON). A message whose parts are of several kinds (a DeepSeek reply with its
reasoning) becomes a chain of nodes, one per kind, as ChatGPT itself writes them; the
extra nodes' ids are the message id with ``~1``, ``~2`` ….
Times that were estimated are written as ``null``, as the source had them.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import datetime
from typing import Any

from huichat.memory.imports.model import ImportedConversation, ImportedMessage, Part, PartKind, SourceFormat

ROOT = "client-created-root"
_RUN = {
    PartKind.TEXT: "chat",
    PartKind.ATTACHMENT: "chat",
    PartKind.REASONING: "reasoning",
    PartKind.TOOL_CALL: "call",
    PartKind.TOOL_RESULT: "result",
    PartKind.CONTEXT: "other",
    PartKind.UNKNOWN: "other",
}


def _epoch(moment: datetime) -> float:
    return round(moment.timestamp(), 6)


def _runs(parts: tuple[Part, ...]) -> list[list[Part]]:
    runs: list[list[Part]] = []
    for part in parts:
        if runs and _RUN[runs[-1][-1].kind] == _RUN[part.kind]:
            runs[-1].append(part)
        else:
            runs.append([part])
    return runs or [[Part(PartKind.TEXT, "")]]


def _raw_content(part: Part) -> dict[str, Any] | None:
    try:
        value = json.loads(part.raw) if part.raw else None
    except ValueError:
        return None
    return value if isinstance(value, dict) and "content_type" in value else None


def _content(run: list[Part], chatgpt: bool) -> tuple[dict[str, Any], str, str, list[dict[str, Any]]]:
    """(content, author role override, recipient, uploads for ``metadata.attachments``) of one run."""
    kind = _RUN[run[0].kind]
    if kind == "reasoning":
        thoughts = [{"summary": "", "content": p.text, "chunks": [], "finished": True} for p in run]
        return {"content_type": "thoughts", "thoughts": thoughts}, "assistant", "all", []
    if kind == "call":
        text = "\n\n".join(p.text for p in run)
        return {"content_type": "code", "language": "unknown", "text": text}, "assistant", run[0].name or "tool", []
    if kind == "result":
        return {"content_type": "execution_output", "text": "\n\n".join(p.text for p in run)}, "tool", "all", []
    if kind == "other":
        if chatgpt and len(run) == 1 and (raw := _raw_content(run[0])) is not None:
            return raw, "", "all", []  # ChatGPT's own content, as it was
        # a type ChatGPT does not have: readers keep it as unknown content, not as what was said
        name = run[0].name if run[0].kind is PartKind.UNKNOWN and run[0].name else run[0].kind.value
        return {"content_type": name, "text": "\n\n".join(p.text for p in run)}, "", "all", []
    pieces: list[Any] = []
    uploads: list[dict[str, Any]] = []
    for part in run:
        raw = _raw_message(part.raw) if chatgpt and part.kind is PartKind.ATTACHMENT else None
        if raw is None:
            pieces.append(part.text)
        elif "content_type" in raw:  # an image or audio part, as ChatGPT wrote it
            pieces.append(raw)
            pointer = str(raw.get("asset_pointer") or "")
            if part.name and part.name != pointer:  # the upload that names it
                uploads.append({"id": pointer.rsplit("/", 1)[-1], "name": part.name})
        else:  # an uploaded file named in the message's metadata
            uploads.append(raw)
    multimodal = any(isinstance(p, dict) for p in pieces)
    content = {"content_type": "multimodal_text" if multimodal else "text", "parts": pieces}
    return content, "", "all", uploads


def _raw_message(raw: str) -> dict[str, Any] | None:
    try:
        value = json.loads(raw) if raw else None
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


def _nodes(message: ImportedMessage, chatgpt: bool) -> Iterator[tuple[str, dict[str, Any]]]:
    for index, run in enumerate(_runs(message.parts)):
        node_id = message.id if index == 0 else f"{message.id}~{index}"
        content, role, recipient, uploads = _content(run, chatgpt)
        metadata: dict[str, Any] = {"model_slug": message.model} if message.model else {}
        if uploads:
            metadata["attachments"] = uploads
        role = role or ("user" if message.role.value == "note" else message.role.value)
        name = run[0].name if role == "tool" else message.speaker
        yield (
            node_id,
            {
                "id": node_id,
                "author": {"role": role, "name": name or None, "metadata": {}},
                "create_time": None if message.time.estimated else _epoch(message.time.instant),
                "update_time": None,
                "content": content,
                "status": "finished_successfully",
                "end_turn": None,
                "weight": 1.0,
                "metadata": metadata,
                "recipient": recipient,
                "channel": None,
            },
        )


def conversation(item: ImportedConversation) -> dict[str, Any]:
    """One conversation as a ChatGPT export object (``mapping``, ``current_node``)."""
    chatgpt = item.source is SourceFormat.CHATGPT
    mapping: dict[str, dict[str, Any]] = {ROOT: {"id": ROOT, "message": None, "parent": None, "children": []}}
    last_node: dict[str, str] = {}
    # other branches first: an edit or a regeneration comes before the version the user kept,
    # as in ChatGPT's own files, so readers walking children in order meet them in that order
    kept: list[tuple[ImportedMessage, str | None]] = []
    for branch in item.alternatives:
        after = branch.parent_id
        for message in branch.messages:
            kept.append((message, after))
            after = message.id
    previous: str | None = None
    for message in item.messages:
        kept.append((message, previous))
        previous = message.id
    hidden = [(node.id, node.parent_id, _raw_message(node.raw)) for node in item.skipped if chatgpt]
    known = {m.id for m, _ in kept} | {node_id for node_id, _, body in hidden if body is not None}
    # (node, parent, whether the parent is a message: its last node is the one to hang from)
    entries: list[tuple[str, str | None, bool, dict[str, Any]]] = []
    for message, after in kept:
        parent = message.parent_id if message.parent_id in known else after
        first = True
        for node_id, body in _nodes(message, chatgpt):
            entries.append((node_id, parent, first, body))
            parent, first = node_id, False
        last_node[message.id] = parent or message.id
    entries += [(node_id, parent, True, body) for node_id, parent, body in hidden if body is not None]
    for node_id, _, _, body in entries:
        mapping[node_id] = {"id": node_id, "message": body, "parent": None, "children": []}
    for node_id, parent, of_message, _ in entries:
        attach = (last_node.get(parent, parent) if of_message else parent) if parent is not None else ROOT
        attach = attach if attach in mapping else ROOT
        mapping[node_id]["parent"] = attach
        mapping[attach]["children"].append(node_id)
    times = [m.time.instant for m, _ in kept]
    updated = item.updated.instant if item.updated else max(times, default=item.created.instant)
    return {
        "title": item.title,
        "create_time": _epoch(item.created.instant),
        "update_time": _epoch(updated),
        "mapping": mapping,
        "moderation_results": [],
        "current_node": last_node.get(item.messages[-1].id) if item.messages else ROOT,
        "plugin_ids": None,
        "conversation_id": item.conversation_id,
        "id": item.conversation_id,
        "default_model_slug": item.model or None,
    }

"""From a reader's nodes to a conversation: the visible branch, the alternatives, the times.

Readers turn source records into ``Node`` drafts and name the current leaf; ``assemble``
does what every tree-shaped source needs, once: it follows parents from the leaf to the
root (guarding against cycles and missing parents), keeps every other kept node as a
non-current ``Branch`` linked to the message it follows, keeps skipped nodes raw, and gives
every message a time — its own, or the previous message's, flagged as estimated.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, fields
from datetime import UTC, datetime
from typing import Any

from huichat.memory.imports.model import (
    Branch,
    ImportedConversation,
    ImportedMessage,
    MessageFields,
    Note,
    NoteKind,
    Part,
    PartKind,
    Role,
    SkippedNode,
    SkipReason,
    SourceFormat,
    SourceTime,
)


@dataclass(frozen=True)
class Node(MessageFields):
    """A message as a reader found it, before its place and time are settled."""

    time_raw: str
    instant: datetime | None
    skip: SkipReason | None = None
    raw: str = ""
    """The source record as JSON; readers fill it for skipped nodes."""

    def build(self, time: SourceTime) -> ImportedMessage:
        """The finished message, with its settled time: every field of ``MessageFields`` carries over."""
        return ImportedMessage(**{f.name: getattr(self, f.name) for f in fields(MessageFields)}, time=time)


@dataclass(frozen=True)
class Header:
    """What a reader knows about a conversation besides its messages."""

    source: SourceFormat
    conversation_id: str
    title: str
    origin: str
    created: SourceTime | None
    updated: SourceTime | None
    fallback_time: datetime
    """Used only when no message and no conversation time exists (the file's own time)."""
    model: str = ""
    branch_heuristic: bool = False
    notes: tuple[Note, ...] = ()
    extra: tuple[tuple[str, str], ...] = ()


@dataclass
class _Times:
    settled: dict[str, SourceTime] = field(default_factory=dict)
    estimated: int = 0

    def settle(self, node: Node, previous: SourceTime | None, fallback: SourceTime) -> SourceTime:
        if node.instant is not None:
            time = SourceTime(node.time_raw, node.instant)
        else:
            self.estimated += 1
            time = SourceTime(node.time_raw, (previous or fallback).instant, estimated=True)
        self.settled[node.id] = time
        return time


def skip_reason(role: Role, said: bool) -> SkipReason | None:
    """Why a message stays off the visible chain by the rule most readers share: a system
    prompt is not conversation, and a message that says nothing is empty."""
    if role is Role.SYSTEM:
        return SkipReason.SYSTEM
    return None if said else SkipReason.EMPTY


def unknown_notes(parts: Iterable[Part], what: str, message_id: str) -> list[Note]:
    """A note for each part of a kind the reader does not know (it is kept raw), ``what`` naming
    the source's word for a part (``"content block"``)."""
    return [
        Note(NoteKind.UNKNOWN_CONTENT, f"{what} {part.name} kept raw", message_id)
        for part in parts
        if part.kind is PartKind.UNKNOWN
    ]


def visible_path(
    nodes: Mapping[str, Node], leaf: str | None, links: Mapping[str, str | None], notes: list[Note]
) -> list[str]:
    """The ids from the root to ``leaf`` by parent links; stops at a cycle or a missing node.

    ``links`` are ids that are not messages but pass the chain on to their own parent
    (a structural root, a node without a message).
    """
    path: list[str] = []
    seen: set[str] = set()
    current = leaf
    while current is not None:
        if current in seen:
            notes.append(
                Note(NoteKind.CYCLE, f"parent links loop back to {current}; the branch starts after it", current)
            )
            break
        seen.add(current)
        node = nodes.get(current)
        if node is None:
            if current not in links:
                break  # a missing parent: noted for every node by assemble
            current = links[current]
            continue
        path.append(current)
        current = node.parent_id
    path.reverse()
    return path


def read_mapping(
    mapping: Mapping[str, Any], build: Callable[[str, str | None, Mapping[str, Any], list[Note]], Node]
) -> tuple[list[Node], dict[str, str | None], list[Note]]:
    """The nodes of a ChatGPT-style ``mapping`` (``{id: {id, parent, children, message}}``), the
    links and the notes: those ``build`` adds for each message (id, parent id, message, notes),
    then those on the tree.

    Entries without a message (the root) become links. A node missing from the mapping but
    named in its parent's ``children`` (exports are said to strip tool nodes) is bridged to
    that parent, so the branch through it is not cut.
    """
    order: list[Node] = []
    links: dict[str, str | None] = {}
    notes: list[Note] = []
    bridged: list[Note] = []
    for key, value in mapping.items():
        entry = value if isinstance(value, dict) else {}
        node_id = str(entry.get("id") or key)
        parent = str(entry["parent"]) if entry.get("parent") is not None else None
        message = entry.get("message")
        if isinstance(message, dict):
            order.append(build(node_id, parent, message, notes))
        else:
            links[node_id] = parent
        for child in entry.get("children") or ():
            if isinstance(child, str) and child not in mapping:
                links[child] = node_id
                bridged.append(
                    Note(
                        NoteKind.MISSING_PARENT, f"{child} is not in the export; its parent {node_id} stands in", child
                    )
                )
    return order, links, notes + bridged


def latest_leaf(order: Sequence[Node]) -> str | None:
    """The kept node without children that has the latest time (source order breaks ties).

    Only for sources with no pointer to the current branch: the caller marks it a guess.
    """
    parents = {node.parent_id for node in order}
    leaves = [n for n in order if n.id not in parents and n.skip is None] or [n for n in order if n.id not in parents]
    if not leaves:
        return None
    floor = datetime.min.replace(tzinfo=UTC)
    return max(enumerate(leaves), key=lambda pair: (pair[1].instant or floor, pair[0]))[1].id


def _tree_order(order: Sequence[Node], parent_of: Callable[[Node], str | None]) -> list[Node]:
    """Parents before children, depth first, siblings in source order; nodes on a cycle last."""
    children: dict[str | None, list[Node]] = {}
    for node in order:
        children.setdefault(parent_of(node), []).append(node)
    ordered: list[Node] = []
    done: set[str] = set()
    for start in [*children.get(None, []), *order]:
        stack = [start]
        while stack:
            node = stack.pop()
            if node.id in done:
                continue
            done.add(node.id)
            ordered.append(node)
            stack.extend(reversed(children.get(node.id, [])))
    return ordered


def _created(head: Header, nodes: Mapping[str, Node], path: Sequence[str]) -> SourceTime:
    """The conversation's start: the source's, else its first timed message, its update or the file."""
    if head.created is not None:
        return head.created
    first = next((nodes[i].instant for i in path if nodes[i].instant is not None), None)
    return SourceTime("", first or (head.updated.instant if head.updated else head.fallback_time), estimated=True)


def _off_path(
    order: Sequence[Node],
    parent_of: Callable[[Node], str | None],
    on_path: set[str],
    times: _Times,
    fallback: SourceTime,
) -> tuple[list[Branch], list[SkippedNode]]:
    """The non-current branches and the skipped nodes, in tree order."""
    branches: list[tuple[str | None, list[ImportedMessage]]] = []
    tail_of: dict[str, int] = {}  # message id -> index of the branch it currently ends
    skipped: list[SkippedNode] = []
    nearest_kept: dict[str, str | None] = {}
    for node in _tree_order(order, parent_of):
        # a branch follows the nearest kept ancestor: skipped nodes do not break the chain
        parent = parent_of(node)
        fork = nearest_kept.get(parent) if parent is not None else None
        if node.skip is not None:
            nearest_kept[node.id] = fork
            skipped.append(
                SkippedNode(node.id, node.parent_id, node.skip, node.role.value, node.raw, node.id in on_path)
            )
            continue
        nearest_kept[node.id] = node.id
        if node.id in on_path:
            continue
        before = times.settled.get(fork) if fork else None
        message = node.build(times.settle(node, before, fallback))
        if fork is not None and fork in tail_of:  # the first child continues its parent's branch
            index = tail_of.pop(fork)
            branches[index][1].append(message)
        else:
            index = len(branches)
            branches.append((fork, [message]))
        tail_of[node.id] = index
    return [Branch(fork, tuple(messages)) for fork, messages in branches], skipped


def assemble(
    head: Header,
    order: Sequence[Node],
    leaf: str | None,
    *,
    links: Mapping[str, str | None] | None = None,
    linear: bool = False,
) -> ImportedConversation:
    """The conversation of ``order`` (source order) whose visible branch ends at ``leaf``.

    ``links`` are ids that may be parents without being messages, each with its own parent
    (a structural root; a message of another conversation, linked to ``None``). ``linear``
    sources have no tree: every node is on the visible branch, in source order.
    """
    links = links or {}
    notes = list(head.notes)
    nodes: dict[str, Node] = {}
    for node in order:
        nodes.setdefault(node.id, node)  # a repeated id would make the tree ambiguous: first wins
    order = list(nodes.values())
    path = [n.id for n in order] if linear else visible_path(nodes, leaf, links, notes)
    for node in order:
        if node.parent_id is not None and node.parent_id not in nodes and node.parent_id not in links:
            notes.append(Note(NoteKind.MISSING_PARENT, f"its parent {node.parent_id} is not in the source", node.id))

    def parent_of(node: Node) -> str | None:
        """The parent message of ``node`` in this conversation, through structural links."""
        parent, hops = node.parent_id, 0
        while parent is not None and parent not in nodes and parent in links and hops < len(links):
            parent, hops = links[parent], hops + 1
        return parent if parent in nodes else None

    created = _created(head, nodes, path)
    # a message before any timed one: the conversation's own start is the best estimate there
    fallback = SourceTime("", created.instant, estimated=True)
    times = _Times()
    visible: list[ImportedMessage] = []
    previous: SourceTime | None = None
    for node_id in path:
        if nodes[node_id].skip is None:
            previous = times.settle(nodes[node_id], previous, fallback)
            visible.append(nodes[node_id].build(previous))
    branches, skipped = _off_path(order, parent_of, set(path), times, fallback)

    if times.estimated:
        notes.append(Note(NoteKind.TIME_ESTIMATED, f"{times.estimated} message(s) without a time took the time before"))
    if not visible and not branches:
        notes.append(Note(NoteKind.EMPTY_CONVERSATION, "no messages"))
    return ImportedConversation(
        source=head.source,
        conversation_id=head.conversation_id,
        title=head.title,
        created=created,
        updated=head.updated,
        messages=tuple(visible),
        alternatives=tuple(branches),
        skipped=tuple(skipped),
        notes=tuple(notes),
        origin=head.origin,
        model=head.model,
        branch_heuristic=head.branch_heuristic,
        extra=head.extra,
    )

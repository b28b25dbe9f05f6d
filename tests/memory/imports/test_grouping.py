"""Turn grouping rules and the tree assembly shared by every reader."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from huichat.memory.imports.grouping import group_turns
from huichat.memory.imports.model import (
    ImportedMessage,
    NoteKind,
    Part,
    PartKind,
    Role,
    SkipReason,
    SourceFormat,
    SourceTime,
)
from huichat.memory.imports.tree import Header, Node, assemble

T0 = datetime(2025, 1, 1, tzinfo=UTC)


def _message(index: int, role: Role, source_turn: str = "") -> ImportedMessage:
    return ImportedMessage(
        f"m{index}", None, role, (Part(PartKind.TEXT, f"text {index}"),), SourceTime("", T0), source_turn=source_turn
    )


U, A, T, N = Role.USER, Role.ASSISTANT, Role.TOOL, Role.NOTE


@pytest.mark.parametrize(
    ("roles", "turns"),
    [
        ([U, A, U, A], [[0, 1], [2, 3]]),
        ([U, A, T, A, A], [[0, 1, 2, 3, 4]]),  # tools and a continued answer join the reply
        ([U, U, A], [[0], [1, 2]]),  # a question that got no reply is a turn of its own
        ([A, U, A], [[0], [1, 2]]),  # a greeting with no question before it
        ([T, A, U], [[0, 1], [2]]),
        ([U, N, A], [[0], [1], [2]]),  # a note stands alone; the reply after it starts a turn
        ([], []),
    ],
)
def test_turn_grouping_rules(roles: list[Role], turns: list[list[int]]) -> None:
    messages = [_message(i, role) for i, role in enumerate(roles)]
    assert [[int(i[1:]) for i in t.source_ids] for t in group_turns(messages)] == turns


def test_a_source_with_its_own_turns_keeps_them() -> None:
    messages = [_message(0, U, "t1"), _message(1, U, "t1"), _message(2, A, "t2"), _message(3, A, "t2")]
    assert [t.source_ids for t in group_turns(messages)] == [("m0", "m1"), ("m2", "m3")]


def _node(
    node_id: str, parent: str | None, role: Role = U, skip: SkipReason | None = None, second: int | None = 1
) -> Node:
    instant = T0.replace(second=second) if second is not None else None
    return Node(node_id, parent, role, (Part(PartKind.TEXT, node_id),), str(second), instant, skip=skip)


def _head() -> Header:
    return Header(SourceFormat.CHATGPT, "c", "", "test", None, None, T0)


def test_a_branch_follows_the_nearest_kept_message_across_a_skipped_node() -> None:
    nodes = [
        _node("a", None),
        _node("hidden", "a", skip=SkipReason.HIDDEN),
        _node("b", "hidden"),
        _node("b-old", "hidden"),
        _node("c-old", "b-old", second=None),
    ]
    conversation = assemble(_head(), nodes, "b")
    assert [m.id for m in conversation.messages] == ["a", "b"]
    assert [(b.parent_id, [m.id for m in b.messages]) for b in conversation.alternatives] == [("a", ["b-old", "c-old"])]
    c_old = conversation.alternatives[0].messages[1]
    assert c_old.time.estimated and c_old.time.instant == T0.replace(second=1)  # took its parent's time


def test_links_pass_the_chain_on_through_nodes_without_messages() -> None:
    nodes = [_node("a", None), _node("b", "gap"), _node("c", "b")]
    conversation = assemble(_head(), nodes, "c", links={"gap": "a"})
    assert [m.id for m in conversation.messages] == ["a", "b", "c"]
    assert not any(n.kind is NoteKind.MISSING_PARENT for n in conversation.notes)


def test_a_very_long_chain_is_walked_without_recursion() -> None:
    nodes = [_node(f"n{i}", f"n{i - 1}" if i else None, U if i % 2 == 0 else A) for i in range(20_000)]
    conversation = assemble(_head(), nodes, "n19999")
    assert len(conversation.messages) == 20_000 and len(group_turns(conversation.messages)) == 10_000


def test_a_repeated_id_is_read_once() -> None:
    conversation = assemble(_head(), [_node("a", None), _node("a", None), _node("b", "a")], "b")
    assert [m.id for m in conversation.messages] == ["a", "b"] and conversation.alternatives == ()

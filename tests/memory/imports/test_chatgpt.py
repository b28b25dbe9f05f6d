"""The ChatGPT reader on a hand-written export holding the format's traps."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import pytest

from huichat.memory.imports.grouping import group_turns
from huichat.memory.imports.model import ImportedConversation, NoteKind, PartKind, Role, SkipReason
from tests.memory.imports.helpers import FIXTURES, ids, message, parts, read_all


@pytest.fixture(scope="module")
def export() -> dict[str, ImportedConversation]:
    return read_all(FIXTURES / "chatgpt" / "conversations.json")


def test_the_visible_branch_is_the_one_current_node_ends_not_the_newest_leaf(
    export: dict[str, ImportedConversation],
) -> None:
    conversation = export["conv-a"]
    assert ids(conversation.messages) == ["u1", "a1", "u2", "th", "rc", "code", "out", "a2", "voice", "weird", "a3"]
    newest = max((m for b in conversation.alternatives for m in b.messages), key=lambda m: m.time.instant)
    assert newest.id == "a2-old" and newest.time.instant > conversation.messages[-1].time.instant
    assert not conversation.branch_heuristic


def test_edits_and_regenerations_are_kept_as_alternatives_linked_to_their_parent(
    export: dict[str, ImportedConversation],
) -> None:
    branches = [(b.parent_id, ids(b.messages)) for b in export["conv-a"].alternatives]
    assert branches == [("u1", ["a1-old"]), ("a1", ["u2-old", "a2-old"])]
    assert message(export["conv-a"], "u2-old").text == "What about Osaka?"


def test_hidden_system_context_and_empty_nodes_stay_out_of_the_chain_but_are_kept_raw(
    export: dict[str, ImportedConversation],
) -> None:
    skipped = {s.id: s for s in export["conv-a"].skipped}
    assert {k: s.reason for k, s in skipped.items()} == {
        "sys": SkipReason.SYSTEM,
        "ctx": SkipReason.CONTEXT,
        "empty": SkipReason.EMPTY,
    }
    assert all(s.on_visible_branch for s in skipped.values())
    assert json.loads(skipped["ctx"].raw)["content"]["user_instructions"] == "Answer briefly"
    # the chain is not broken by the skipped nodes: u1's parent is the skipped context node
    assert export["conv-a"].messages[0].parent_id == "ctx"


def test_a_null_time_takes_the_previous_visible_message_time_and_is_flagged(
    export: dict[str, ImportedConversation],
) -> None:
    conversation = export["conv-a"]
    u2, a1 = message(conversation, "u2"), message(conversation, "a1")
    assert u2.time.raw == "" and u2.time.estimated
    assert u2.time.instant == a1.time.instant
    assert any(n.kind is NoteKind.TIME_ESTIMATED for n in conversation.notes)


def test_no_time_is_ever_1970(export: dict[str, ImportedConversation]) -> None:
    conversation = export["conv-c"]  # no conversation create_time, a null and a zero message time
    assert conversation.created.estimated
    assert conversation.created.instant == datetime.fromtimestamp(1700200000, UTC)
    for m in conversation.messages:
        assert m.time.estimated and m.time.instant.year == 2023
    assert message(conversation, "n2").time.raw == "0"


def test_times_are_kept_as_written_and_order_comes_from_the_tree(export: dict[str, ImportedConversation]) -> None:
    conversation = export["conv-a"]
    u1, a1, th, rc = (message(conversation, i) for i in ("u1", "a1", "th", "rc"))
    assert u1.time.raw == "1700000000.123"
    assert u1.time.instant == datetime(2023, 11, 14, 22, 13, 20, 123000, tzinfo=UTC)
    assert a1.time.instant < u1.time.instant  # the reply's server clock is behind the client's
    assert rc.time.instant < th.time.instant
    assert ids(conversation.messages)[:2] == ["u1", "a1"]


def test_reasoning_and_tool_nodes_are_typed_parts(export: dict[str, ImportedConversation]) -> None:
    conversation = export["conv-a"]
    assert (
        parts(message(conversation, "th"), PartKind.REASONING)[0].text
        == "Looking at the image\nIt shows a golden temple."
    )
    assert parts(message(conversation, "rc"), PartKind.REASONING)[0].text == "Thought for 3s"
    call = parts(message(conversation, "code"), PartKind.TOOL_CALL)[0]
    assert (call.name, call.text) == ("python", "print('a')\r\nprint('b')")
    result = parts(message(conversation, "out"), PartKind.TOOL_RESULT)[0]
    assert (result.name, result.text) == ("python", "a\nb")
    assert message(conversation, "out").role is Role.TOOL
    for node in ("th", "rc", "code", "out"):
        assert message(conversation, node).text == ""  # none of it is chat text


def test_non_text_parts_become_readable_placeholders(export: dict[str, ImportedConversation]) -> None:
    u2 = message(export["conv-a"], "u2")
    assert [(p.kind, p.text) for p in u2.parts] == [
        (PartKind.ATTACHMENT, "[image kyoto.png, 1024×768]"),
        (PartKind.TEXT, "What is in this photo? Cafè"),
        (PartKind.ATTACHMENT, "[file notes.pdf, application/pdf, 1.2 MB]"),
    ]
    voice = message(export["conv-a"], "voice")
    assert voice.text == "thanks a lot\n\n[audio 23.4 KB]"
    assert voice.parts[0].name == "audio_transcription"


def test_citation_markers_become_readable_cite_references(export: dict[str, ImportedConversation]) -> None:
    text = message(export["conv-a"], "a1").text
    assert text == "Day 1: Fushimi Inari [cite: turn0search0, turn0search1] then Gion [cite: 12†L1-L5]."
    assert not any("\ue200" <= ch <= "\ue206" for ch in text)


def test_ascii_escaped_json_with_surrogate_pairs_and_crlf_code_come_through(
    export: dict[str, ImportedConversation],
) -> None:
    conversation = export["conv-a"]
    assert conversation.title == "Kyoto trip 京都"
    assert message(conversation, "u1").text == "Plan a trip to Kyoto 🗾"
    assert message(conversation, "a2").text == "It is Kinkaku-ji.\n```py\r\nx = 1\r\n```"


def test_unknown_content_types_are_kept_raw_and_reported(export: dict[str, ImportedConversation]) -> None:
    weird = message(export["conv-a"], "weird")
    unknown = parts(weird, PartKind.UNKNOWN)[0]
    assert unknown.name == "sonic_webpage"
    assert json.loads(unknown.raw)["url"] == "https://example.com"
    assert [n.message_id for n in export["conv-a"].notes if n.kind is NoteKind.UNKNOWN_CONTENT] == ["weird"]


def test_an_interrupted_reply_is_kept_and_noted(export: dict[str, ImportedConversation]) -> None:
    a3 = message(export["conv-a"], "a3")
    assert a3.text == "You are welcome" and ("status", "in_progress") in a3.extra
    assert any(n.kind is NoteKind.INTERRUPTED and n.message_id == "a3" for n in export["conv-a"].notes)


def test_cycles_and_missing_parents_do_not_hang_or_lose_messages(export: dict[str, ImportedConversation]) -> None:
    conversation = export["conv-b"]
    assert ids(conversation.messages) == ["y1", "y2"]
    assert [(b.parent_id, ids(b.messages)) for b in conversation.alternatives] == [(None, ["z2"])]
    kinds = {n.kind for n in conversation.notes}
    assert {NoteKind.CYCLE, NoteKind.MISSING_PARENT} <= kinds


def test_an_empty_conversation_is_read_and_noted(export: dict[str, ImportedConversation]) -> None:
    conversation = export["conv-d"]
    assert conversation.messages == () and conversation.alternatives == ()
    assert [n.kind for n in conversation.notes] == [NoteKind.EMPTY_CONVERSATION]


def test_the_visible_branch_groups_into_turns_with_every_source_id(export: dict[str, ImportedConversation]) -> None:
    turns = group_turns(export["conv-a"].messages)
    assert [t.source_ids for t in turns] == [
        ("u1", "a1"),
        ("u2", "th", "rc", "code", "out", "a2"),
        ("voice", "weird", "a3"),
    ]
    assert [m.id for m in turns[1].chat_messages] == ["u2", "a2"]
    assert export["conv-a"].key("u1") == ("chatgpt", "conv-a", "u1")


def test_a_missing_current_node_takes_the_latest_leaf_and_says_it_guessed(tmp_path: Path) -> None:
    item = json.loads((FIXTURES / "chatgpt" / "conversations.json").read_text())[0]
    item["current_node"] = None
    path = tmp_path / "conversations.json"
    path.write_text(json.dumps([item]))
    conversation = read_all(path)["conv-a"]
    assert conversation.branch_heuristic
    assert ids(conversation.messages)[-1] == "a2-old"  # the newest leaf: only ever a guess
    assert any(n.kind is NoteKind.BRANCH_HEURISTIC for n in conversation.notes)


def test_a_node_stripped_from_the_export_does_not_cut_the_visible_branch(tmp_path: Path) -> None:
    item = json.loads((FIXTURES / "chatgpt" / "conversations.json").read_text())[0]
    del item["mapping"]["out"]  # the tool result is gone; its parent still lists it, its child still names it
    path = tmp_path / "conversations.json"
    path.write_text(json.dumps([item]))
    conversation = read_all(path)["conv-a"]
    assert ids(conversation.messages) == ["u1", "a1", "u2", "th", "rc", "code", "a2", "voice", "weird", "a3"]
    assert [n.message_id for n in conversation.notes if n.kind is NoteKind.MISSING_PARENT] == ["out"]


def test_a_conversation_without_an_id_gets_the_same_one_from_any_file(tmp_path: Path) -> None:
    item = json.loads((FIXTURES / "chatgpt" / "conversations.json").read_text())[0]
    del item["id"], item["conversation_id"]
    found = set()
    for name in ("a.json", "elsewhere.json"):
        (tmp_path / name).write_text(json.dumps([{"title": "other", "mapping": {}, "current_node": "x"}, item]))
        found.add(list(read_all(tmp_path / name))[1])
    assert len(found) == 1

"""Importing through the kernel: what is stored for every format, re-imports, newer exports, moved branches."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from huichat.memory.exports import ExportFormat
from huichat.memory.exports.selection import Selection
from huichat.memory.exports.writer import export
from huichat.memory.imports import sidecar
from huichat.memory.imports.codec import session_id_for
from huichat.memory.imports.ingest import ImportTally, import_conversations
from huichat.memory.imports.model import ImportedConversation
from huichat.memory.imports.reader import iter_conversations
from huichat.memory.kernel import MemoryKernel
from huichat.memory.results import SearchRequest
from huichat.memory.transcript import TurnChunker
from huichat.memory.turns import Turn
from tests.conftest import NOW, ZONE, open_kernel
from tests.memory.imports.helpers import FIXTURES
from tests.memory.imports.stored_helpers import SOURCES, canonical, source_path, stored_conversations


def _import(kernel: MemoryKernel, path: Path) -> ImportTally:
    return import_conversations(kernel, iter_conversations(path), NOW)


def _transcripts(root: Path) -> dict[str, list[Turn]]:
    return {
        p.relative_to(root / "sessions").as_posix(): TurnChunker(root / "sessions").chunk_file(p)
        for p in sorted((root / "sessions").glob("*/*/chat_*.md"))
    }


def _files(root: Path) -> dict[str, bytes]:
    return {
        p.relative_to(root).as_posix(): p.read_bytes() for p in sorted((root / "sessions").rglob("*")) if p.is_file()
    }


@pytest.mark.parametrize("name", SOURCES)
def test_every_format_is_stored_as_sessions_that_read_back_as_the_same_conversations(tmp_path: Path, name: str) -> None:
    path = source_path(tmp_path, name)
    read = {c.conversation_id: c for c in iter_conversations(path) if c.messages}
    kernel = open_kernel(tmp_path / "memory")
    tally = _import(kernel, path)
    stored = stored_conversations(tmp_path / "memory")
    assert {c.conversation_id for c in stored} == set(read)
    for conversation in stored:
        assert canonical(conversation) == canonical(read[conversation.conversation_id])
    turns = [t for ts in _transcripts(tmp_path / "memory").values() for t in ts]
    assert tally.turns == len(turns) == kernel.count()
    assert tally.messages == sum(len(c.messages) for c in read.values())
    for turn in turns:  # every turn says where it came from, and the index has it
        extra = dict(turn.extra)
        ids = json.loads(extra["source_ids"])
        assert extra["source"] == read[extra["source_conversation"]].service and ids
        assert len(json.loads(extra["source_messages"])) == len(ids)
        assert kernel.recall_by_id(turn.id).turn is not None
    kernel.close()


def test_a_chat_jsonl_files_assistant_is_named_by_its_role_not_the_files_format(tmp_path: Path) -> None:
    # tried as a user: every imported answer read "jsonl: …" in recall and "**jsonl** (assistant)" in the
    # session file — a chat JSONL line names no service and no model, and "jsonl" is the file's format
    kernel = open_kernel(tmp_path)
    _import(kernel, FIXTURES / "chat.jsonl")
    said = [m for session in kernel.sessions() for t in kernel.session_turns(session.session_id) for m in t.messages]
    assert {m.speaker for m in said if m.role == "assistant" and m.kind == "text"} == {""}
    assert "alice" in {m.speaker for m in said if m.role == "user"}  # a name the line gives is kept
    assert "lookup" in {m.speaker for m in said if m.role == "tool"}
    kernel.close()


def test_chatgpt_turns_keep_speakers_typed_parts_times_and_the_conversation_title(tmp_path: Path) -> None:
    kernel = open_kernel(tmp_path)
    _import(kernel, FIXTURES / "chatgpt" / "conversations.json")
    conversation = read_fixture("conv-a")
    session_id = session_id_for("chatgpt", "conv-a", conversation.created.instant, ZONE)
    turns = kernel.session_turns(session_id)
    assert session_id.startswith("20231115-061140-") and len(session_id) == 20
    assert [json.loads(dict(t.extra)["source_ids"]) for t in turns] == [
        ["u1", "a1"],
        ["u2", "th", "rc", "code", "out", "a2"],
        ["voice", "weird", "a3"],
    ]
    assert {t.topic for t in turns} == {"Kyoto trip 京都"}
    second = turns[1]
    assert [(m.role, m.kind) for m in second.messages] == [
        ("user", "attachment"),
        ("user", "text"),
        ("user", "attachment"),
        ("assistant", "reasoning"),
        ("assistant", "reasoning"),
        ("assistant", "tool_call"),
        ("tool", "tool_result"),
        ("assistant", "text"),
    ]
    assert second.messages[-1].speaker == "o3" and second.messages[5].speaker == "python"
    # typed parts are kept but are not what is searched
    assert "Looking at the image" not in second.text and "Kinkaku-ji" in second.text
    assert dict(second.extra)["time_estimated"] == "true" and dict(second.extra)["model"] == "o3"
    # the null time of u2 took the time of the message before it (a1's, 22:13:10 UTC)
    assert second.timestamp == datetime(2023, 11, 14, 22, 13, 10, tzinfo=UTC)
    entries = json.loads(dict(second.extra)["source_messages"])
    assert entries[0] == {"parts": 3, "estimated": True}
    assert entries[-1]["time"] == "1700000210.0" and entries[-1]["parent"] == "empty"
    records = sidecar.read_records(sidecar.sidecar_of(tmp_path / "sessions" / turns[0].session_file))
    kinds = [r["type"] for r in records]
    assert kinds[0] == "header" and kinds[-1] == "import"
    assert [r["message"]["id"] for r in records if r["type"] == "alternative"] == ["a1-old", "u2-old", "a2-old"]
    assert {r["node"]["id"]: r["node"]["reason"] for r in records if r["type"] == "skipped"} == {
        "sys": "system",
        "ctx": "context",
        "empty": "empty",
    }
    assert records[-1]["current"] == "a3"
    kernel.close()


def read_fixture(conversation_id: str) -> ImportedConversation:
    return next(
        c
        for c in iter_conversations(FIXTURES / "chatgpt" / "conversations.json")
        if c.conversation_id == conversation_id
    )


def test_imported_turns_are_found_by_their_words_at_once_and_by_meaning_once_embedded(tmp_path: Path) -> None:
    kernel = open_kernel(tmp_path)
    _import(kernel, FIXTURES / "claude" / "conversations.json")
    assert kernel.pending_vectors == kernel.count() > 0
    words = kernel.search(
        SearchRequest("notes list two lines", NOW, 3, resolve_time=False, mode="text", record_access=False)
    )
    assert words.hits
    while kernel.embed_pending(limit=64):
        pass
    assert kernel.pending_vectors == 0
    kernel.close()


@pytest.mark.parametrize("name", SOURCES)
def test_importing_the_same_export_again_changes_nothing(tmp_path: Path, name: str) -> None:
    path = source_path(tmp_path, name)
    kernel = open_kernel(tmp_path / "memory")
    _import(kernel, path)
    before, count = _files(tmp_path / "memory"), kernel.count()
    again = _import(kernel, path)
    assert (again.messages, again.turns, again.alternatives, sum(again.skipped.values())) == (0, 0, 0, 0)
    assert again.present > 0 and again.new_sessions == 0
    assert _files(tmp_path / "memory") == before
    assert kernel.count() == count
    kernel.close()


def _chatgpt(tmp_path: Path, edit: Any) -> Path:
    data = json.loads((FIXTURES / "chatgpt" / "conversations.json").read_text(encoding="utf-8"))
    edit(data)
    path = tmp_path / f"export-{len(list(tmp_path.glob('export-*')))}.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def _conv(data: list[dict[str, Any]], conversation_id: str) -> dict[str, Any]:
    return next(c for c in data if c["id"] == conversation_id)


def _add_node(conv: dict[str, Any], parent: str, node_id: str, role: str, text: str, time: float) -> None:
    message = {
        "id": node_id,
        "author": {"role": role, "name": None, "metadata": {}},
        "create_time": time,
        "content": {"content_type": "text", "parts": [text]},
        "status": "finished_successfully",
        "weight": 1.0,
        "metadata": {},
        "recipient": "all",
    }
    conv["mapping"][node_id] = {"id": node_id, "message": message, "parent": parent, "children": []}
    conv["mapping"][parent]["children"].append(node_id)


def test_a_newer_export_adds_only_the_new_messages_to_the_same_session(tmp_path: Path) -> None:
    def newer(data: list[dict[str, Any]]) -> None:
        conv = _conv(data, "conv-a")
        _add_node(conv, "a3", "u4", "user", "And Nara?", 1700000400.0)
        _add_node(conv, "u4", "a4", "assistant", "Nara has deer.", 1700000410.0)
        conv["current_node"] = "a4"
        conv["title"] = "Kyoto and Nara"

    kernel = open_kernel(tmp_path / "memory")
    _import(kernel, FIXTURES / "chatgpt" / "conversations.json")
    sessions_before = {s.session_id: s.turns for s in kernel.sessions()}
    tally = _import(kernel, _chatgpt(tmp_path, newer))
    assert (tally.messages, tally.turns, tally.extended_sessions, tally.new_sessions, tally.retitled) == (2, 1, 1, 0, 1)
    sessions_after = {s.session_id: s.turns for s in kernel.sessions()}
    assert sessions_after.keys() == sessions_before.keys()
    session_id = next(s for s in sessions_after if sessions_after[s] != sessions_before[s])
    turns = kernel.session_turns(session_id)
    assert json.loads(dict(turns[-1].extra)["source_ids"]) == ["u4", "a4"]
    assert turns[-1].prev_id == turns[-2].id and turns[-1].topic == "Kyoto and Nara"
    ids = [i for t in turns for i in json.loads(dict(t.extra)["source_ids"])]
    assert len(ids) == len(set(ids))
    (conversation,) = [c for c in stored_conversations(tmp_path / "memory") if c.conversation_id == "conv-a"]
    assert conversation.title == "Kyoto and Nara" and conversation.messages[-1].id == "a4"
    kernel.close()


def _edit_continued(data: list[dict[str, Any]]) -> None:
    """conv-a's second question edited in ChatGPT, and the conversation continued from the edit."""
    conv = _conv(data, "conv-a")
    _add_node(conv, "a1", "u2-new", "user", "Actually, Nara instead?", 1700000500.0)
    _add_node(conv, "u2-new", "a2-new", "assistant", "Nara it is.", 1700000510.0)
    conv["current_node"] = "a2-new"


def test_a_moved_current_node_is_recorded_and_an_edit_continued_elsewhere_is_appended(tmp_path: Path) -> None:
    def back_to_the_old_branch(data: list[dict[str, Any]]) -> None:
        _conv(data, "conv-a")["current_node"] = "a2-old"

    root = tmp_path / "memory"
    kernel = open_kernel(root)
    _import(kernel, FIXTURES / "chatgpt" / "conversations.json")
    count = kernel.count()
    moved = _import(kernel, _chatgpt(tmp_path, back_to_the_old_branch))
    assert (moved.moved, moved.turns, moved.messages) == (1, 0, 0) and kernel.count() == count
    (conversation,) = [c for c in stored_conversations(root) if c.conversation_id == "conv-a"]
    assert [m.id for m in conversation.messages] == ["u1", "a1", "u2-old", "a2-old"]
    assert any(b.parent_id == "a1" and b.messages[0].id == "u2" for b in conversation.alternatives)
    continued = _import(kernel, _chatgpt(tmp_path, _edit_continued))
    assert (continued.messages, continued.turns) == (2, 1) and kernel.count() == count + 1
    (conversation,) = [c for c in stored_conversations(root) if c.conversation_id == "conv-a"]
    assert [m.id for m in conversation.messages] == ["u1", "a1", "u2-new", "a2-new"]
    assert conversation.messages[2].parent_id == "a1"
    every = [m.id for m in conversation.messages] + [m.id for b in conversation.alternatives for m in b.messages]
    assert len(every) == len(set(every)) == 4 + 9 + 3  # visible, the first visible branch, the old ones
    kernel.close()


def test_an_edit_continued_elsewhere_counts_the_same_other_branches_in_every_export(tmp_path: Path) -> None:
    # the messages before the edit are turns of the transcript beside the branch now current:
    # JSONL counted only the branches of the import record, ChatGPT and Markdown every one
    root = tmp_path / "memory"
    kernel = open_kernel(root)
    _import(kernel, FIXTURES / "chatgpt" / "conversations.json")
    _import(kernel, _chatgpt(tmp_path, _edit_continued))
    (conversation,) = [c for c in stored_conversations(root) if c.conversation_id == "conv-a"]
    one = Selection(session_id=session_id_for("chatgpt", "conv-a", conversation.created.instant, ZONE))
    counts = {fmt: export(root / "sessions", fmt, tmp_path / fmt.value, one, ZONE).alternatives for fmt in ExportFormat}
    assert sum(len(b.messages) for b in conversation.alternatives) == 9 + 3  # the first visible branch, the old ones
    assert counts == dict.fromkeys(ExportFormat, 9 + 3)
    kernel.close()


def test_two_installs_that_imported_the_same_export_merge_without_duplicates(tmp_path: Path) -> None:
    export = FIXTURES / "chatgpt" / "conversations.json"
    first, second = open_kernel(tmp_path / "a"), open_kernel(tmp_path / "b")
    _import(first, export)
    _import(second, export)
    count = second.count()
    merged = _import(second, tmp_path / "a" / "sessions")
    assert (merged.messages, merged.alternatives, merged.new_sessions) == (0, 0, 0)
    assert second.count() == count
    first.close()
    second.close()


def test_a_session_written_in_huichat_imports_once_into_another_install(tmp_path: Path, kernel: MemoryKernel) -> None:
    from huichat.memory.turns import Message, TurnDraft

    session = kernel.new_session(NOW)
    kernel.append_turn(session, TurnDraft((Message("user", "你好"), Message("assistant", "你好！")), NOW, "问候"))
    other = open_kernel(tmp_path / "other")
    assert _import(other, tmp_path / "sessions").turns == 1
    assert _import(other, tmp_path / "sessions").turns == 0
    assert _import(kernel, tmp_path / "sessions").turns == 0  # its own transcripts: already there
    (info,) = other.sessions()
    assert info.session_id == session.session_id  # a huichat session keeps its id
    (turn,) = other.session_turns(session.session_id)
    assert turn.topic == "问候" and [m.text for m in turn.messages] == ["你好", "你好！"]
    other.close()


def test_conversations_that_began_in_the_same_second_with_the_same_digest_start_get_longer_ids(tmp_path: Path) -> None:
    conversation = read_fixture("conv-a")
    base = session_id_for("chatgpt", "conv-a", conversation.created.instant, ZONE)
    longer = session_id_for("chatgpt", "conv-a", conversation.created.instant, ZONE, 5)
    assert longer.startswith(base) and len(longer) == len(base) + 1
    kernel = open_kernel(tmp_path)
    # a stranger already holds the id this conversation would get
    stranger = kernel.new_session(conversation.created.instant, base)
    from huichat.memory.turns import Message, TurnDraft

    kernel.append_turn(stranger, TurnDraft((Message("user", "mine"),), conversation.created.instant))
    _import(kernel, FIXTURES / "chatgpt" / "conversations.json")
    assert {s.session_id for s in kernel.sessions()} >= {base, longer}
    assert [m.text for t in kernel.session_turns(base) for m in t.messages] == ["mine"]
    kernel.close()


def test_a_sidecar_cut_short_by_a_killed_writer_is_read_and_appended_to_cleanly(tmp_path: Path) -> None:
    path = tmp_path / "chat_x.source.jsonl"
    sidecar.append_records(path, [sidecar.record("import", current="a")])
    with path.open("a", encoding="utf-8") as handle:
        handle.write('{"v":1,"type":"alternative","message":{"id":"b"')  # killed mid-line
    assert [r["current"] for r in sidecar.read_records(path)] == ["a"]
    sidecar.append_records(path, [sidecar.record("import", current="c")])
    assert [r["current"] for r in sidecar.read_records(path)] == ["a", "c"]


def test_an_empty_conversation_is_counted_not_stored(tmp_path: Path) -> None:
    kernel = open_kernel(tmp_path)
    tally = _import(kernel, FIXTURES / "chatgpt" / "conversations.json")
    assert tally.nothing_visible == 1 and tally.conversations == 4 and tally.new_sessions == 3
    kernel.close()


@pytest.mark.parametrize("left", [b"", b'{"v":1,"type":"header","session_id":"'])
def test_an_import_killed_inside_a_new_sessions_first_record_resumes_into_the_same_session(
    tmp_path: Path, left: bytes
) -> None:
    export = FIXTURES / "chatgpt" / "conversations.json"
    whole = open_kernel(tmp_path / "whole")
    _import(whole, export)
    whole.close()
    expected = _files(tmp_path / "whole")
    # the killed import had created the import record of one new session and written
    # nothing whole into it: no header, no turns, no start time
    (record, *_) = sorted(p for p in expected if p.endswith(sidecar.SUFFIX))
    killed = tmp_path / "killed" / record
    killed.parent.mkdir(parents=True)
    killed.write_bytes(left)
    kernel = open_kernel(tmp_path / "killed")
    tally = _import(kernel, export)
    assert tally.new_sessions == 3
    assert [c.conversation_id for c in stored_conversations(tmp_path / "killed")] == [
        c.conversation_id for c in stored_conversations(tmp_path / "whole")
    ]
    files = _files(tmp_path / "killed")
    assert files.keys() == expected.keys()  # the same session ids: nothing left behind
    assert sidecar.read_records(killed) == sidecar.read_records(tmp_path / "whole" / record)
    kernel.close()

"""OpenAI-style chat JSONL: no ids, no times; parts lists and tool calls."""

from __future__ import annotations

import json
import shutil
from datetime import UTC, datetime
from pathlib import Path

import pytest

from huichat.memory.imports.model import ImportedConversation, ImportFormatError, NoteKind, PartKind, Role, SkipReason
from tests.memory.imports.helpers import FIXTURES, ids, parts, read_all


@pytest.fixture(scope="module")
def lines() -> list[ImportedConversation]:
    return list(read_all(FIXTURES / "chat.jsonl").values())


def test_every_line_is_a_conversation_and_crlf_line_ends_are_fine(lines: list[ImportedConversation]) -> None:
    assert [len(c.messages) for c in lines] == [2, 4, 3, 0]
    assert [c.origin.rsplit("#", 1)[1] for c in lines] == ["1", "2", "3", "4"]  # records, blank lines not counted


def test_system_messages_are_skipped_and_kept(lines: list[ImportedConversation]) -> None:
    (system,) = lines[0].skipped
    assert system.reason is SkipReason.SYSTEM and json.loads(system.raw)["content"] == "You are terse."
    assert lines[0].messages[0].text == "hi 你好"


def test_parts_lists_and_tool_calls_are_typed(lines: list[ImportedConversation]) -> None:
    asked, call, result, answer = lines[1].messages
    assert asked.text == "what is this\n\n[image]"  # inline base64 is not kept
    tool_call = parts(call, PartKind.TOOL_CALL)[0]
    assert (tool_call.name, tool_call.call_id, tool_call.text) == ("lookup", "call_1", '{"q": "x"}')
    assert result.role is Role.TOOL and parts(result, PartKind.TOOL_RESULT)[0].call_id == "call_1"
    assert answer.text == "It is x."


def test_unknown_parts_are_kept_raw_and_speaker_names_kept(lines: list[ImportedConversation]) -> None:
    named = lines[2]
    assert named.conversation_id == "named-7" and named.messages[0].speaker == "alice"
    assert named.messages[1].text == "```sh\r\nls\r\n```"
    assert parts(named.messages[2], PartKind.UNKNOWN)[0].name == "audio_clip"
    assert any(n.kind is NoteKind.UNKNOWN_CONTENT for n in named.notes)


def test_times_are_the_file_time_and_flagged_as_synthesised(lines: list[ImportedConversation]) -> None:
    modified = datetime.fromtimestamp((FIXTURES / "chat.jsonl").stat().st_mtime, UTC)
    for conversation in lines:
        assert conversation.created.estimated and conversation.created.instant == modified
        assert all(m.time.estimated and m.time.instant == modified for m in conversation.messages)
        assert any(n.kind is NoteKind.TIME_SYNTHESISED for n in conversation.notes)


def test_ids_come_from_the_content_so_a_reimport_finds_the_same_conversation(tmp_path: Path) -> None:
    copy = tmp_path / "again.jsonl"
    shutil.copy(FIXTURES / "chat.jsonl", copy)
    first, again = list(read_all(FIXTURES / "chat.jsonl")), list(read_all(copy))
    assert first == again
    copy.write_text('{"messages": [{"role": "user", "content": "hi 你好!"}]}\n')
    ((changed, conversation),) = read_all(copy).items()
    assert changed not in first and ids(conversation.messages) == ["0"]


def test_a_json_array_of_chats_reads_the_same(tmp_path: Path) -> None:
    path = tmp_path / "chats.json"
    path.write_text(
        json.dumps([{"messages": [{"role": "user", "content": "a"}, {"role": "assistant", "content": "b"}]}])
    )
    (conversation,) = read_all(path).values()
    assert [m.text for m in conversation.messages] == ["a", "b"]


def test_a_broken_line_names_the_file_and_the_record(tmp_path: Path) -> None:
    path = tmp_path / "broken.jsonl"
    path.write_text('{"messages": [{"role": "user", "content": "a"}]}\n{"messages": [{"role": \n')
    with pytest.raises(
        ImportFormatError, match=r"broken\.jsonl: malformed JSON in record 2: .*expected OpenAI-style chat JSONL"
    ):
        read_all(path)
    # tried as a user: an object left open on line 3 of 5 said only "malformed JSON: parse error: …"
    line = '{"messages": [{"role": "user", "content": "%s"}]}'
    lines = [line % "one", line % "two", (line % "three")[:-1], line % "four", line % "five"]
    path.write_text("\n".join(lines) + "\n")
    with pytest.raises(ImportFormatError, match=r"malformed JSON in record 3: "):
        read_all(path)
    path.write_text("[" + ",".join([line % "one", (line % "two")[:-2]]) + "]")  # an array's items likewise
    with pytest.raises(ImportFormatError, match=r"malformed JSON in record 2: "):
        read_all(path)

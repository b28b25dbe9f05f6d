"""DeepSeek's official export (no current pointer) and the web-API JSON (current_message_id)."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import pytest

from huichat.memory.imports.model import ImportedConversation, NoteKind, PartKind, Role, SourceFormat
from tests.memory.imports.helpers import FIXTURES, ids, message, parts, read_all


@pytest.fixture(scope="module")
def export() -> dict[str, ImportedConversation]:
    return read_all(FIXTURES / "deepseek" / "conversations.json")


@pytest.fixture(scope="module")
def web() -> ImportedConversation:
    return read_all(FIXTURES / "deepseek" / "web_session.json")["ds-web-1"]


def test_without_a_pointer_the_latest_leaf_is_taken_and_marked_as_a_guess(
    export: dict[str, ImportedConversation],
) -> None:
    conversation = export["ds-1"]
    assert ids(conversation.messages) == ["1", "2", "4", "5"]
    assert [(b.parent_id, ids(b.messages)) for b in conversation.alternatives] == [("2", ["3", "6"])]
    assert conversation.branch_heuristic
    assert any(n.kind is NoteKind.BRANCH_HEURISTIC for n in conversation.notes)


def test_a_conversation_with_one_leaf_is_not_a_guess(export: dict[str, ImportedConversation]) -> None:
    assert not export["ds-2"].branch_heuristic


def test_roles_come_from_fragment_types_and_thinking_is_typed(export: dict[str, ImportedConversation]) -> None:
    conversation = export["ds-1"]
    assert [m.role for m in conversation.messages] == [Role.USER, Role.ASSISTANT, Role.USER, Role.ASSISTANT]
    reply = message(conversation, "2")
    assert (reply.text, parts(reply, PartKind.REASONING)[0].text, reply.model) == (
        "至少 16 GB。",
        "用户问显存",
        "deepseek-reasoner",
    )
    last = message(conversation, "5")
    assert parts(last, PartKind.TOOL_RESULT)[0].text == "Quantization https://example.com/q"
    assert parts(last, PartKind.UNKNOWN)[0].name == "TIP"
    assert message(conversation, "4").text == "[file spec.pdf, 1.0 KB]\n\n7B 量化模型呢？"


def test_plus_eight_times_are_converted_and_kept_verbatim(export: dict[str, ImportedConversation]) -> None:
    first = message(export["ds-1"], "1")
    assert first.time.raw == "2025-01-27T13:39:24.513000+08:00"
    assert first.time.instant == datetime(2025, 1, 27, 5, 39, 24, 513000, tzinfo=UTC)


def test_the_web_form_follows_current_message_id_and_keeps_edited_first_prompts(web: ImportedConversation) -> None:
    assert ids(web.messages) == ["3", "4"]
    assert [(b.parent_id, ids(b.messages)) for b in web.alternatives] == [(None, ["1", "2"])]
    assert not web.branch_heuristic
    assert message(web, "2").text == "回答一" and parts(message(web, "2"), PartKind.REASONING)[0].text == "想一想"


def test_the_web_form_reads_float_times_and_shares_the_deepseek_id_space(web: ImportedConversation) -> None:
    assert message(web, "4").time.raw == "1763826160.25"
    assert message(web, "4").time.instant == datetime(2025, 11, 22, 15, 42, 40, 250000, tzinfo=UTC)
    assert web.source is SourceFormat.DEEPSEEK_WEB and web.key("4") == ("deepseek", "ds-web-1", "4")


def test_the_older_web_form_without_fragments_and_without_the_wrapper(tmp_path: Path) -> None:
    session = {
        "chat_session": {"id": "old-web", "title": "t", "current_message_id": 2, "inserted_at": 1700000000.5},
        "chat_messages": [
            {"message_id": 1, "parent_id": None, "role": "USER", "content": "问题", "inserted_at": 1700000000.5},
            {
                "message_id": 2,
                "parent_id": 1,
                "role": "ASSISTANT",
                "content": "答案",
                "thinking_content": "想",
                "inserted_at": None,
            },
        ],
    }
    path = tmp_path / "saved.json"
    path.write_text(json.dumps([session, session | {"chat_session": session["chat_session"] | {"id": "again"}}]))
    conversations = read_all(path)
    assert set(conversations) == {"old-web", "again"}
    answer = conversations["old-web"].messages[1]
    assert (answer.text, parts(answer, PartKind.REASONING)[0].text) == ("答案", "想")
    assert answer.time.estimated and answer.time.raw == ""

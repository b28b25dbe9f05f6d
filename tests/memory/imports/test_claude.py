"""The Claude reader: parent trees, content blocks over the lossy text field, typed blocks."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from huichat.memory.imports.grouping import group_turns
from huichat.memory.imports.model import ImportedConversation, NoteKind, PartKind, SkipReason
from tests.memory.imports.helpers import FIXTURES, ids, message, parts, read_all


@pytest.fixture(scope="module")
def export() -> dict[str, ImportedConversation]:
    return read_all(FIXTURES / "claude" / "conversations.json")


def test_the_current_branch_ends_at_the_last_array_element(export: dict[str, ImportedConversation]) -> None:
    conversation = export["c-1"]
    assert ids(conversation.messages) == ["m1", "m3", "m4", "m5"]
    # an edited first prompt is a second root; a retry hangs off the message it answers
    assert [(b.parent_id, ids(b.messages)) for b in conversation.alternatives] == [(None, ["m0"]), ("m1", ["m2"])]


def test_an_empty_message_is_skipped_but_kept(export: dict[str, ImportedConversation]) -> None:
    (skipped,) = export["c-1"].skipped
    assert (skipped.id, skipped.reason, skipped.on_visible_branch) == ("m7", SkipReason.EMPTY, False)
    assert '"uuid":"m7"' in skipped.raw


def test_content_blocks_win_over_the_lossy_text_field(export: dict[str, ImportedConversation]) -> None:
    m3 = message(export["c-1"], "m3")
    assert m3.text == "The notes list two lines."
    assert parts(m3, PartKind.REASONING)[0].text == "Let me read"
    call = parts(m3, PartKind.TOOL_CALL)[0]
    assert (call.name, call.call_id, call.text) == ("web_search", "toolu_1", '{"query":"notes"}')
    result = parts(m3, PartKind.TOOL_RESULT)[0]
    assert result.call_id == "toolu_1" and result.text.startswith("result A\n")
    assert all("not supported" not in p.text for p in m3.parts)


def test_the_text_field_is_the_fallback_when_there_are_no_blocks(export: dict[str, ImportedConversation]) -> None:
    assert message(export["c-1"], "m5").text == "不客气"  # the "not supported" placeholder is dropped


def test_attachments_keep_their_extracted_text(export: dict[str, ImportedConversation]) -> None:
    m1 = message(export["c-1"], "m1")
    attachment, photo = parts(m1, PartKind.ATTACHMENT)
    assert attachment.text == "[attachment notes.txt, text/plain, 2.0 KB]"
    assert attachment.content == "Line one\nLine two"
    assert photo.text == "[file photo.jpg]"
    assert m1.text.endswith("Summarise the attached notes")


def test_unknown_blocks_are_kept_raw(export: dict[str, ImportedConversation]) -> None:
    m4 = message(export["c-1"], "m4")
    assert m4.text == "谢谢！😀"
    assert parts(m4, PartKind.UNKNOWN)[0].raw == '{"type":"voice_note","duration":3}'
    assert any(n.kind is NoteKind.UNKNOWN_CONTENT and n.message_id == "m4" for n in export["c-1"].notes)


def test_without_parent_ids_the_array_order_is_the_conversation(export: dict[str, ImportedConversation]) -> None:
    conversation = export["c-2"]
    assert ids(conversation.messages) == ["h1", "a1", "h2", "h3", "a2"]
    assert conversation.alternatives == ()
    # two human messages in a row: the first got no reply and is a turn of its own
    assert [t.source_ids for t in group_turns(conversation.messages)] == [("h1", "a1"), ("h2",), ("h3", "a2")]


def test_times_are_read_in_utc_and_kept_verbatim(export: dict[str, ImportedConversation]) -> None:
    m1 = message(export["c-1"], "m1")
    assert m1.time.raw == "2025-03-01T09:01:00.000000Z"
    assert m1.time.instant == datetime(2025, 3, 1, 9, 1, tzinfo=UTC) and not m1.time.estimated


def test_an_empty_conversation_is_read(export: dict[str, ImportedConversation]) -> None:
    assert export["c-3"].messages == () and export["c-3"].title == "Untitled"

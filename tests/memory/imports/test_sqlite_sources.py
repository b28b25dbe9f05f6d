"""simonw/llm logs.db (both generations) and elia's database, opened read-only."""

from __future__ import annotations

import hashlib
import sqlite3
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from huichat.memory.imports.grouping import group_turns
from huichat.memory.imports.model import ImportedConversation, ImportFormatError, NoteKind, PartKind, Role, SkipReason
from tests.memory.imports.helpers import database, ids, message, parts, read_all

R = "01jm8ec74wxsdatyn5pq1fp0s"  # the legacy fixture's response ids: R + 5 … 9


@pytest.fixture
def legacy(tmp_path: Path) -> dict[str, ImportedConversation]:
    return read_all(database(tmp_path, "llm_legacy"))


@pytest.fixture
def both(tmp_path: Path) -> dict[str, ImportedConversation]:
    return read_all(database(tmp_path, "llm_032"))


def test_legacy_rows_become_prompt_and_reply_messages_in_id_order(legacy: dict[str, ImportedConversation]) -> None:
    conversation = legacy["01jm8ec74taftdgj2t4zra9z0j"]
    assert conversation.title == "pelican names"
    assert ids(conversation.messages) == [
        f"{R}5:prompt", f"{R}5:response", f"{R}6:prompt", f"{R}6:response",
        f"{R}7:tool_results", f"{R}7:response", f"{R}8:prompt", f"{R}8:response",
    ]  # fmt: skip
    # the system prompt is kept once, not repeated for every row that used it
    assert [(s.id, s.reason) for s in conversation.skipped] == [(f"{R}5:system", SkipReason.SYSTEM)]
    assert [t.source_ids[0] for t in group_turns(conversation.messages)] == [
        f"{R}5:prompt",
        f"{R}6:prompt",
        f"{R}8:prompt",
    ]


def test_the_reply_is_dated_start_plus_duration_and_says_so(legacy: dict[str, ImportedConversation]) -> None:
    conversation = legacy["01jm8ec74taftdgj2t4zra9z0j"]
    prompt, reply = message(conversation, f"{R}5:prompt"), message(conversation, f"{R}5:response")
    assert reply.time.instant - prompt.time.instant == timedelta(milliseconds=560)
    assert reply.time.raw == "2025-02-16T22:34:30.374882+00:00 + 560 ms" and not reply.time.estimated
    naive = message(conversation, f"{R}7:response")
    assert naive.time.instant == datetime(2025, 2, 16, 22, 35, 1, tzinfo=UTC)  # llm's naive values are UTC


def test_legacy_tools_reasoning_fragments_and_attachments_are_typed(legacy: dict[str, ImportedConversation]) -> None:
    conversation = legacy["01jm8ec74taftdgj2t4zra9z0j"]
    call = parts(message(conversation, f"{R}6:response"), PartKind.TOOL_CALL)[0]
    result = parts(message(conversation, f"{R}7:tool_results"), PartKind.TOOL_RESULT)[0]
    assert (call.name, call.call_id, result.call_id, result.text) == ("now", "call_a", "call_a", "22:35")
    assert message(conversation, f"{R}7:tool_results").role is Role.TOOL
    assert parts(message(conversation, f"{R}7:response"), PartKind.REASONING)[0].text == "The tool said 22:35"
    fragment, attachment = parts(message(conversation, f"{R}8:prompt"), PartKind.ATTACHMENT)
    assert (fragment.name, fragment.content) == ("notes.md", "long notes about pelicans")
    assert attachment.text == "[attachment /tmp/pelican.png, image/png]"


def test_a_response_without_conversation_is_its_own(legacy: dict[str, ImportedConversation]) -> None:
    assert [m.text for m in legacy[f"{R}9"].messages] == ["one-off", "answer"]


def test_threads_give_the_visible_chain_and_retries_as_alternatives(both: dict[str, ImportedConversation]) -> None:
    thread = both["thread-1"]
    assert ids(thread.messages) == ["b2:u1", "b2:a1", "b2:u2", "b2:a2"]
    assert [(b.parent_id, ids(b.messages)) for b in thread.alternatives] == [("b2:u2", ["b2:a2r"])]


def test_messages_take_the_time_of_the_earliest_turn_that_reached_them(both: dict[str, ImportedConversation]) -> None:
    thread = both["thread-1"]
    start = datetime(2026, 8, 5, 10, 0, tzinfo=UTC)
    assert message(thread, "b2:u1").time.instant == start
    assert message(thread, "b2:a1").time.instant == start + timedelta(milliseconds=500)
    assert message(thread, "b2:u2").time.instant == start + timedelta(minutes=1)  # the retry's turn came first
    assert message(thread, "b2:a2").time.instant == start + timedelta(minutes=2, milliseconds=400)


def test_text_refs_tool_parts_and_unknown_parts_are_resolved(both: dict[str, ImportedConversation]) -> None:
    thread = both["thread-2"]
    follow_up = message(thread, "b2:fu")
    novel = parts(follow_up, PartKind.ATTACHMENT)[0]
    assert (novel.name, novel.content) == ("novel.txt", "A long novel text")
    assert parts(follow_up, PartKind.TEXT)[0].text == "\nfollow-up"
    call = parts(message(thread, "b2:fa"), PartKind.TOOL_CALL)[0]
    assert (call.name, call.call_id, call.text) == ("calc", "c1", '{"x":1}')
    assert message(thread, "b2:ft").role is Role.TOOL  # tool output in a user-role message
    assert parts(message(thread, "b2:fa2"), PartKind.UNKNOWN)[0].raw == '{"beam": true}'


def test_attachments_are_named_from_the_attachments_table(both: dict[str, ImportedConversation]) -> None:
    (question,) = both["01t7"].messages[:1]
    assert question.text == "orphan q\n\n[attachment https://example.com/pelican.jpg, image/jpeg]"


def test_both_generations_are_read_without_counting_anything_twice(both: dict[str, ImportedConversation]) -> None:
    assert set(both) == {"thread-1", "thread-2", "thread-3", "01t7", "conv-old"}
    everything = [m.id for c in both.values() for m in [*c.messages, *(m for b in c.alternatives for m in b.messages)]]
    assert len(everything) == len(set(everything))
    assert not any(i.startswith(("01dual", "01resent")) for i in everything)  # also turns / re-sent into a chain
    assert [m.text for m in both["conv-old"].messages] == ["legacy only question", "legacy answer"]


def test_history_re_sent_from_an_older_llm_keeps_its_own_time(both: dict[str, ImportedConversation]) -> None:
    thread = both["thread-2"]
    assert message(thread, "b2:ou").time.instant == datetime(2026, 7, 1, 9, tzinfo=UTC)
    assert message(thread, "b2:oa").time.raw == "2026-07-01T09:00:00+00:00 + 1500 ms"


def test_a_fork_links_to_the_message_it_continues_instead_of_repeating_it(
    both: dict[str, ImportedConversation],
) -> None:
    fork = both["thread-3"]
    assert ids(fork.messages) == ["b2:x1", "b2:x2"]
    assert fork.messages[0].parent_id == "b2:a1"
    assert ("forked_from", "thread-1") in fork.extra
    assert any(n.kind is NoteKind.CONTINUES for n in fork.notes)
    assert not any(n.kind is NoteKind.MISSING_PARENT for n in fork.notes)


def test_the_database_is_opened_read_only_and_left_untouched(tmp_path: Path) -> None:
    path = database(tmp_path, "llm_032")
    before = hashlib.sha256(path.read_bytes()).hexdigest()
    assert len(read_all(path)) == 5
    assert hashlib.sha256(path.read_bytes()).hexdigest() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["llm_032.db"]


def test_an_llm_database_from_before_0_5_gets_a_clear_message(tmp_path: Path) -> None:
    path = tmp_path / "logs.db"
    connection = sqlite3.connect(path)
    connection.execute(
        "create table logs (id integer primary key, model text, prompt text, response text, datetime_utc text)"
    )
    connection.commit()
    connection.close()
    with pytest.raises(ImportFormatError, match=r"logs\.db: an llm logs\.db from llm 0\.4 or older"):
        read_all(path)


@pytest.fixture
def elia(tmp_path: Path) -> dict[str, ImportedConversation]:
    return read_all(database(tmp_path, "elia"))


def test_elia_chats_are_read_in_id_order_with_system_and_empty_messages_kept_aside(
    elia: dict[str, ImportedConversation],
) -> None:
    chat = elia["1@2024-05-01T10:00:00.123456+00:00"]
    assert chat.title == "Elia chat"
    assert [m.text for m in chat.messages] == ["hello elia", "hi", "bye"]
    assert [(s.id, s.reason) for s in chat.skipped] == [("1", SkipReason.SYSTEM), ("4", SkipReason.EMPTY)]


def test_elia_naive_times_are_read_as_utc_and_a_missing_one_is_estimated(elia: dict[str, ImportedConversation]) -> None:
    chat = elia["1@2024-05-01T10:00:00.123456+00:00"]
    hi, bye = chat.messages[1], chat.messages[2]
    assert hi.time.raw == "2024-05-01 10:00:03.500000"
    assert hi.time.instant == datetime(2024, 5, 1, 10, 0, 3, 500000, tzinfo=UTC)
    assert bye.time.estimated and bye.time.instant == hi.time.instant
    assert any(n.kind is NoteKind.TIME_ASSUMED_UTC for n in chat.notes)
    assert elia["2@2024-05-02T10:00:00+00:00"].messages == ()

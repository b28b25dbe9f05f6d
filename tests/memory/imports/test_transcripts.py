"""huichat's own transcripts from another machine, read through TurnChunker (also from month archives)."""

from __future__ import annotations

from datetime import date, datetime
from pathlib import Path

from huichat.memory.archive import pack_months
from huichat.memory.imports.grouping import group_turns
from huichat.memory.imports.model import Role, SourceFormat
from huichat.memory.transcript import TranscriptWriter
from huichat.memory.turns import STATUS_FAILED, Message, Turn, session_relpath
from tests.conftest import ZONE
from tests.memory.imports.helpers import read_all

SESSION = "20261125-150000-abcd"
WHEN = datetime(2026, 11, 25, 15, 0, tzinfo=ZONE)


def _turns() -> list[Turn]:
    relpath = session_relpath(SESSION, WHEN)
    said = [
        ((Message("user", "上周三我们聊了什么？"), Message("assistant", "聊了部署。\r\n```sh\r\nls\r\n```", "Hui"))),
        ((Message("user", "no answer came"),)),
        ((Message("note", "imported note"),)),
    ]
    return [
        Turn(
            id=f"t{i}aaaa"[:6],
            session_id=SESSION,
            session_file=relpath,
            turn_index=i,
            timestamp=WHEN.replace(minute=i),
            messages=messages,
            topic="部署" if i == 0 else "",
            recalled_ids=("k7f2a1",) if i == 0 else (),
            status=STATUS_FAILED if i == 1 else "ok",
        )
        for i, messages in enumerate(said)
    ]


def _write(root: Path) -> list[Turn]:
    turns = _turns()
    TranscriptWriter(root, ZONE).append(turns)
    return turns


def test_a_transcript_imports_with_its_turns_ids_and_times(tmp_path: Path) -> None:
    turns = _write(tmp_path / "sessions")
    (conversation,) = read_all(tmp_path / "sessions").values()
    assert (conversation.source, conversation.conversation_id, conversation.title) == (
        SourceFormat.HUICHAT,
        SESSION,
        "部署",
    )
    assert [m.id for m in conversation.messages] == ["t0aaaa.0", "t0aaaa.1", "t1aaaa.0", "t2aaaa.0"]
    assert [t.source_ids for t in group_turns(conversation.messages)] == [
        ("t0aaaa.0", "t0aaaa.1"),
        ("t1aaaa.0",),
        ("t2aaaa.0",),
    ]
    first = conversation.messages[1]
    assert (first.text, first.speaker, first.role) == ("聊了部署。\r\n```sh\r\nls\r\n```", "Hui", Role.ASSISTANT)
    assert conversation.messages[3].role is Role.NOTE
    assert [m.time.instant for m in conversation.messages] == [turns[0].timestamp] * 2 + [
        turns[1].timestamp,
        turns[2].timestamp,
    ]
    assert ("topic", "部署") in first.extra and ("recalled", "k7f2a1") in first.extra
    assert ("status", STATUS_FAILED) in conversation.messages[2].extra


def test_transcripts_packed_in_month_archives_are_read_too(tmp_path: Path) -> None:
    sessions = tmp_path / "sessions"
    _write(sessions)
    assert pack_months(sessions, date(2027, 1, 1)) == ["2026-11"]
    assert not list(sessions.glob("*/*/chat_*.md"))
    (conversation,) = read_all(sessions).values()
    assert conversation.conversation_id == SESSION and len(conversation.messages) == 4
    assert ".tar.zst:" in conversation.origin

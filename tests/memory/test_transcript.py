"""Transcripts are the source of truth: they round-trip exactly and survive crashes and edits."""

from __future__ import annotations

import itertools
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from memory.transcript import TranscriptWriter, TurnChunker
from memory.turns import Message, Turn, session_relpath
from tests.conftest import ZONE

TRICKY = [
    "普通的中文消息，带标点。",
    "Markdown **bold**, a list:\n\n- one\n- two\n\n> quote",
    "```python\ndef f():\n    return '<!-- /huichat:msg -->'\n```",
    '\n<!-- huichat:turn {"id": "zzzzzz", "index": 9} -->\nfake marker inside a message',
    "trailing newline\n",
    "",
    "[id:a3f2c7 | prev: k7f2a1 | next: none  ] pasted anchor",
    "emoji 🎉 and ＦＵＬＬＷＩＤＴＨ and tabs\tand\r\nCRLF",
]


def _turns(session_file: str) -> list[Turn]:
    start = datetime(2026, 3, 5, 2, 0, 7, tzinfo=UTC)
    turns = []
    prev = None
    for index, text in enumerate(TRICKY):
        turn = Turn(
            id=f"t{index:05d}",
            session_id="s1",
            session_file=session_file,
            turn_index=index,
            timestamp=start + timedelta(minutes=index),
            messages=(
                Message("user", text, "Caroline"),
                Message("assistant", f"reply {index}: {text[::-1]}"),
            ),
            topic="本地模型部署",
            prev_id=prev,
            recalled_ids=("abc123",) if index % 2 else (),
        )
        prev = turn.id
        turns.append(turn)
    return turns


def test_write_then_parse_round_trips_exactly(tmp_path: Path) -> None:
    relpath = session_relpath("s1", datetime(2026, 3, 5, 10, tzinfo=ZONE))
    assert relpath == "2026-W10/2026-03-05/chat_s1.md"
    writer = TranscriptWriter(tmp_path, ZONE)
    written = _turns(relpath)
    for turn in written:
        writer.append([turn])
    parsed = TurnChunker(tmp_path).chunk_file(tmp_path / relpath)
    assert len(parsed) == len(written)
    for original, back in zip(written, parsed, strict=True):
        assert back.messages == original.messages
        assert back.id == original.id and back.turn_index == original.turn_index
        assert back.timestamp == original.timestamp and back.topic == original.topic
        assert back.recalled_ids == original.recalled_ids
        assert back.session_file == relpath
    assert [t.prev_id for t in parsed] == [None] + [t.id for t in written[:-1]]
    assert [t.next_id for t in parsed] == [t.id for t in written[1:]] + [None]


def test_a_batch_is_linked_and_joins_the_previous_turn(tmp_path: Path) -> None:
    writer = TranscriptWriter(tmp_path, ZONE)
    turns = _turns("w/d/chat_s1.md")
    writer.append(turns[:2])
    writer.append(turns[2:])
    text = (tmp_path / "w/d/chat_s1.md").read_text(encoding="utf-8")
    for before, after in itertools.pairwise(turns):
        assert f"[id:{before.id} | prev: {before.prev_id or 'none'} | next: {after.id}]" in text
    assert [t.id for t in TurnChunker(tmp_path).chunk_file(tmp_path / "w/d/chat_s1.md")] == [t.id for t in turns]


def test_visible_anchor_lines_are_kept_in_step(tmp_path: Path) -> None:
    writer = TranscriptWriter(tmp_path, ZONE)
    turns = _turns("w/d/chat_s1.md")[:3]
    for turn in turns:
        writer.append([turn])
    text = (tmp_path / "w/d/chat_s1.md").read_text(encoding="utf-8")
    assert f"[id:{turns[0].id} | prev: none | next: {turns[1].id}]" in text
    assert f"[id:{turns[1].id} | prev: {turns[0].id} | next: {turns[2].id}]" in text
    assert f"[id:{turns[2].id} | prev: {turns[1].id} | next: none  ]" in text
    assert "## 2026-03-05 Thu 10:00:07 · 话题: 本地模型部署" in text


def test_a_turn_cut_off_by_a_killed_writer_is_skipped_and_writing_continues(tmp_path: Path) -> None:
    writer = TranscriptWriter(tmp_path, ZONE)
    turns = _turns("w/d/chat_s1.md")
    writer.append([turns[0]])
    path = tmp_path / "w/d/chat_s1.md"
    whole = len(path.read_bytes())
    writer.append([turns[1]])
    data = path.read_bytes()
    path.write_bytes(data[: whole + (len(data) - whole) // 2])  # the second turn half-written
    writer.append([turns[2]])
    parsed = TurnChunker(tmp_path).chunk_file(path)
    assert [t.id for t in parsed] == [turns[0].id, turns[2].id]
    assert parsed[1].messages == turns[2].messages


def test_a_hand_edited_message_is_still_read(tmp_path: Path) -> None:
    writer = TranscriptWriter(tmp_path, ZONE)
    for turn in _turns("w/d/chat_s1.md")[:2]:
        writer.append([turn])
    path = tmp_path / "w/d/chat_s1.md"
    path.write_text(
        path.read_text(encoding="utf-8").replace("普通的中文消息", "改过的、更长的中文消息"),
        encoding="utf-8",
    )
    parsed = TurnChunker(tmp_path).chunk_file(path)
    assert parsed[0].messages[0].text == "改过的、更长的中文消息，带标点。"
    assert parsed[1].messages == _turns("x")[1].messages


@pytest.mark.parametrize("content", ["", "not a transcript at all", "<!-- huichat:turn {broken json -->\n"])
def test_garbage_files_give_no_turns(tmp_path: Path, content: str) -> None:
    path = tmp_path / "chat_x.md"
    path.write_text(content, encoding="utf-8")
    assert TurnChunker(tmp_path).chunk_file(path) == []


def test_typed_parts_round_trip_and_stay_out_of_the_searchable_text(tmp_path: Path) -> None:
    turn = Turn(
        id="typ001",
        session_id="s",
        session_file="2026-W48/2026-11-25/chat_s.md",
        turn_index=0,
        timestamp=datetime(2026, 11, 25, 7, 0, tzinfo=UTC),
        messages=(
            Message("user", "上周三聊了什么？"),
            Message("assistant", '{"query": "上周三"}', "recall_memory", "tool_call"),
            Message("tool", "[id:abc123 | prev: none | next: none | 相似度: 0.812]", "recall_memory", "tool_result"),
            Message("assistant", "我们聊了部署。"),
        ),
    )
    TranscriptWriter(tmp_path).append([turn])
    text = (tmp_path / turn.session_file).read_text(encoding="utf-8")
    assert "**recall_memory** (assistant · tool_call)" in text
    (parsed,) = TurnChunker(tmp_path).chunk_file(tmp_path / turn.session_file)
    assert parsed.messages == turn.messages
    assert parsed.text == "user: 上周三聊了什么？\nassistant: 我们聊了部署。"

"""Exports: JSONL imports back without loss, the ChatGPT file reads as ChatGPT's, Markdown reads as text."""

from __future__ import annotations

import json
from datetime import datetime, timedelta
from pathlib import Path

import pytest

from huichat.memory.exports import ExportFormat
from huichat.memory.exports.selection import Selection
from huichat.memory.exports.writer import export
from huichat.memory.imports.codec import session_id_for
from huichat.memory.imports.ingest import import_conversations
from huichat.memory.imports.model import ImportedConversation, SourceFormat
from huichat.memory.imports.reader import iter_conversations
from huichat.memory.kernel import MemoryKernel
from huichat.memory.turns import STATUS_FAILED, STOPPED, Message, TurnDraft
from huichat.providers.redact import REDACTED, redact
from tests.conftest import NOW, ZONE, open_kernel
from tests.memory.imports.helpers import FIXTURES
from tests.memory.imports.stored_helpers import SOURCES, canonical, source_path, stored_conversations


def _imported(tmp_path: Path, name: str) -> tuple[MemoryKernel, dict[str, ImportedConversation]]:
    path = source_path(tmp_path, name)
    kernel = open_kernel(tmp_path / "memory")
    import_conversations(kernel, iter_conversations(path), NOW)
    return kernel, {c.conversation_id: c for c in iter_conversations(path) if c.messages}


def _export(tmp_path: Path, fmt: ExportFormat, out: str, selection: Selection | None = None, **kw: object) -> Path:
    report = export(tmp_path / "memory" / "sessions", fmt, tmp_path / out, selection or Selection(), ZONE, **kw)  # type: ignore[arg-type]
    assert report.path is not None
    return report.path


@pytest.mark.parametrize("name", SOURCES)
def test_jsonl_export_imports_into_a_fresh_store_with_every_message_time_role_and_branch(
    tmp_path: Path, name: str
) -> None:
    kernel, read = _imported(tmp_path, name)
    path = _export(tmp_path, ExportFormat.JSONL, "out.jsonl")
    assert next(iter_conversations(path)).source is not SourceFormat.HUICHAT_JSONL  # the source's own identity
    fresh = open_kernel(tmp_path / "fresh")
    import_conversations(fresh, iter_conversations(path), NOW)
    again = stored_conversations(tmp_path / "fresh")
    assert sorted(c.conversation_id for c in again) == sorted(read)
    for conversation in again:
        assert canonical(conversation) == canonical(read[conversation.conversation_id])
    assert fresh.count() == kernel.count()
    # and back into the store it came from: nothing new
    tally = import_conversations(kernel, iter_conversations(path), NOW)
    assert (tally.messages, tally.alternatives, sum(tally.skipped.values())) == (0, 0, 0)
    kernel.close()
    fresh.close()


def _said(conversation: ImportedConversation) -> list[str]:
    return [m.text for m in conversation.messages if m.text]


@pytest.mark.parametrize("name", SOURCES)
def test_the_chatgpt_export_reads_back_through_the_chatgpt_reader(tmp_path: Path, name: str) -> None:
    kernel, read = _imported(tmp_path, name)
    path = _export(tmp_path, ExportFormat.CHATGPT, "conversations.json")
    data = json.loads(path.read_text(encoding="ascii"))  # ASCII-escaped, as ChatGPT writes it
    assert all({"mapping", "current_node", "title", "create_time"} <= set(c) for c in data)
    back = {c.conversation_id: c for c in iter_conversations(path)}
    assert all(c.source is SourceFormat.CHATGPT and not c.branch_heuristic for c in back.values())
    assert set(back) == set(read)
    for conversation_id, original in read.items():
        again = back[conversation_id]
        assert _said(again) == _said(original)
        assert again.title == original.title
        branches = sorted(m.text for b in original.alternatives for m in b.messages if m.text)
        assert sorted(m.text for b in again.alternatives for m in b.messages if m.text) == branches
        if name == "chatgpt":  # its own ids, branches and hidden nodes come back as they were
            assert [m.id for m in again.messages] == [m.id for m in original.messages]
            assert [b.parent_id for b in again.alternatives] == [b.parent_id for b in original.alternatives]
            assert {n.id for n in again.skipped} == {n.id for n in original.skipped}
    # and back into the store it came from (under its own service there): no new session
    tally = import_conversations(kernel, iter_conversations(path), NOW)
    assert tally.new_sessions == 0
    kernel.close()


def test_markdown_is_one_readable_file_per_session(tmp_path: Path) -> None:
    kernel, read = _imported(tmp_path, "chatgpt")
    folder = _export(tmp_path, ExportFormat.MARKDOWN, "md")
    files = sorted(folder.glob("*.md"))
    assert len(files) == len(read) == len(kernel.sessions())
    text = next(t for t in (f.read_bytes().decode("utf-8") for f in files) if "Kyoto" in t)  # CRLF kept
    assert text.startswith("# Kyoto trip 京都\n")
    assert "huichat:" not in text and "<!--" not in text
    assert "From ChatGPT · conversation `conv-a`" in text
    assert "## 2023-11-15 Wed 06:13:20" in text  # local time, the seed's format
    for message in read["conv-a"].messages:
        for part in message.parts:
            if part.kind.value == "text":
                assert part.text in text
    assert "<details><summary>reasoning · gpt-4o</summary>" in text and "**o3**" in text
    assert "## Other branches" in text and "First draft of the plan." in text
    assert "after “Plan a trip to Kyoto 🗾”" in text
    kernel.close()


def test_redact_hides_keys_in_every_format(tmp_path: Path) -> None:
    kernel = open_kernel(tmp_path / "memory")
    session = kernel.new_session(NOW)
    secret = "sk-ant-api03-abcdefghijklmnopqrstuvwxyz0123"
    said = (
        Message("user", f"my key is {secret}, keep it"),
        Message("assistant", "Authorization: Bearer abcdef0123456789xyz"),
    )
    kernel.append_turn(session, TurnDraft(said, NOW, f"keys {secret}"))
    for fmt, out in ((ExportFormat.JSONL, "a.jsonl"), (ExportFormat.CHATGPT, "b.json"), (ExportFormat.MARKDOWN, "c")):
        path = _export(tmp_path, fmt, out, redact=redact)
        written = "".join(p.read_text(encoding="utf-8") for p in ([path] if path.is_file() else path.glob("*.md")))
        assert secret not in written and "abcdef0123456789xyz" not in written
        assert REDACTED in written and "keep it" in written
    kernel.close()


def test_a_selection_takes_whole_sessions_by_time_or_id(tmp_path: Path) -> None:
    kernel = open_kernel(tmp_path / "memory")
    ids = []
    for days in (30, 10, 1):
        when = NOW - timedelta(days=days)
        session = kernel.new_session(when)
        kernel.append_turn(session, TurnDraft((Message("user", f"{days} days ago"),), when))
        kernel.append_turn(session, TurnDraft((Message("user", "an hour later"),), when + timedelta(hours=1)))
        ids.append(session.session_id)
    since = _export(tmp_path, ExportFormat.JSONL, "since.jsonl", Selection(since=NOW - timedelta(days=10, minutes=30)))
    sessions = [json.loads(line) for line in since.read_text(encoding="utf-8").splitlines()]
    assert [r["session_id"] for r in sessions if r["record"] == "session"] == ids[1:]
    assert sum(r["record"] == "turn" for r in sessions) == 4  # whole sessions
    until = _export(tmp_path, ExportFormat.JSONL, "until.jsonl", Selection(until=NOW - timedelta(days=29)))
    assert {json.loads(line)["session_id"] for line in until.read_text(encoding="utf-8").splitlines()} == {ids[0]}
    one = _export(tmp_path, ExportFormat.JSONL, "one.jsonl", Selection(session_id=ids[2]))
    assert {json.loads(line)["session_id"] for line in one.read_text(encoding="utf-8").splitlines()} == {ids[2]}
    nothing = export(tmp_path / "memory" / "sessions", ExportFormat.JSONL, tmp_path / "none.jsonl",
                     Selection(since=datetime(2030, 1, 1, tzinfo=ZONE)), ZONE)  # fmt: skip
    assert nothing.sessions == 0 and not (tmp_path / "none.jsonl").exists()
    kernel.close()


@pytest.mark.parametrize("fmt", [ExportFormat.JSONL, ExportFormat.CHATGPT])
def test_a_session_written_in_huichat_imports_back_where_it_came_from_unchanged(
    tmp_path: Path, fmt: ExportFormat
) -> None:
    # its title is the first message's clause (no model titled it): read back, that is no new title
    kernel = open_kernel(tmp_path / "memory")
    session = kernel.new_session(NOW)
    said = (
        Message("user", "My sister Lena lives in Shanghai, and she works at a bank."),
        Message("assistant", "Noted."),
    )
    kernel.append_turn(session, TurnDraft(said, NOW, "My sister Lena lives in…"))
    path = _export(tmp_path, fmt, "out.json")
    transcripts = {p: p.read_bytes() for p in (tmp_path / "memory" / "sessions").glob("*/*/*")}
    tally = import_conversations(kernel, iter_conversations(path), NOW)
    assert (tally.unchanged, tally.extended_sessions, tally.retitled, tally.messages) == (1, 0, 0, 0)
    assert {p: p.read_bytes() for p in (tmp_path / "memory" / "sessions").glob("*/*/*")} == transcripts
    kernel.close()


def test_markdown_marks_a_reply_that_was_stopped_or_failed_and_counts_one_turn_as_one(tmp_path: Path) -> None:
    # a user's trial: the stopped reply read as plain cut-off text, and the header said "1 turns"
    kernel = open_kernel(tmp_path / "memory")
    session = kernel.new_session(NOW)
    said = (Message("user", "Tell me a long story."), Message("assistant", "Once upon a time, in a land"))
    kernel.append_turn(session, TurnDraft(said, NOW, "A story", status=STATUS_FAILED, extra=(("error", STOPPED),)))
    [page] = _export(tmp_path, ExportFormat.MARKDOWN, "md").glob("*.md")
    text = page.read_text(encoding="utf-8")
    assert " · 1 turn\n" in text
    assert "Once upon a time, in a land\n\n*■ stopped: the reply was cut short here*" in text
    failed = kernel.new_session(NOW + timedelta(hours=1))
    kernel.append_turn(
        failed,
        TurnDraft(
            (Message("user", "Hello?"),),
            NOW + timedelta(hours=1),
            "Hello",
            status=STATUS_FAILED,
            extra=(("error", "the provider timed out:\n\n*502* from the gateway"),),
        ),
    )
    pages = [p.read_text(encoding="utf-8") for p in _export(tmp_path, ExportFormat.MARKDOWN, "md2").glob("*.md")]
    # on one line, its own * no emphasis: the mark stays one italic line
    assert any("*⚠ the reply failed: the provider timed out: \\*502\\* from the gateway*" in p for p in pages)
    kernel.close()


def test_a_turn_said_after_an_import_continues_the_conversation_in_every_export(tmp_path: Path) -> None:
    # a user's trial: the new turn of a continued ChatGPT conversation hung off its current_node
    # as a side branch, and the export counted it among the other branches
    kernel, read = _imported(tmp_path, "chatgpt")
    original = read["conv-a"]
    session_id = session_id_for("chatgpt", "conv-a", original.created.instant, ZONE)
    later = NOW + timedelta(days=1)
    said = (Message("user", "And what about Nara?"), Message("assistant", "Nara has deer."))
    kernel.append_turn(kernel.resume_session(session_id), TurnDraft(said, later, "Kyoto trip 京都"))
    branches = sum(len(b.messages) for b in original.alternatives)
    assert branches  # the fixture has other branches: the counts below could disagree
    one = Selection(session_id=session_id)
    reports = {
        fmt: export(tmp_path / "memory" / "sessions", fmt, tmp_path / out, one, ZONE)
        for fmt, out in (
            (ExportFormat.CHATGPT, "x.json"),
            (ExportFormat.JSONL, "x.jsonl"),
            (ExportFormat.MARKDOWN, "md"),
        )
    }
    assert {fmt: r.alternatives for fmt, r in reports.items()} == dict.fromkeys(reports, branches)
    (data,) = json.loads((tmp_path / "x.json").read_text(encoding="ascii"))
    path, node = [], data["current_node"]
    while node is not None:
        message = data["mapping"][node]["message"]
        path.append(message["content"]["parts"][0] if message and message["content"].get("parts") else None)
        node = data["mapping"][node]["parent"]
    assert path[:2] == ["Nara has deer.", "And what about Nara?"]
    # into a fresh memory: the new turn is on the main path, the branches are the source's
    fresh = open_kernel(tmp_path / "fresh")
    import_conversations(fresh, iter_conversations(tmp_path / "x.json"), NOW)
    (again,) = stored_conversations(tmp_path / "fresh")
    assert _said(again) == [*_said(original), "And what about Nara?", "Nara has deer."]
    assert sum(len(b.messages) for b in again.alternatives) == branches
    # and back into the store it came from: nothing moved, nothing new
    tally = import_conversations(kernel, iter_conversations(tmp_path / "x.json"), NOW)
    assert (tally.unchanged, tally.moved, tally.messages, tally.alternatives) == (1, 0, 0, 0)
    tally = import_conversations(kernel, iter_conversations(FIXTURES / "chatgpt" / "conversations.json"), NOW)
    assert (tally.moved, tally.messages, tally.alternatives) == (0, 0, 0)
    kernel.close()
    fresh.close()

"""Branches of a session: a new branch in place of a turn, switching back, what the index holds."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

from huichat.memory.kernel import MemoryKernel
from huichat.memory.results import SearchRequest
from huichat.memory.transcript import TurnChunker
from huichat.memory.turns import Message, Turn, TurnDraft
from tests.conftest import NOW, ZONE, open_kernel


def _draft(user: str, answer: str, minutes: int) -> TurnDraft:
    return TurnDraft((Message("user", user), Message("assistant", answer)), NOW + timedelta(minutes=minutes), "t")


def _three_turns(kernel: MemoryKernel) -> list[Turn]:
    session = kernel.new_session(NOW)
    return [
        kernel.append_turn(session, _draft(u, a, i))
        for i, (u, a) in enumerate([("部署在哪台机器", "在 alpha 上"), ("端口是多少", "端口 8080"), ("谁负责", "小王")])
    ]


def _ids(turns: list[Turn]) -> list[str]:
    return [t.id for t in turns]


def _found(kernel: MemoryKernel, query: str) -> list[str]:
    return [hit.turn.id for hit in kernel.search(SearchRequest(query, NOW + timedelta(hours=1)))]


def test_a_new_branch_replaces_a_turn_and_its_followers_in_the_index_and_keeps_them_in_the_transcript(
    kernel: MemoryKernel,
) -> None:
    first, second, third = _three_turns(kernel)
    handle = kernel.branch_before(first.session_id, second.id)
    edited = kernel.append_turn(handle, _draft("端口改成多少了", "端口 9090", 5))
    assert edited.prev_id == first.id and edited.turn_index == second.turn_index
    assert _ids(kernel.session_turns(first.session_id)) == [first.id, edited.id]
    # the branch left behind is searched no more: one fact, one turn
    assert second.id not in _found(kernel, "端口") and edited.id in _found(kernel, "端口")
    parsed = kernel.read_session(first.session_file)
    assert _ids(parsed.turns) == [first.id, edited.id]
    assert _ids(parsed.beside) == [second.id, third.id]  # kept, under their own ids
    assert parsed.tree.siblings(edited.id) == [second.id, edited.id]
    assert parsed.turns[0].next_id == edited.id and parsed.beside[1].prev_id == second.id
    # the next turn follows the new branch
    fourth = kernel.append_turn(handle, _draft("好的", "嗯", 6))
    assert _ids(kernel.session_turns(first.session_id)) == [first.id, edited.id, fourth.id]


def test_switching_back_brings_the_kept_turns_back_under_their_ids_and_a_reopened_session_continues_there(
    tmp_path: Path,
) -> None:
    kernel = open_kernel(tmp_path)
    first, second, third = _three_turns(kernel)
    kernel.append_turn(kernel.branch_before(first.session_id, second.id), _draft("改一下", "好", 5))
    kernel.switch_branch(first.session_file, second.id)
    assert _ids(kernel.session_turns(first.session_id)) == [first.id, second.id, third.id]  # to the branch's end
    assert third.id in _found(kernel, "谁负责")
    handle = kernel.resume_session(first.session_id)
    assert handle.last_turn is not None and handle.last_turn.id == third.id and handle.fork
    after = kernel.append_turn(handle, _draft("还有呢", "没了", 9))
    kernel.close()
    reopened = open_kernel(tmp_path)
    try:
        reopened.reconcile(full=True)  # the index built again from the transcript: the same current branch
        assert _ids(reopened.session_turns(first.session_id)) == [first.id, second.id, third.id, after.id]
    finally:
        reopened.close()


def test_the_first_message_edited_starts_a_second_root(kernel: MemoryKernel) -> None:
    first, _second, _ = _three_turns(kernel)
    root = kernel.append_turn(kernel.branch_before(first.session_id, first.id), _draft("换个问题", "好", 5))
    assert root.prev_id is None
    parsed = kernel.read_session(first.session_file)
    assert _ids(parsed.turns) == [root.id]
    assert parsed.tree.siblings(root.id) == [first.id, root.id]


def test_a_transcript_without_branches_reads_as_before(kernel: MemoryKernel) -> None:
    turns = _three_turns(kernel)
    parsed = TurnChunker().read_file(kernel.transcripts.path_of(turns[0].session_file))
    assert _ids(parsed.turns) == _ids(turns) and parsed.beside == [] and not parsed.tree.branched
    assert "after" not in kernel.transcripts.path_of(turns[0].session_file).read_text(encoding="utf-8")


def test_the_markdown_export_shows_the_current_branch_and_names_the_others(
    kernel: MemoryKernel, tmp_path: Path
) -> None:
    from huichat.memory.exports import ExportFormat
    from huichat.memory.exports.selection import Selection
    from huichat.memory.exports.writer import export

    first, second, _third = _three_turns(kernel)
    kernel.append_turn(kernel.branch_before(first.session_id, second.id), _draft("端口改成多少了", "端口 9090", 5))
    report = export(
        kernel.sessions_dir, ExportFormat.MARKDOWN, tmp_path / "out", Selection(None, None, first.session_id), ZONE
    )
    assert report.path is not None
    text = (report.path / f"{first.session_id}.md").read_text(encoding="utf-8")
    conversation, others = text.split("## Other branches")
    assert "端口 9090" in conversation and "端口 8080" not in conversation and "小王" not in conversation
    assert "### A branch after “在 alpha 上”" in others and "端口 8080" in others and "小王" in others


def test_a_session_packed_into_an_archive_keeps_its_branches(tmp_path: Path) -> None:
    from datetime import date

    from huichat.memory.archive import pack_months

    kernel = open_kernel(tmp_path)
    first, second, _ = _three_turns(kernel)
    edited = kernel.append_turn(kernel.branch_before(first.session_id, second.id), _draft("改一下", "好", 5))
    assert pack_months(kernel.sessions_dir, date(2027, 1, 1))
    parsed = kernel.read_session(first.session_file)  # from the archive: the live file is gone
    assert _ids(parsed.turns) == [first.id, edited.id] and second.id in _ids(parsed.beside)
    handle = kernel.resume_session(first.session_id)
    assert handle.last_turn is not None and handle.last_turn.id == edited.id and not handle.fork
    kernel.close()


def test_a_turn_kept_beside_the_current_branch_is_asked_for_by_id_and_the_answer_says_where_it_is(
    kernel: MemoryKernel,
) -> None:
    first, second, _third = _three_turns(kernel)
    kernel.append_turn(kernel.branch_before(first.session_id, second.id), _draft("端口改成多少了", "端口 9090", 5))
    found = kernel.recall_by_id(f"id:{second.id}")
    assert found.turn is None  # recall holds the current branch only
    # the turn exists (huichat show prints it): "no turn with id" sent the user looking for a lost turn
    assert "no turn" not in found.error
    assert "branch kept beside" in found.error and f"huichat show {second.id}" in found.error
    assert kernel.recall_by_id("zzzzzz").error == "no turn with id zzzzzz"

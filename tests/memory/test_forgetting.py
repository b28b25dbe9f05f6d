"""Forgetting and correcting turns: tombstones and notes appended to the transcript, honoured everywhere."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import pytest

from huichat.memory.errors import BadTurnId, KernelError, UnknownTurn
from huichat.memory.kernel import MemoryKernel, SessionHandle
from huichat.memory.results import SearchRequest
from huichat.memory.transcript import TurnChunker
from huichat.memory.turns import Message, Turn, TurnDraft
from tests.conftest import NOW, open_kernel

SAID = [
    ("我的猫叫什么名字？", "你的猫叫团子。"),
    ("我的银行卡密码是 ZQX-4711-MARKER", "这种信息最好不要告诉我。"),
    ("周末去哪里爬山好？", "可以去香山。"),
]


def _session(kernel: MemoryKernel, pairs: list[tuple[str, str]]) -> tuple[SessionHandle, list[Turn]]:
    handle = kernel.new_session(NOW - timedelta(days=1))
    turns = [
        kernel.append_turn(
            handle, TurnDraft((Message("user", u), Message("assistant", a)), NOW - timedelta(days=1, minutes=-i))
        )
        for i, (u, a) in enumerate(pairs)
    ]
    return handle, turns


def _found(kernel: MemoryKernel, query: str) -> set[str]:
    return {hit.turn.id for hit in kernel.search(SearchRequest(query, NOW, top_k=10)).results}


def test_a_forgotten_turn_leaves_search_and_recall_at_once_and_comes_back_with_undo(kernel: MemoryKernel) -> None:
    _, turns = _session(kernel, SAID)
    secret = turns[1]
    assert secret.id in _found(kernel, "银行卡密码 ZQX-4711-MARKER")

    assert kernel.forget(f"id:{secret.id.upper()}", NOW) == (secret.id, True)

    assert secret.id not in _found(kernel, "银行卡密码 ZQX-4711-MARKER")
    assert "ZQX-4711-MARKER" not in kernel.format_results(kernel.search(SearchRequest("银行卡密码", NOW, top_k=10)))
    assert kernel.recall_by_id(secret.id).turn is None
    assert kernel.forget(secret.id, NOW) == (secret.id, False)  # forgetting twice changes nothing
    # the turn after it keeps its link: the chain and every anchor id stay as they were
    assert kernel.store.get([turns[2].id])[turns[2].id].prev_id == secret.id
    assert {s.turns for s in kernel.sessions()} == {2}

    assert kernel.forget(secret.id, NOW, restore=True) == (secret.id, True)
    assert secret.id in _found(kernel, "银行卡密码 ZQX-4711-MARKER")
    assert kernel.recall_by_id(secret.id).turn is not None


def test_the_tombstone_is_appended_and_the_transcript_stays_readable(tmp_path: Path) -> None:
    kernel = open_kernel(tmp_path)
    handle, turns = _session(kernel, SAID)
    path = tmp_path / "sessions" / handle.session_file
    before = path.read_bytes()
    kernel.forget(turns[1].id, NOW)
    after = path.read_bytes()
    assert after.startswith(before)  # append-only: nothing written before changes
    parsed = TurnChunker.parse(after.decode("utf-8"), handle.session_file)
    assert not parsed.problems and parsed.tail is None
    assert [t.id for t in parsed.turns] == [turns[0].id, turns[2].id]
    assert parsed.forgotten == {turns[1].id} and [t.id for t in parsed.hidden] == [turns[1].id]
    # a turn appended after the tombstone goes on in the same file, nothing cut off as torn
    more = kernel.append_turn(
        kernel.resume_session(handle.session_id), TurnDraft((Message("user", "再问一句"),), NOW - timedelta(hours=1))
    )
    parsed = TurnChunker.parse(path.read_text(encoding="utf-8"), handle.session_file)
    assert not parsed.problems and [t.id for t in parsed.turns] == [turns[0].id, turns[2].id, more.id]
    kernel.close()


def test_reindex_and_a_fresh_reconcile_never_bring_a_forgotten_turn_back(tmp_path: Path) -> None:
    kernel = open_kernel(tmp_path)
    _, turns = _session(kernel, SAID)
    kernel.forget(turns[1].id, NOW)
    kernel.reindex()
    assert kernel.recall_by_id(turns[1].id).turn is None
    assert turns[1].id not in _found(kernel, "ZQX-4711-MARKER 银行卡密码")
    kernel.close()
    (tmp_path / "index-manifest.json").unlink()  # every transcript is read again at the next open
    kernel = open_kernel(tmp_path)
    assert kernel.recall_by_id(turns[1].id).turn is None
    assert kernel.count() == 2
    kernel.close()


def test_the_next_turn_no_longer_carries_the_forgotten_text_as_its_context(kernel: MemoryKernel) -> None:
    _, turns = _session(kernel, SAID)
    kernel.forget(turns[1].id, NOW)
    # the turn after it was indexed with its tail as context: that copy goes with it
    assert all("ZQX-4711-MARKER" not in text for text in kernel.store.texts().values())


def test_bad_and_unknown_ids_say_so(kernel: MemoryKernel) -> None:
    _session(kernel, SAID)
    with pytest.raises(BadTurnId, match="is not a turn id"):
        kernel.forget("not an id", NOW)
    with pytest.raises(UnknownTurn, match="no turn with id zzzzzz"):
        kernel.forget("zzzzzz", NOW)


def test_a_correction_is_recalled_and_found_with_its_turn(kernel: MemoryKernel) -> None:
    _, turns = _session(kernel, SAID)
    kernel.correct(turns[0].id, "猫其实叫年糕，不叫团子", NOW)

    shown = kernel.format_turn(kernel.recall_by_id(turns[0].id).turn)  # type: ignore[arg-type]
    said, _, note = shown.partition("✎ later correction (")
    assert "你的猫叫团子。" in said and note.endswith("): 猫其实叫年糕，不叫团子")
    assert turns[0].id in _found(kernel, "年糕")
    kernel.forget(turns[2].id, NOW)
    with pytest.raises(KernelError, match="is forgotten"):
        kernel.correct(turns[2].id, "x", NOW)


def test_a_turn_kept_beside_the_current_branch_can_be_forgotten_and_stays_so_when_switched_to(
    kernel: MemoryKernel,
) -> None:
    handle, turns = _session(kernel, SAID)
    fork = kernel.branch_before(handle.session_id, turns[2].id)
    kernel.append_turn(fork, TurnDraft((Message("user", "换个问题"), Message("assistant", "好")), NOW))

    assert kernel.forget(turns[2].id, NOW) == (turns[2].id, True)
    kernel.switch_branch(handle.session_file, turns[2].id)
    assert kernel.recall_by_id(turns[2].id).turn is None
    assert [t.id for t in kernel.session_turns(handle.session_id)] == [turns[0].id, turns[1].id]


def test_recalled_by_lists_the_later_turns_that_recalled_a_turn_and_forgetting_it_leaves_them(
    kernel: MemoryKernel,
) -> None:
    handle, turns = _session(kernel, [("我们家的 WiFi 密码是 tangyuan2024", "记住了。"), *SAID])
    secret = turns[0]
    later = kernel.resume_session(handle.session_id)

    def recalling(when: timedelta, ids: tuple[str, ...], answer: str) -> Turn:
        said = (Message("user", "What's the wifi password?"), Message("assistant", answer))
        return kernel.append_turn(later, TurnDraft(said, NOW - when, recalled_ids=ids))

    quoted = recalling(timedelta(hours=5), (turns[1].id, secret.id), "It is tangyuan2024.")
    recalling(timedelta(hours=4), (turns[1].id,), "I only know about your cat.")
    again = recalling(timedelta(hours=3), (secret.id,), "Still tangyuan2024.")

    # before any search (nothing held in memory: read from the index), then from the rows a search holds
    assert kernel.recalled_by(secret.id) == [quoted.id, again.id]
    assert secret.id in _found(kernel, "tangyuan2024") & _found(kernel, "wifi")  # the first builds the indexes
    assert kernel.recalled_by(f"id:{secret.id.upper()}") == [quoted.id, again.id]
    assert kernel.recalled_by(turns[2].id) == []

    kernel.forget(secret.id, NOW)
    # nothing cascades: the turns that quote it are still found by its words, and still say so
    assert kernel.recalled_by(secret.id) == [quoted.id, again.id]
    assert {quoted.id, again.id} <= _found(kernel, "tangyuan2024")
    kernel.forget(again.id, NOW)
    assert kernel.recalled_by(secret.id) == [quoted.id]  # a forgotten one is no longer listed
    with pytest.raises(BadTurnId, match="is not a turn id"):
        kernel.recalled_by("' OR 1=1 --")

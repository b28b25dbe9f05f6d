"""Session titles in the kernel: the transcript records them, every turn's topic (话题) follows, no re-embedding."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import numpy as np
import pytest

from huichat.memory.errors import KernelError
from huichat.memory.filters import Compare
from huichat.memory.kernel import MemoryKernel, SessionHandle
from huichat.memory.results import SearchRequest
from huichat.memory.transcript import TurnChunker
from huichat.memory.turns import Message, SessionTitle, Turn, TurnDraft
from tests.conftest import NOW, open_kernel


def _session(kernel: MemoryKernel, pairs: list[tuple[str, str]], topic: str = "") -> tuple[SessionHandle, list[Turn]]:
    handle = kernel.new_session(NOW - timedelta(days=1))
    turns = [
        kernel.append_turn(
            handle,
            TurnDraft((Message("user", u), Message("assistant", a)), NOW - timedelta(days=1, minutes=-i), topic),
        )
        for i, (u, a) in enumerate(pairs)
    ]
    return handle, turns


VPN = [
    ("我上周三下午在杭州部署了 Qwen，顺便问下 VPN 晚上总断怎么办", "把 WireGuard keepalive 设成 25 秒。"),
    ("设置完还是断", "再看看路由器的 NAT 超时。"),
]


def test_a_title_becomes_every_turns_topic_without_re_embedding(tmp_path: Path) -> None:
    kernel = open_kernel(tmp_path)
    handle, turns = _session(kernel, VPN, topic="我上周三下午在杭州部署了 Qwen…")
    _, other = _session(kernel, [("What about DNS leaks?", "Use the tunnel's resolver.")], topic="DNS")
    before = kernel.store.vectors([t.id for t in turns])

    report = kernel.set_title(handle.session_file, SessionTitle("VPN 夜间断线排查", "model", 2))

    assert (report.retopicked, report.updated, report.added) == (2, 0, 0)
    stored = kernel.store.get([t.id for t in turns + other])
    assert [stored[t.id].topic for t in turns] == ["VPN 夜间断线排查"] * 2
    assert stored[other[0].id].topic == "DNS"
    after = kernel.store.vectors([t.id for t in turns])
    assert all(np.array_equal(before[i], after[i]) for i in before)
    parsed = TurnChunker.parse((tmp_path / "sessions" / handle.session_file).read_text(encoding="utf-8"), "x")
    assert SessionTitle.from_meta(parsed.meta) == SessionTitle("VPN 夜间断线排查", "model", 2)
    # the tool result's 话题 field, and a topic filter, see the title
    found = kernel.search(SearchRequest("WireGuard keepalive", NOW, top_k=1))
    assert "话题: VPN 夜间断线排查 |" in kernel.format_results(found)
    assert {t.id for t in kernel.store.where(Compare("topic", "=", "VPN 夜间断线排查"))} == {t.id for t in turns}
    kernel.close()


def test_the_catalogue_lists_the_title_and_who_wrote_it(tmp_path: Path) -> None:
    kernel = open_kernel(tmp_path)
    handle, _ = _session(kernel, VPN, topic="我上周三下午在杭州部署了 Qwen…")
    assert [(s.title, s.title_source) for s in kernel.sessions()] == [("我上周三下午在杭州部署了 Qwen…", "")]
    kernel.set_title(handle.session_file, SessionTitle("VPN 夜间断线排查", "model", 2))
    kernel.set_title(handle.session_file, SessionTitle("Qwen 部署与 VPN", "local", 2))
    assert [(s.title, s.title_source) for s in kernel.sessions()] == [("Qwen 部署与 VPN", "local")]
    kernel.close()


def test_a_title_the_index_missed_is_moved_in_place_at_the_next_open(tmp_path: Path) -> None:
    kernel = open_kernel(tmp_path)
    handle, turns = _session(kernel, VPN)
    # the process dies after the transcript got the title, before the index did
    kernel.transcripts.update_session(handle.session_file, SessionTitle("VPN 夜间断线排查", "model", 2).to_meta())
    kernel.close()

    reopened = open_kernel(tmp_path, reconcile=False)
    report = reopened.reconcile()
    assert (report.retopicked, report.updated) == (2, 0)
    assert {t.topic for t in reopened.store.get([t.id for t in turns]).values()} == {"VPN 夜间断线排查"}
    assert reopened.reconcile().files_parsed == 0
    reopened.close()


def test_a_rebuilt_index_keeps_the_title_and_later_turns_carry_it(tmp_path: Path) -> None:
    kernel = open_kernel(tmp_path)
    handle, turns = _session(kernel, VPN)
    kernel.set_title(handle.session_file, SessionTitle("VPN 夜间断线排查", "model", 2))
    later = kernel.append_turn(handle, TurnDraft((Message("user", "好了"),), NOW, "VPN 夜间断线排查"))
    kernel.reindex()
    assert {t.topic for t in kernel.session_turns(handle.session_id)} == {"VPN 夜间断线排查"}
    assert [t.id for t in kernel.session_turns(handle.session_id)] == [t.id for t in turns] + [later.id]
    assert kernel.session_meta(handle.session_file)["title_source"] == "model"
    kernel.close()


def test_an_imported_conversations_title_is_kept_as_imported(tmp_path: Path) -> None:
    kernel = open_kernel(tmp_path)
    handle = kernel.new_session(NOW)
    draft = TurnDraft((Message("user", "hi"), Message("assistant", "hello")), NOW, "Dinner plans")
    turn = kernel.append_turns(handle, [draft], session_meta={"title": "Dinner plans", "source": {"service": "x"}})[0]
    assert [(s.title, s.title_source) for s in kernel.sessions()] == [("Dinner plans", "imported")]
    assert SessionTitle.from_meta(kernel.session_meta(turn.session_file)) == SessionTitle("Dinner plans", "imported")
    kernel.close()


def test_a_title_the_user_gives_is_theirs_and_forgetting_the_turn_it_matches_leaves_it(tmp_path: Path) -> None:
    kernel = open_kernel(tmp_path)
    handle, turns = _session(kernel, VPN)
    kernel.set_title(handle.session_file, SessionTitle("VPN 夜间断线排查", "model", 2))

    # the user names it as its first clause reads: forgetting that turn must not cut a title from the next
    title = kernel.rename_session(handle.session_id, "  我上周三下午在杭州部署了 Qwen\n ")

    assert title == SessionTitle("我上周三下午在杭州部署了 Qwen", "user", 2)
    parsed = TurnChunker.parse((tmp_path / "sessions" / handle.session_file).read_text(encoding="utf-8"), "x")
    assert {k: parsed.meta[k] for k in ("title", "title_source", "title_turns")} == title.to_meta()
    assert [(s.title, s.title_source) for s in kernel.sessions()] == [("我上周三下午在杭州部署了 Qwen", "user")]
    kernel.forget(turns[0].id, NOW)
    assert [(s.title, s.title_source) for s in kernel.sessions()] == [("我上周三下午在杭州部署了 Qwen", "user")]
    assert {t.topic for t in kernel.session_turns(handle.session_id)} == {"我上周三下午在杭州部署了 Qwen"}
    with pytest.raises(KernelError, match="a session's title cannot be empty"):
        kernel.rename_session(handle.session_id, " \n ")
    with pytest.raises(KernelError, match="no session 'nope'"):
        kernel.rename_session("nope", "x")
    kernel.close()

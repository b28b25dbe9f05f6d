"""Transcripts kept in the shared store: a session written through one replica is continued
through another, and both working copies end up the same readable Markdown (moto's S3 server)."""

from __future__ import annotations

from pathlib import Path

import pytest

from huichat.memory.config import RetrieverConfig
from huichat.memory.embedding import HashEmbedder
from huichat.memory.errors import KernelError
from huichat.memory.kernel import MemoryKernel
from huichat.memory.location import MemoryLocation
from huichat.memory.objectstore import ObjectStore
from huichat.memory.opening import open_kernel
from huichat.memory.purging import purge_turn
from huichat.memory.transcript import TurnChunker
from huichat.memory.turns import Message, TurnDraft
from tests.conftest import NOW, ZONE
from tests.storage.conftest import S3


def _location(s3: S3, root: Path, **options: str) -> MemoryLocation:
    shared = s3.uri("huichat/users/alice")
    return MemoryLocation(
        root, root / "sessions", f"{shared}/index.lancedb", {**s3.options, **options}, f"{shared}/sessions"
    )


def _open(s3: S3, root: Path) -> MemoryKernel:
    return open_kernel(_location(s3, root), HashEmbedder(64), RetrieverConfig(min_similarity=0.0), ZONE, now=NOW)


def _say(kernel: MemoryKernel, session_id: str | None, text: str) -> str:
    handle = kernel.resume_session(session_id) if session_id else kernel.new_session(NOW)
    turn = kernel.append_turn(handle, TurnDraft((Message("user", text), Message("assistant", "好")), NOW))
    return turn.session_id


def test_a_session_goes_on_through_whichever_replica_and_both_copies_agree(s3: S3, tmp_path: Path) -> None:
    a, b = _open(s3, tmp_path / "a"), _open(s3, tmp_path / "b")
    try:
        session = _say(a, None, "第一句")
        b.pull_shared()
        _say(b, session, "第二句")
        a.pull_shared()
        _say(a, session, "third")
        assert b.pull_shared() == [a.session_turns(session)[0].session_file]
        [file] = {t.session_file for t in a.session_turns(session)}
        copies = [(k.sessions_dir / file).read_bytes() for k in (a, b)]
        turns = TurnChunker().parse(copies[0].decode(), file).turns
        assert [t.messages[0].text for t in turns] == ["第一句", "第二句", "third"]
        assert [t.prev_id for t in turns[1:]] == [t.id for t in turns[:-1]]
        assert [t.turn_index for t in turns] == [0, 1, 2]
        assert TurnChunker().parse(copies[1].decode(), file).turns == turns
        assert a.count() == b.count() == 3
    finally:
        a.close()
        b.close()
    # a new replica, nothing on its disk, gets every transcript from the store at open
    c = _open(s3, tmp_path / "c")
    try:
        # the same turns (only the visible 'next' labels differ: links follow the file's order)
        assert TurnChunker().parse((c.sessions_dir / file).read_text(encoding="utf-8"), file).turns == turns
        assert c.count() == 3 and c.last_report is not None and c.last_report.added == 0
    finally:
        c.close()


def test_a_turn_the_store_refused_is_not_kept_anywhere(s3: S3, tmp_path: Path) -> None:
    kernel = _open(s3, tmp_path / "a")
    try:
        session = _say(kernel, None, "kept")
        shared = kernel.transcripts.shared
        assert shared is not None
        shared.store = ObjectStore(shared.store.uri, {**s3.options, "endpoint": "http://127.0.0.1:9"})
        with pytest.raises(KernelError, match="cannot store transcript"):
            _say(kernel, session, "refused")
        [file] = {t.session_file for t in kernel.session_turns(session)}
        text = (kernel.sessions_dir / file).read_text(encoding="utf-8")
        assert "kept" in text and "refused" not in text
        assert kernel.count() == 1
    finally:
        kernel.close()


def test_a_purge_on_shared_storage_is_refused_before_anything_changes(s3: S3, tmp_path: Path) -> None:
    """The store's segments are immutable: a purge that rewrote only the working copy would leave
    the text in the store (and bring it back to the copy at the next rebuild) — so it is refused."""
    kernel = _open(s3, tmp_path / "a")
    try:
        session = _say(kernel, None, "银行密码 hunter2")
        [turn] = kernel.session_turns(session)
        before = (kernel.sessions_dir / turn.session_file).read_bytes()
        with pytest.raises(KernelError, match="not on shared storage"):
            purge_turn(kernel, turn.id)
        assert (kernel.sessions_dir / turn.session_file).read_bytes() == before
        assert kernel.count() == 1
    finally:
        kernel.close()

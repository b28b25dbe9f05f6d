"""The kernel recovers from what the world throws at it (issue 16): torn transcripts, a lost or
damaged index, hand edits, duplicate rows, hostile searches, a data folder it cannot write."""

from __future__ import annotations

import errno
import os
import threading
from datetime import timedelta
from pathlib import Path

import numpy as np
import numpy.typing as npt
import pytest

from huichat.memory.config import RetrieverConfig
from huichat.memory.embedding import HashEmbedder
from huichat.memory.errors import KernelError, TooLong
from huichat.memory.health import IndexState
from huichat.memory.indexing import session_entries
from huichat.memory.kernel import MemoryKernel, SessionHandle
from huichat.memory.results import SearchRequest
from huichat.memory.store import TurnStore
from huichat.memory.timeparse import TimeResolver
from huichat.memory.transcript import TranscriptWriter
from huichat.memory.turns import Message, Turn, TurnDraft
from tests.conftest import NOW, ZONE, open_kernel

EVENTS = TimeResolver(ZONE).event_ranges


def _say(kernel: MemoryKernel, session: SessionHandle, i: int, text: str = "") -> Turn:
    messages = (Message("user", text or f"message {i} about 记忆"), Message("assistant", f"reply {i}"))
    return kernel.append_turn(session, TurnDraft(messages, NOW + timedelta(minutes=i)))


def _session(kernel: MemoryKernel, count: int) -> tuple[SessionHandle, list[Turn]]:
    session = kernel.new_session(NOW)
    return session, [_say(kernel, session, i) for i in range(count)]


def _file(root: Path, turn: Turn) -> Path:
    return root / "sessions" / turn.session_file


# ------------------------------------------------------------------ 1: torn transcripts


def test_a_torn_transcript_keeps_its_complete_turns_and_is_repaired(tmp_path: Path) -> None:
    kernel = open_kernel(tmp_path, reconcile=False)
    session, turns = _session(kernel, 3)
    kernel.close()
    path = _file(tmp_path, turns[0])
    # a fourth turn was being written when the power went: it stops inside a character
    messages = (Message("user", "写到一半"), Message("assistant", "这条回复没写完"))
    fourth = Turn("torn01", session.session_id, session.session_file, 3, NOW, messages, prev_id=turns[-1].id)
    TranscriptWriter(tmp_path / "sessions", ZONE).append([fourth])
    data = path.read_bytes()
    path.write_bytes(data[: data.index("没写完".encode()) + 2])
    (tmp_path / "index-manifest.json").unlink()
    kernel.store.delete([turns[2].id])  # the last complete turn was never indexed either
    reopened = open_kernel(tmp_path, reconcile=False)
    report = reopened.reconcile()
    assert report.added == 1 and report.unreadable == []
    assert [t.id for t in reopened.session_turns(session.session_id)] == [t.id for t in turns]
    assert len(report.repaired) == 1 and "torn01" in report.repaired[0]
    assert path.read_bytes().decode("utf-8").endswith("<!-- /huichat:msg -->\n")
    assert len(path.read_bytes()) < len(data)
    (backup,) = path.parent.glob(path.name + ".torn-*")
    assert backup.read_bytes().endswith("没".encode()[:2])
    assert any("torn01" in line for line in report.notices())


def test_reindex_keeps_a_session_whose_transcript_ends_torn(tmp_path: Path) -> None:
    kernel = open_kernel(tmp_path, reconcile=False)
    _, turns = _session(kernel, 3)
    kernel.close()
    path = _file(tmp_path, turns[0])
    path.write_bytes(path.read_bytes() + "\n## 2026-11-25 Wed 15:09:00\n\n[id:abcdef | prev: x | 记".encode()[:-1])
    report = open_kernel(tmp_path, reconcile=False).reindex()
    assert report.added == 3
    assert open_kernel(tmp_path, reconcile=False).count() == 3


@pytest.mark.parametrize("then_append", [False, True])
def test_a_transcript_torn_inside_its_last_turns_header_keeps_that_turns_indexed_copy(
    tmp_path: Path, then_append: bool
) -> None:
    kernel = open_kernel(tmp_path, reconcile=False)
    session, _ = _session(kernel, 2)
    messages = (Message("user", "最后一轮"), Message("assistant", "回复"))
    last = kernel.append_turn(session, TurnDraft(messages, NOW + timedelta(minutes=5), topic="记忆测试"))
    kernel.close()
    path = _file(tmp_path, last)
    data = path.read_bytes()
    header = data.index(f'"id": "{last.id}"'.encode())
    path.write_bytes(data[: data.index("忆".encode(), header) + 1])  # inside a character of its marker
    reopened = open_kernel(tmp_path, reconcile=False)
    report = reopened.reconcile()
    assert report.removed == 0 and any(last.id in line for line in report.problems)
    if then_append:
        _say(reopened, session, 9)  # written after the torn part, which now lies inside the file
        report = reopened.reconcile(full=True)
        assert report.removed == 0 and any(last.id in line for line in report.problems)
    kept = reopened.recall_by_id(last.id).turn
    assert kept is not None and kept.messages == messages


def test_a_transcript_write_that_fails_leaves_nothing_half_written(tmp_path: Path) -> None:
    kernel = open_kernel(tmp_path, reconcile=False)
    session, turns = _session(kernel, 2)
    path = _file(tmp_path, turns[0])
    before = path.read_bytes()
    writes = 0

    def disk_full(fd: int, data: memoryview) -> int:
        nonlocal writes
        writes += 1
        if writes == 1:
            return os.write(fd, data[:100])
        raise OSError(errno.ENOSPC, "No space left on device")

    kernel.transcripts._write = disk_full
    with pytest.raises(KernelError, match="No space left"):
        _say(kernel, session, 2)
    assert path.read_bytes() == before
    kernel.transcripts._write = os.write
    third = _say(kernel, session, 3)
    assert [t.id for t in kernel.session_turns(session.session_id)] == [*(t.id for t in turns), third.id]


# ------------------------------------------------------------------ 4: a lost index


@pytest.mark.parametrize("how", ["deleted", "emptied"])
def test_a_lost_index_is_rebuilt_from_the_transcripts_at_open(tmp_path: Path, how: str) -> None:
    kernel = open_kernel(tmp_path, reconcile=False)
    _session(kernel, 5)
    kernel.close()
    if how == "deleted":
        import shutil

        shutil.rmtree(tmp_path / "index.lancedb")
    else:
        kernel.store.delete(kernel.store.all_ids())
    reopened = open_kernel(tmp_path, reconcile=False)
    assert reopened.index_lost()
    seen: list[tuple[int, int]] = []
    report = reopened.reconcile(lambda done, total: seen.append((done, total)))
    assert report.rebuilt and report.added == 5
    assert reopened.count() == 5 and not reopened.index_lost()
    assert seen[-1] == (5, 5)
    assert reopened.search(SearchRequest("message 3", NOW)).hits


# ------------------------------------------------------------------ 5: a damaged index


def _damage(root: Path) -> None:
    files = sorted((root / "index.lancedb" / "turns.lance" / "data").glob("*.lance"), key=lambda p: p.stat().st_size)
    for path in files:
        with path.open("r+b") as handle:
            handle.truncate(path.stat().st_size // 2)


def test_a_damaged_index_is_explained_in_one_line_and_rebuilt_without_being_read(tmp_path: Path) -> None:
    kernel = open_kernel(tmp_path, reconcile=False)
    _, turns = _session(kernel, 4)
    kernel.search(SearchRequest("message 1", NOW))
    kernel.maintain(force=True)
    kernel.close()
    _damage(tmp_path)
    damaged = open_kernel(tmp_path, reconcile=False)
    assert [s.turns for s in damaged.sessions()] == [4]  # read from the transcripts, not the index
    for action in (
        lambda: damaged.recall_by_id(turns[0].id),
        lambda: damaged.search(SearchRequest("message", NOW)),
        damaged.store.check,
    ):
        with pytest.raises(KernelError) as caught:
            action()
        assert "huichat reindex" in str(caught.value) and "\n" not in str(caught.value)
    report = damaged.reindex()
    assert report.added == 4
    assert damaged.store.check() == 4
    assert damaged.recall_by_id(turns[0].id).turn is not None


def _flip_data_pages(root: Path) -> None:
    """Flip every 97th byte of the first half of each data file: its pages, not its footer."""
    for path in (root / "index.lancedb" / "turns.lance" / "data").glob("*.lance"):
        data = bytearray(path.read_bytes())
        for i in range(0, len(data) // 2, 97):
            data[i] ^= 0xFF
        path.write_bytes(bytes(data))


def test_flipped_bytes_in_the_index_pages_are_one_line_and_reindex_rebuilds(tmp_path: Path) -> None:
    kernel = open_kernel(tmp_path, reconcile=False)
    for day in range(3):
        session = kernel.new_session(NOW - timedelta(days=day))
        drafts = [
            TurnDraft(
                (Message("user", f"第{day}天 message {i} 关于记忆 " * 20),), NOW - timedelta(days=day, minutes=-i)
            )
            for i in range(100)
        ]
        kernel.append_turns(session, drafts)
    kernel.close()
    _flip_data_pages(tmp_path)
    damaged = open_kernel(tmp_path, reconcile=False)
    with pytest.raises(KernelError, match=r"cannot be read \(.*\); run `huichat reindex`"):
        damaged.search(SearchRequest("关于记忆 message 3", NOW))
    report = open_kernel(tmp_path, reconcile=False).reindex(embed=False)
    assert report.added == 300 and open_kernel(tmp_path, reconcile=False).count() == 300


def test_reindex_opens_a_table_too_damaged_to_open(tmp_path: Path) -> None:
    kernel = open_kernel(tmp_path, reconcile=False)
    _session(kernel, 2)
    kernel.close()
    for manifest in (tmp_path / "index.lancedb" / "turns.lance" / "_versions").iterdir():
        manifest.write_bytes(b"garbage")
    with pytest.raises(KernelError, match="huichat reindex"):
        open_kernel(tmp_path, reconcile=False)
    embedder = HashEmbedder(64)
    store = TurnStore(str(tmp_path / "index.lancedb"), embedder.dim, embedder.name, EVENTS, for_rebuild=True)
    rebuilt = MemoryKernel(store, embedder, tmp_path / "sessions", RetrieverConfig(), ZONE)
    assert rebuilt.health.state is IndexState.BEHIND and "could not be opened" in rebuilt.health.reason
    report = rebuilt.reindex()
    assert report.added == 2 and rebuilt.health.state is IndexState.OK
    assert report.access_lost  # no version of the damaged table reads: what only it knew is lost
    (aside,) = (tmp_path / "index.lancedb").glob("turns-*-set-aside.lance")  # moved aside, not deleted
    assert report.set_aside == str(aside)


# ------------------------------------------------------------------ 7: one id, one row


def test_duplicate_rows_of_one_turn_are_removed_at_reconcile(tmp_path: Path) -> None:
    kernel = open_kernel(tmp_path, reconcile=False)
    _, turns = _session(kernel, 3)
    # another process indexed the same turn while this one was between transcript and index
    kernel.indexer.write(session_entries(turns[1:2]))
    assert kernel.count() == 4
    report = kernel.reconcile()
    assert report.duplicates == 1 and kernel.count() == 3
    assert sorted(kernel.store.all_ids()) == sorted(t.id for t in turns)


def test_a_failed_index_write_keeps_the_turn_and_indexes_it_later(tmp_path: Path) -> None:
    kernel = open_kernel(tmp_path, reconcile=False)
    session, _ = _session(kernel, 1)

    def full(*_args: object) -> None:
        raise KernelError("cannot write to the memory index: No space left on device")

    kernel.store.add = full  # type: ignore[method-assign]  # the disk filled between transcript and index
    second = _say(kernel, session, 1)
    assert kernel.health.state is IndexState.BEHIND and "No space left" in kernel.health.reason
    assert kernel.needs_maintenance()
    del kernel.store.add
    kernel.maintain()
    assert kernel.health.state is IndexState.OK and kernel.count() == 2
    assert kernel.recall_by_id(second.id).turn is not None


# ------------------------------------------------------------------ 8: hand edits


def test_an_unreadable_neighbour_never_removes_an_indexed_turn(tmp_path: Path) -> None:
    kernel = open_kernel(tmp_path, reconcile=False)
    _, turns = _session(kernel, 3)
    path = _file(tmp_path, turns[0])
    text = path.read_text(encoding="utf-8")
    path.write_text(text.replace(f'{{"id": "{turns[1].id}"', f'{{"id": "{turns[1].id}" broken', 1), encoding="utf-8")
    report = kernel.reconcile()
    assert report.removed == 0 and kernel.count() == 3
    assert any("cannot be read" in line for line in report.problems)


def test_a_lost_end_marker_of_an_indexed_turn_is_closed_not_cut(tmp_path: Path) -> None:
    kernel = open_kernel(tmp_path, reconcile=False)
    _, turns = _session(kernel, 3)
    path = _file(tmp_path, turns[0])
    text = path.read_text(encoding="utf-8")
    path.write_text(text[: text.rstrip("\n").rindex("\n") + 1], encoding="utf-8")
    report = kernel.reconcile()
    assert report.removed == 0 and kernel.count() == 3
    assert report.repaired and "closed" in report.repaired[0]
    assert path.read_text(encoding="utf-8") == text
    assert not list(path.parent.glob("*.torn-*"))


# ------------------------------------------------------------------ 3 and 9: searches and input


class _StuckEmbedder(HashEmbedder):
    """Query embedding waits until released: a search that does not come back."""

    def __init__(self) -> None:
        super().__init__(64)
        self.release = threading.Event()

    def embed_query(self, text: str) -> npt.NDArray[np.float32]:
        self.release.wait(30)
        return super().embed_query(text)


def test_a_search_past_its_deadline_is_given_up_with_a_clear_error(tmp_path: Path) -> None:
    embedder = _StuckEmbedder()
    embedder.release.set()
    kernel = open_kernel(tmp_path, embedder, RetrieverConfig(search_timeout_seconds=0.2, min_similarity=0.0))
    kernel.prepare_search()  # the calibration's reference is measured before the model gets stuck
    embedder.release.clear()
    _session(kernel, 2)
    with pytest.raises(KernelError, match=r"took longer than 0\.2 s"):
        kernel.search(SearchRequest("message", NOW))
    embedder.release.set()
    assert kernel.searches_over_deadline == 1
    kernel.config = kernel.config.model_copy(update={"search_timeout_seconds": 60.0})
    assert kernel.search(SearchRequest("message", NOW)).hits


@pytest.mark.parametrize("top_k", [-1, 0, 101, 10**9])
def test_top_k_outside_its_range_is_refused(kernel: MemoryKernel, top_k: int) -> None:
    _session(kernel, 2)
    with pytest.raises(KernelError, match="between 1 and 100"):
        kernel.search(SearchRequest("message", NOW, top_k))


def test_a_query_over_its_limit_is_refused_before_any_work(tmp_path: Path) -> None:
    embedder = _StuckEmbedder()  # never answers: the refusal must come before the embedder is asked
    kernel = open_kernel(tmp_path, embedder, RetrieverConfig(max_query_chars=100, min_similarity=0.0))
    with pytest.raises(TooLong, match="the query is 200000 characters long; at most 100 are searched"):
        kernel.search(SearchRequest("记" * 200_000, NOW))


def test_a_data_folder_that_cannot_be_written_gives_one_line(tmp_path: Path) -> None:
    kernel = open_kernel(tmp_path, reconcile=False)
    (tmp_path / "not-a-folder").write_text("x")  # fails as a read-only folder does, for any user
    with pytest.raises(KernelError, match="cannot use the data folder"):
        kernel.acquire_process_lock(tmp_path / "not-a-folder" / ".huichat.lock")


def test_a_lone_surrogate_is_stored_as_a_replacement_character(kernel: MemoryKernel) -> None:
    session = kernel.new_session(NOW)
    turn = _say(kernel, session, 0, "half of a pair: \ud83d and the rest")
    assert turn.messages[0].text == "half of a pair: \ufffd and the rest"
    assert kernel.recall_by_id(turn.id).turn is not None


# ------------------------------------------------------------------ 11: index growth


def test_old_versions_are_cleaned_up_after_the_retention_window(tmp_path: Path) -> None:
    embedder = HashEmbedder(64)
    store = TurnStore(
        str(tmp_path / "index.lancedb"), embedder.dim, embedder.name, EVENTS, keep_versions=timedelta(milliseconds=1)
    )
    kernel = MemoryKernel(store, embedder, tmp_path / "sessions", RetrieverConfig(), ZONE)
    _session(kernel, 40)
    versions = tmp_path / "index.lancedb" / "turns.lance" / "_versions"
    assert len(list(versions.iterdir())) > 40
    kernel.maintain(force=True)
    assert len(list(versions.iterdir())) <= 2
    assert kernel.count() == 40


def test_a_manifest_written_for_another_index_is_not_believed(tmp_path: Path) -> None:
    kernel = open_kernel(tmp_path, reconcile=False)
    _, turns = _session(kernel, 3)
    kernel.close()
    manifest = (tmp_path / "index-manifest.json").read_bytes()
    # another process started a rebuild and was killed after one turn; a third one, which
    # still had the old manifest in memory, wrote it back when it closed
    kernel.store.reset()
    kernel.indexer.write(session_entries(turns[:1]))
    (tmp_path / "index-manifest.json").write_bytes(manifest)
    reopened = open_kernel(tmp_path, reconcile=False)
    assert reopened.index_lost()
    report = reopened.reconcile()
    assert report.rebuilt and reopened.count() == 3
    assert report.notices() == ["the memory index lacked 2 turns: added them from the transcripts"]


def test_a_manifest_an_older_process_wrote_after_a_reindex_elsewhere_raises_no_false_alarm(tmp_path: Path) -> None:
    # huichat serve held memory open while `huichat reindex` ran; serve's manifest, still about
    # the old index, was written when it stopped: the next command said "the memory index was
    # missing or empty: rebuilt 0 turns" of an index that held every turn
    server = open_kernel(tmp_path)
    _session(server, 3)
    reindexer = open_kernel(tmp_path)
    reindexer.reindex()
    reindexer.close()
    server.close()
    reopened = open_kernel(tmp_path)
    assert reopened.last_report is not None and reopened.last_report.notices() == []
    assert reopened.count() == 3
    reopened.close()


def test_a_bad_turn_id_is_quoted_without_its_line_breaks(kernel: MemoryKernel) -> None:
    found = kernel.recall_by_id("ab\x0bcd\nef\u2028")
    assert not found.ok and len(found.error.splitlines()) == 1 and "not a turn id" in found.error


def test_a_transcript_folder_that_cannot_be_made_refuses_the_turn_in_one_line(tmp_path: Path) -> None:
    kernel = open_kernel(tmp_path, reconcile=False)
    (tmp_path / "sessions").write_text("a file where the folder should be")
    with pytest.raises(KernelError, match="cannot write transcript"):
        _say(kernel, kernel.new_session(NOW), 0)


def test_a_session_id_changed_by_hand_moves_every_turn_of_the_file(tmp_path: Path) -> None:
    # found by the transcript-edit fuzz: the turns re-indexed for another reason (an edited
    # neighbour) took the header's new id and the rest kept the old one, splitting the session
    kernel = open_kernel(tmp_path, reconcile=False)
    session, turns = _session(kernel, 4)
    path = _file(tmp_path, turns[0])
    text = path.read_text(encoding="utf-8")
    text = text.replace(f'"session_id": "{session.session_id}"', '"session_id": "renamed"', 1)
    path.write_text(text.replace("message 1 about", "message one about", 1), encoding="utf-8")
    report = kernel.reconcile()
    assert report.removed == 0 and kernel.count() == 4
    assert [t.id for t in kernel.session_turns("renamed")] == [t.id for t in turns]
    assert kernel.session_turns(session.session_id) == []


def test_the_sessions_list_names_a_session_whose_header_id_was_damaged_by_its_file_name(tmp_path: Path) -> None:
    kernel = open_kernel(tmp_path, reconcile=False)
    session, turns = _session(kernel, 2)
    path = _file(tmp_path, turns[0])
    data = path.read_bytes()
    path.write_bytes(data.replace(f'"session_id": "{session.session_id}'.encode(), b'"session_id": "\xe6\xff', 1))
    assert [s.session_id for s in kernel.sessions()] == [session.session_id]
    kernel.reconcile()
    assert [t.id for t in kernel.session_turns(session.session_id)] == [t.id for t in turns]


def test_a_mangled_turn_id_never_reaches_the_index(tmp_path: Path) -> None:
    kernel = open_kernel(tmp_path, reconcile=False)
    _, turns = _session(kernel, 3)
    path = _file(tmp_path, turns[0])
    text = path.read_text(encoding="utf-8")
    path.write_text(text.replace(f'{{"id": "{turns[1].id}"', '{"id": "x\ufffdyz12"', 1), encoding="utf-8")
    report = kernel.reconcile()
    assert report.added == 0 and report.removed == 0
    assert kernel.store.all_ids() == {t.id for t in turns}

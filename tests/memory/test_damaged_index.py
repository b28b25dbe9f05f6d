"""A damaged index (issue 26 item 2): read only in a child process until it is known to read,
moved aside (never deleted) by a rebuild, which keeps what only the index knew."""

from __future__ import annotations

import subprocess
import sys
from datetime import timedelta
from pathlib import Path

import pytest

from huichat.memory import index_probe
from huichat.memory.errors import IndexUnavailable
from huichat.memory.kernel import MemoryKernel, SessionHandle
from huichat.memory.turns import Message, Turn, TurnDraft
from tests.conftest import NOW, open_kernel


def _say(kernel: MemoryKernel, session: SessionHandle, i: int) -> Turn:
    messages = (Message("user", f"message {i} about 记忆"), Message("assistant", f"reply {i}"))
    return kernel.append_turn(session, TurnDraft(messages, NOW + timedelta(minutes=i), topic="记忆测试"))


def _tear_header(root: Path, turn: Turn) -> None:
    """Cut the transcript inside a character of ``turn``'s marker (its part can no longer be read)."""
    path = root / "sessions" / turn.session_file
    data = path.read_bytes()
    header = data.index(f'"id": "{turn.id}"'.encode())
    path.write_bytes(data[: data.index("忆".encode(), header) + 1])


def _flip(files: list[Path]) -> None:
    """The probe's damage: every 97th byte flipped."""
    for path in files:
        data = bytearray(path.read_bytes())
        for i in range(0, len(data), 97):
            data[i] ^= 0xFF
        path.write_bytes(bytes(data))


def _data_files(root: Path) -> list[Path]:
    return sorted((root / "index.lancedb" / "turns.lance" / "data").glob("*.lance"))


def _a_torn_last_turn(root: Path) -> tuple[list[Turn], Turn]:
    kernel = open_kernel(root, reconcile=False)
    session = kernel.new_session(NOW)
    turns = [_say(kernel, session, i) for i in range(3)]
    kernel.note_access([turns[2].id], NOW + timedelta(hours=1))
    kernel.close()
    _tear_header(root, turns[2])
    return turns[:2], turns[2]


def test_reindex_moves_the_old_table_aside_and_keeps_the_indexed_copy_of_a_turn_its_transcript_lost(
    tmp_path: Path,
) -> None:
    readable, torn = _a_torn_last_turn(tmp_path)
    kernel = open_kernel(tmp_path, reconcile=False)
    report = kernel.reindex()
    assert report.added == 2 and report.salvaged == 1
    kept = kernel.recall_by_id(torn.id).turn
    assert kept is not None and kept.messages == torn.messages and kept.access_count == 1
    assert kernel.count() == 3 and {t.id for t in readable} < kernel.store.all_ids()
    (aside,) = (tmp_path / "index.lancedb").glob("turns-*-set-aside.lance")
    assert report.set_aside == str(aside)
    assert any(str(aside) in line for line in report.notices())
    assert any(p.name.endswith(".lance") for p in (aside / "data").iterdir())  # moved, not deleted
    kernel.close()


def test_a_damaged_newest_version_gives_way_to_the_newest_one_that_reads(tmp_path: Path) -> None:
    readable, torn = _a_torn_last_turn(tmp_path)
    before = set(_data_files(tmp_path))
    kernel = open_kernel(tmp_path, reconcile=False)
    later = _say(kernel, kernel.new_session(NOW + timedelta(days=1)), 9)
    kernel.close()
    _flip([p for p in _data_files(tmp_path) if p not in before])  # only the newest write's data
    kernel = open_kernel(tmp_path, reconcile=False)
    report = kernel.reindex()
    assert report.salvaged == 1
    assert kernel.recall_by_id(torn.id).turn is not None
    assert kernel.store.all_ids() == {*(t.id for t in readable), torn.id, later.id}
    kernel.close()


def test_reindex_of_an_index_damaged_everywhere_rebuilds_the_transcripts_and_says_what_is_lost(
    tmp_path: Path,
) -> None:
    readable, torn = _a_torn_last_turn(tmp_path)
    _flip(_data_files(tmp_path))
    kernel = open_kernel(tmp_path, reconcile=False)
    report = kernel.reindex()
    assert kernel.store.all_ids() == {t.id for t in readable}
    assert report.salvaged == 0 and report.access_lost
    assert any(torn.id in line for line in report.notices())  # its part kept in a .torn file, and said
    kernel.close()


def test_the_probe_reads_a_sound_index_and_names_a_damaged_one_in_one_line(tmp_path: Path) -> None:
    kernel = open_kernel(tmp_path, reconcile=False)
    session = kernel.new_session(NOW)
    for i in range(3):
        _say(kernel, session, i)
    kernel.close()
    uri = str(tmp_path / "index.lancedb")
    assert index_probe.probe(uri) is None
    _flip(_data_files(tmp_path))
    reason = index_probe.probe(uri)
    assert reason is not None and "\n" not in reason


def test_an_aborted_probe_is_a_damaged_index(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    open_kernel(tmp_path, reconcile=False).close()
    # the vendor seam: the child's read ends the way LanceDB's "memory allocation … failed" does
    monkeypatch.setenv(index_probe.ABORT_FOR_TESTS, "1")
    reason = index_probe.probe(str(tmp_path / "index.lancedb"))
    assert reason is not None and "SIGABRT" in reason and "\n" not in reason


def test_a_reader_that_died_makes_the_next_open_probe_first(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    open_kernel(tmp_path, reconcile=False).close()
    assert index_probe.readers_that_died(tmp_path) == []  # a clean open leaves no evidence behind
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    marks = tmp_path / index_probe.READERS
    marks.mkdir(exist_ok=True)
    (marks / dead.stdout.strip()).touch()  # what a command killed mid-read leaves
    monkeypatch.setenv(index_probe.ABORT_FOR_TESTS, "1")
    with pytest.raises(IndexUnavailable, match=r"damaged.*huichat reindex") as raised:
        open_kernel(tmp_path, reconcile=False)
    assert "\n" not in str(raised.value)
    monkeypatch.delenv(index_probe.ABORT_FOR_TESTS)
    open_kernel(tmp_path, reconcile=False).close()  # it reads: the evidence is cleared
    assert index_probe.readers_that_died(tmp_path) == []
    assert list(marks.iterdir()) == []

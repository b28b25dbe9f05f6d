"""Several processes on one memory (issue 16, item 7): commit conflicts are retried and never
surfaced, and one turn id is one index row, always."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

from huichat.memory.results import SearchRequest
from tests.conftest import NOW, open_kernel

ROOT = Path(__file__).resolve().parents[2]


def _writer(root: Path, count: int, tag: str, *extra: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "tests.memory.writer_process", str(root), str(count), tag, *extra],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def _wait_for(path: Path, writer: subprocess.Popen[str]) -> None:
    deadline = time.monotonic() + 120
    while not path.exists():
        assert writer.poll() is None, writer.communicate()
        assert time.monotonic() < deadline, "the writer never reached its index write"
        time.sleep(0.05)


def test_a_process_that_opens_between_another_s_transcript_and_index_write_adds_no_duplicate(tmp_path: Path) -> None:
    open_kernel(tmp_path).close()
    signals = tmp_path / "signals"
    signals.mkdir()
    writer = _writer(tmp_path, 1, "p", "--pause-before-index", str(signals))
    _wait_for(signals / "ready", writer)
    opened = open_kernel(tmp_path)
    report = opened.reconcile()  # the writer has fsynced its transcript but not indexed the turn yet
    (signals / "go").touch()
    _, err = writer.communicate(timeout=120)
    assert writer.returncode == 0, err
    assert report.added == 0
    assert opened.count() == 1 and len(opened.store.all_ids()) == 1
    assert opened.reconcile().added == 0 and opened.count() == 1


def test_three_writers_with_maintenance_and_a_reader_lose_and_duplicate_nothing(tmp_path: Path) -> None:
    open_kernel(tmp_path).close()
    tags = ("a", "b", "c")
    writers = [_writer(tmp_path, 12, tag, "--maintain-every", "3", "--search") for tag in tags]
    reader = open_kernel(tmp_path)
    while any(w.poll() is None for w in writers):
        reader.search(SearchRequest("message 记忆", NOW))
        reader.flush_access()
        time.sleep(0.05)
    results = [w.communicate() for w in writers]
    assert [w.returncode for w in writers] == [0, 0, 0], [err for _, err in results]
    assert all("Traceback" not in err for _, err in results)
    reader.maintain(force=True)
    assert reader.count() == 36
    for tag in tags:
        turns = reader.session_turns(f"proc-{tag}")
        assert [t.turn_index for t in turns] == list(range(12))
        assert [t.prev_id for t in turns[1:]] == [t.id for t in turns[:-1]]
    assert reader.reconcile(full=True).added == 0 and reader.count() == 36

"""Live sync: a real watchdog observer on the transcripts folder, a real second process."""

from __future__ import annotations

import queue
import subprocess
import sys
from datetime import timedelta
from pathlib import Path

import pytest

from huichat.memory.kernel import MemoryKernel, ReconcileReport
from huichat.memory.results import SearchRequest
from huichat.memory.watch import TranscriptWatcher, is_transcript
from tests.conftest import NOW
from tests.memory.test_lifecycle import lifecycle_kernel, say

ROOT = Path(__file__).resolve().parents[2]


def _watching(
    kernel: MemoryKernel, root: Path
) -> tuple[TranscriptWatcher, queue.Queue[tuple[set[str], ReconcileReport]]]:
    reports: queue.Queue[tuple[set[str], ReconcileReport]] = queue.Queue()
    watcher = TranscriptWatcher(root / "sessions", lambda changed: reports.put((changed, kernel.reconcile())), 0.2)
    watcher.start()
    return watcher, reports


def test_only_transcripts_and_archives_count() -> None:
    assert is_transcript("2026-W48/2026-11-25/chat_x.md")
    assert is_transcript("archive/2026-09.tar.zst")
    assert not is_transcript("2026-W48/2026-11-25/chat_x.md.tmp")
    assert not is_transcript("notes.md")


def test_a_transcript_edited_by_hand_is_reconciled_keeping_access_and_importance(tmp_path: Path) -> None:
    kernel = lifecycle_kernel(tmp_path)
    turn_id = say(kernel, "VPN keepalive 设成 25 秒", NOW - timedelta(days=1))
    kernel.note_access([turn_id] * 3, NOW)
    kernel.flush_access()
    kernel.update_turns([turn_id], {"tier": ["long_term"]})
    before = kernel.recall_by_id(turn_id).turn
    assert before is not None
    watcher, reports = _watching(kernel, tmp_path)
    try:
        path = tmp_path / "sessions" / before.session_file
        path.write_text(path.read_text(encoding="utf-8").replace("25 秒", "30 秒"), encoding="utf-8")
        changed, report = reports.get(timeout=30)
    finally:
        watcher.stop()
    assert changed == {before.session_file}
    assert report.changed_ids == {turn_id}
    after = kernel.recall_by_id(turn_id).turn
    assert after is not None and "30 秒" in after.text
    assert (after.access_count, after.tier, after.importance) == (3, "long_term", before.importance)
    kernel.close()


@pytest.mark.slow
def test_turns_written_by_another_process_are_found_while_this_one_runs(tmp_path: Path) -> None:
    kernel = lifecycle_kernel(tmp_path)
    say(kernel, "first", NOW)
    watcher, reports = _watching(kernel, tmp_path)
    try:
        # the other process writes its transcript and dies before it indexes anything
        done = subprocess.run(
            [sys.executable, "-m", "tests.memory.writer_process", str(tmp_path), "1", "other", "--die-before-index"],
            cwd=ROOT,
            capture_output=True,
            timeout=120,
            check=False,
        )
        assert done.returncode == -9
        _, report = reports.get(timeout=30)
    finally:
        watcher.stop()
    assert report.added == 1
    hits = kernel.search(SearchRequest("other message 0", NOW, record_access=False)).hits
    assert hits and "other message 0" in hits[0].turn.text
    kernel.close()

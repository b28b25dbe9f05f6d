"""Monthly archives: packed transcripts stay recallable and are read back by reindex."""

from __future__ import annotations

from datetime import date, timedelta
from pathlib import Path

from huichat.memory.archive import ARCHIVE_DIR, pack_months, read_archive
from huichat.memory.turns import Message, TurnDraft
from tests.conftest import NOW, open_kernel


def test_old_months_are_packed_and_stay_recallable(tmp_path: Path) -> None:
    kernel = open_kernel(tmp_path)
    old = kernel.new_session(NOW - timedelta(days=70))
    old_turns = [
        kernel.append_turn(
            old,
            TurnDraft(
                (Message("user", f"九月的事 {i}"), Message("assistant", "好")), NOW - timedelta(days=70, minutes=-i)
            ),
        )
        for i in range(3)
    ]
    recent = kernel.new_session(NOW)
    kernel.append_turn(recent, TurnDraft((Message("user", "this month"),), NOW))
    sessions = tmp_path / "sessions"
    packed = pack_months(sessions, date(2026, 11, 1), level=5)
    assert packed == ["2026-09"]
    archive = sessions / ARCHIVE_DIR / "2026-09.tar.zst"
    assert archive.exists() and not (sessions / old.session_file).exists()
    assert (sessions / recent.session_file).exists()
    members = read_archive(archive)
    assert list(members) == [old.session_file] and "九月的事 2" in members[old.session_file]
    kernel.reconcile()
    assert kernel.count() == 4 and kernel.recall_by_id(old_turns[1].id).ok
    # continuing the archived session, then rebuilding everything from transcripts + archives
    resumed = kernel.resume_session(old.session_id)
    later = kernel.append_turn(resumed, TurnDraft((Message("user", "接着九月的话题"),), NOW))
    report = kernel.reindex()
    assert report.added == 5
    chain = kernel.session_turns(old.session_id)
    assert [t.id for t in chain] == [t.id for t in old_turns] + [later.id]
    assert chain[-1].prev_id == old_turns[-1].id and chain[-2].next_id == later.id
    assert pack_months(sessions, date(2026, 11, 1)) == ["2026-09"]  # the continuation joins its month
    assert "接着九月的话题" in read_archive(archive)[old.session_file]
    assert kernel.reindex().added == 5


def test_a_damaged_archive_is_reported_not_fatal(tmp_path: Path) -> None:
    kernel = open_kernel(tmp_path)
    (tmp_path / "sessions" / ARCHIVE_DIR).mkdir(parents=True)
    (tmp_path / "sessions" / ARCHIVE_DIR / "2026-01.tar.zst").write_bytes(b"not zstd")
    report = kernel.reconcile()
    assert report.unreadable == [f"{ARCHIVE_DIR}/2026-01.tar.zst"]


def test_a_torn_transcript_packed_into_an_archive_keeps_its_complete_turns(tmp_path: Path) -> None:
    kernel = open_kernel(tmp_path)
    old = kernel.new_session(NOW - timedelta(days=70))
    for i in range(2):
        kernel.append_turn(old, TurnDraft((Message("user", f"九月的事 {i}"),), NOW - timedelta(days=70, minutes=-i)))
    path = tmp_path / "sessions" / old.session_file
    path.write_bytes(path.read_bytes() + b'\n## 2026-09-16\n\n<!-- huichat:turn {"id": "torn01"' + "记".encode()[:2])
    pack_months(tmp_path / "sessions", date(2026, 11, 1))
    report = kernel.reindex()
    assert report.added == 2 and report.unreadable == []

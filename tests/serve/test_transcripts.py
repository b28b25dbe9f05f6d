"""Reading a transcript by relative path never leaves the user's transcript folder."""

from __future__ import annotations

from pathlib import Path

import pytest

from huichat.app.serve.errors import ApiError
from huichat.app.serve.transcripts import read_transcript
from huichat.memory.archive import pack_months

REL = "2026-W48/2026-11-25/chat_20261125-150000-abcd.md"


@pytest.fixture
def root(tmp_path: Path) -> Path:
    sessions = tmp_path / "alice" / "sessions"
    (sessions / REL).parent.mkdir(parents=True)
    (sessions / REL).write_text("# alice's session\n", encoding="utf-8")
    (tmp_path / "bob.md").write_text("bob's secret", encoding="utf-8")
    return sessions


def test_a_transcript_is_read_by_its_relative_path(root: Path) -> None:
    assert read_transcript(root, REL) == "# alice's session\n"


@pytest.mark.parametrize(
    "path",
    [
        "../../bob.md",
        "/etc/passwd",
        "2026-W48/../../../bob.md",
        "2026-W48/2026-11-25/../../../../bob.md",
        "2026-W48\\2026-11-25\\chat_x.md",
        "%2e%2e/bob.md",
        "2026-W48/2026-11-25/chat_..md/..",
        "",
    ],
)
def test_paths_outside_the_layout_are_refused(root: Path, path: str) -> None:
    with pytest.raises(ApiError) as refused:
        read_transcript(root, path)
    assert refused.value.status_code == 400


def test_symlinks_are_not_followed(root: Path, tmp_path: Path) -> None:
    day = (root / REL).parent
    (day / "chat_link.md").symlink_to(tmp_path / "bob.md")
    (root / "2026-W01").symlink_to(tmp_path, target_is_directory=True)
    for path in ("2026-W48/2026-11-25/chat_link.md", "2026-W01/2026-01-01/chat_x.md"):
        with pytest.raises(ApiError) as refused:
            read_transcript(root, path)
        assert refused.value.status_code == 404


def test_a_packed_transcript_is_read_from_its_archive(root: Path) -> None:
    from datetime import date

    pack_months(root, date(2026, 12, 1))
    assert not (root / REL).exists()
    assert read_transcript(root, REL) == "# alice's session\n"

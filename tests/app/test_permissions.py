"""Memory is private to its owner: folders 0700, files 0600, and doctor names a folder others can read."""

from __future__ import annotations

import os
import stat
from pathlib import Path

from tests.app.test_cli import _config, _huichat
from tests.memory.imports.helpers import FIXTURES


def _modes(root: Path) -> dict[str, int]:
    found = {str(root): stat.S_IMODE(root.stat().st_mode)}
    for path in root.rglob("*"):
        if not path.is_symlink():
            found[str(path.relative_to(root))] = stat.S_IMODE(path.stat().st_mode)
    return found


def test_data_exports_and_logs_are_created_private_whatever_the_umask(tmp_path: Path) -> None:
    config = _config(tmp_path)
    before = os.umask(0o022)  # the usual default, inherited by the commands
    try:
        assert _huichat(config, "import", str(FIXTURES / "chatgpt" / "conversations.json")).returncode == 0
        assert _huichat(config, "lifecycle", "run").returncode == 0
        assert _huichat(config, "recall", "Kinkaku-ji").returncode == 0
        done = _huichat(config, "export", "--format", "jsonl", "--out", str(tmp_path / "out" / "all.jsonl"))
        assert done.returncode == 0, done.stderr
    finally:
        os.umask(before)
    data = _modes(tmp_path / "data")
    assert any(name.endswith(".md") for name in data) and any(".lance" in name for name in data)
    assert any(name.endswith("lifecycle.jsonl") for name in data)
    wider = {
        name: oct(mode)
        for name, mode in data.items()
        if mode & 0o077 or mode & 0o700 != (0o700 if Path(tmp_path / "data" / name).is_dir() else 0o600)
    }
    assert not wider, wider
    exported = _modes(tmp_path / "out")
    assert {oct(mode) for mode in exported.values()} == {"0o700", "0o600"}


def test_doctor_names_a_data_folder_other_users_can_read(tmp_path: Path) -> None:
    config = _config(tmp_path)
    (tmp_path / "data" / "sessions" / "2026-W48").mkdir(parents=True, mode=0o755)
    for folder in (tmp_path / "data", tmp_path / "data" / "sessions", tmp_path / "data" / "sessions" / "2026-W48"):
        folder.chmod(0o755)
    wide = {"COLUMNS": "400"}  # one row a line
    done = _huichat(config, "doctor", env=wide)
    (row,) = [line for line in done.stdout.splitlines() if "private" in line]
    assert "FAIL" in row and "other users can read 3 folders" in row, row
    assert f"{tmp_path / 'data'} (0755)" in row and f"chmod -R go-rwx {tmp_path / 'data'}" in row
    (tmp_path / "data").chmod(0o700)
    (tmp_path / "data" / "sessions").chmod(0o700)
    (tmp_path / "data" / "sessions" / "2026-W48").chmod(0o700)
    (row,) = [line for line in _huichat(config, "doctor", env=wide).stdout.splitlines() if "private" in line]
    assert "ok" in row and "other users can read" not in row

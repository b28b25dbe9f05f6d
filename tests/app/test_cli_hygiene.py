"""Bad input and a broken world give one line and an exit status, never a traceback (issue 16,
items 5 and 9): top_k out of range, a damaged index, a data folder that cannot be written,
a full disk."""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.app.test_cli import _config, _huichat, store
from tests.memory.test_recovery import _damage

__all__ = ["store"]


def _one_line(done: subprocess.CompletedProcess[str], *needles: str) -> None:
    assert done.returncode == 1, (done.stdout, done.stderr)
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("huichat: error: "), done.stderr
    for needle in needles:
        assert needle in lines[0]


@pytest.mark.parametrize("top_k", ["-1", "0", "101", "1000000000"])
def test_top_k_outside_1_to_100_is_refused(store: tuple[Path, list[str]], top_k: str) -> None:
    config, _ = store
    _one_line(_huichat(config, "recall", "VPN", "--top-k", top_k), "--top-k must be between 1 and 100")


def test_a_damaged_index_is_one_line_for_every_command_and_doctor_sees_it(store: tuple[Path, list[str]]) -> None:
    config, ids = store
    _damage(config.parent / "data")
    for args in (("recall", "VPN"), ("show", ids[0], "--json")):
        _one_line(_huichat(config, *args), "cannot be read", "huichat reindex")
    # the transcripts are intact: what only they are needed for still works
    for args in (("sessions",), ("show", ids[0])):
        assert _huichat(config, *args).returncode == 0
    doctor = _huichat(config, "doctor")
    assert doctor.returncode == 1 and "Traceback" not in doctor.stderr
    row = next(line for line in doctor.stdout.splitlines() if "memory index" in line)
    assert "FAIL" in row
    rebuilt = _huichat(config, "reindex")
    assert rebuilt.returncode == 0, rebuilt.stderr
    assert "reindexed 2 turns" in rebuilt.stdout
    assert _huichat(config, "show", ids[0]).returncode == 0


def test_a_data_folder_that_cannot_be_made_is_one_line(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("not a folder")
    config = _config(tmp_path)
    config.write_text(config.read_text().replace(str(tmp_path / "data"), str(tmp_path / "file" / "data")))
    _one_line(_huichat(config, "recall", "VPN"))
    doctor = _huichat(config, "doctor")
    assert doctor.returncode == 1 and "Traceback" not in doctor.stdout + doctor.stderr
    assert "not writable" in doctor.stdout


@contextlib.contextmanager
def _mounted(target: Path, options: str) -> Iterator[None]:
    """A tmpfs at ``target`` (root only; skips elsewhere)."""
    target.mkdir(parents=True, exist_ok=True)
    if os.geteuid() != 0 or not shutil.which("mount"):
        pytest.skip("mounting a tmpfs needs root")
    made = subprocess.run(["mount", "-t", "tmpfs", "-o", options, "tmpfs", str(target)], capture_output=True)
    if made.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {made.stderr.decode().strip()}")
    try:
        yield
    finally:
        subprocess.run(["umount", "-l", str(target)], check=False)


def test_a_read_only_data_folder_is_one_line(tmp_path: Path) -> None:
    data = tmp_path / "data"
    with _mounted(data, "size=8m"):
        config = _config(tmp_path)
        assert _huichat(config, "recall", "VPN").returncode == 0  # an index and a lock file exist
        subprocess.run(["mount", "-o", "remount,ro", str(data)], check=True)
        _one_line(_huichat(config, "recall", "VPN"), "cannot use the data folder")
        doctor = _huichat(config, "doctor")
        assert doctor.returncode == 1 and "Traceback" not in doctor.stdout + doctor.stderr
        assert "not writable" in doctor.stdout


def test_a_full_disk_at_open_is_one_line(tmp_path: Path) -> None:
    data = tmp_path / "data"
    with _mounted(data, "size=2m"):
        config = _config(tmp_path)
        from huichat.app.config import load_config
        from huichat.app.wiring import runtime
        from huichat.memory.turns import Message, TurnDraft
        from tests.conftest import NOW

        kernel = runtime(load_config(config)).open_kernel()
        session = kernel.new_session(NOW)
        for i in range(3):
            kernel.append_turn(session, TurnDraft((Message("user", f"note {i}"),), NOW))
        kernel.close()
        shutil.rmtree(data / "index.lancedb")  # rebuilt at open: that needs room
        filler = data / "filler"
        with contextlib.suppress(OSError), filler.open("wb") as handle:
            while True:
                handle.write(b"\0" * 65536)
        done = _huichat(config, "recall", "note")
        _one_line(done)
        assert "Traceback" not in done.stderr
        filler.unlink()
        assert _huichat(config, "recall", "note").returncode == 0

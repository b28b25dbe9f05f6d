"""A damaged index as a user meets it (issue 26 item 2): one line, a non-zero exit, transcripts untouched."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from huichat.memory import index_probe
from tests.app.test_cli import _config, _huichat, store  # noqa: F401  (the fixture)

ABORT = {index_probe.ABORT_FOR_TESTS: "1"}
"""The vendor seam: the probe's child aborts where LanceDB does on the damage the issue found."""


def _transcripts(config: Path) -> dict[Path, bytes]:
    return {p: p.read_bytes() for p in (config.parent / "data" / "sessions").rglob("*") if p.is_file()}


def test_doctor_reads_the_index_in_a_child_and_an_abort_there_is_one_failed_row(
    store: tuple[Path, list[str]],  # noqa: F811
) -> None:
    config, _ = store
    before = _transcripts(config)
    done = _huichat(config, "doctor", env=ABORT)
    assert done.returncode == 1 and "Traceback" not in done.stderr
    (row,) = [line for line in done.stdout.splitlines() if "memory index" in line]
    assert "FAIL" in row and "damaged" in done.stdout and "SIGABRT" in done.stdout
    assert "huichat reindex" in done.stdout.replace("\n", " ").replace("│", " ")
    assert _transcripts(config) == before


def test_a_command_after_one_that_died_reading_probes_first_and_says_the_damage_in_one_line(
    store: tuple[Path, list[str]],  # noqa: F811
) -> None:
    config, ids = store
    before = _transcripts(config)
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    marks = config.parent / "data" / index_probe.READERS
    marks.mkdir(exist_ok=True)
    (marks / dead.stdout.strip()).touch()  # a recall that aborted mid-read
    done = _huichat(config, "recall", "部署", env=ABORT)
    assert done.returncode == 1 and done.stdout == ""
    (line,) = done.stderr.splitlines()
    assert "damaged" in line and "SIGABRT" in line and "huichat reindex" in line
    assert _transcripts(config) == before
    fine = _huichat(config, "recall", "部署")  # the probe reads: the evidence goes, the command runs
    assert fine.returncode == 0, fine.stderr
    assert f"[id:{ids[0]}" in fine.stdout
    assert list(marks.iterdir()) == []


def test_reindex_moves_a_damaged_index_aside_and_keeps_the_turn_only_it_had(
    store: tuple[Path, list[str]],  # noqa: F811
) -> None:
    config, ids = store
    [path] = (config.parent / "data" / "sessions").glob("*/*/chat_*.md")
    data = path.read_bytes()
    marker = data.index(f'"id": "{ids[1]}"'.encode())
    path.write_bytes(data[: data.index("部署".encode(), marker) + 1])  # torn inside a character of its header
    done = _huichat(config, "reindex")
    assert done.returncode == 0, done.stderr
    (aside,) = (config.parent / "data" / "index.lancedb").glob("turns-*-set-aside.lance")
    assert str(aside) in done.stderr and "kept 1 turns that only the old index had" in done.stderr
    shown = _huichat(config, "show", ids[1])
    assert shown.returncode == 0 and "VPN keeps dropping at night" in shown.stdout


def _index_row(config: Path, *args: str, env: dict[str, str] | None = None) -> str:
    done = _huichat(config, "doctor", *args, env={"COLUMNS": "400", **(env or {})})
    return next(line for line in done.stdout.splitlines() if "memory index" in line)


def test_doctor_reports_its_last_full_check_while_the_index_files_are_unchanged(
    store: tuple[Path, list[str]],  # noqa: F811
) -> None:
    config, _ = store
    full = _index_row(config)
    assert "unchanged since" not in full and "2 turns" in full
    # unchanged: the last check stands, the index is not read (the child that would abort never runs)
    kept = _index_row(config, env=ABORT)
    assert " ok " in kept and "2 turns · unchanged since the full check at" in kept
    forced = _index_row(config, "--full", env=ABORT)
    assert "FAIL" in forced and "SIGABRT" in forced
    assert "unchanged since" not in _index_row(config)  # a failure is never kept
    # a byte changed in place and the mtime put back: the file's ctime still tells
    data = max((config.parent / "data" / "index.lancedb").rglob("*.lance"), key=lambda p: p.stat().st_size)
    before = data.stat()
    with data.open("r+b") as handle:
        handle.seek(before.st_size // 2)
        byte = handle.read(1)
        handle.seek(before.st_size // 2)
        handle.write(bytes([byte[0] ^ 0xFF]))
    os.utime(data, ns=(before.st_atime_ns, before.st_mtime_ns))
    assert "FAIL" in _index_row(config, env=ABORT)
    with data.open("r+b") as handle:
        handle.seek(before.st_size // 2)
        handle.write(byte)
    assert "unchanged since" not in _index_row(config)
    # a reader that died since: read again, whatever the files say
    marks = config.parent / "data" / index_probe.READERS
    marks.mkdir(exist_ok=True)
    (marks / "999999999").touch()
    assert "FAIL" in _index_row(config, env=ABORT)

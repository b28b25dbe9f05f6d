"""Reading an index that may be damaged in a child process, where an abort ends only the child.

Some damage to LanceDB's data files makes its Rust code abort the whole process ("memory
allocation of 68451041296 bytes failed", exit 134): no Python handler runs, and the user's
command dies with it. So the first read of an index nobody has vouched for is done by a
spawned interpreter with a time limit (``probe``); a child that is killed, aborts or runs
out of time means the index is damaged, said in one line. ``salvage`` reads a table that a
rebuild moved aside the same way, one version per child, newest first.

Running the probe before every command would cost every command a second interpreter. The
evidence that one is needed is cheap: each process that opens an index leaves a mark
(``<data_dir>/.index-readers/<pid>``) and removes it when it closes memory or exits. A
mark whose process is gone is a reader that died — maybe mid-read, on damaged data — and
the next open probes first (``guard``); a probe that reads clears those marks.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import signal
import subprocess
import sys
import tempfile
import threading
from collections.abc import Callable, Collection
from dataclasses import dataclass
from pathlib import Path

import pyarrow as pa

from huichat.memory.errors import IndexUnavailable
from huichat.memory.index_schema import REINDEX

PROBE_SECONDS = 120.0
"""How long the probe may read (every row of a large index is read once)."""
READERS = ".index-readers"
"""The folder of marks under the data folder, one file per process that has memory open."""
ABORT_FOR_TESTS = "HUICHAT_TEST_PROBE_ABORT"
"""The vendor seam of the tests: the child aborts where LanceDB's read would, as it does on some damage."""
_EXIT_UNREADABLE = 3
"""The child's exit status for a read that failed with an error (a damaged index, said on stderr)."""
_EXIT_NO_VERSION = 4
"""The child's exit status when the table has no version of the rank asked for."""

_lock = threading.Lock()
_open: dict[Path, int] = {}
"""Per marks folder, how many kernels of this process have it open."""


@dataclass(frozen=True)
class Salvaged:
    """What a set-aside table still gives: the version that reads, and the kept columns of every
    row in it (``id`` and ``KEPT_COLUMNS``)."""

    uri: str
    name: str
    version: int
    kept: pa.Table
    newest: bool
    """The version read is the newest: nothing the index knew is lost."""

    @property
    def ids(self) -> set[str]:
        """Every turn the table holds."""
        return {str(i) for i in self.kept.column("id").to_pylist()}

    def turns(self, ids: Collection[str], files: Collection[str], timeout: float = PROBE_SECONDS) -> pa.Table | None:
        """Every column but the vector of the rows of ``ids`` and of ``files`` (None: they do not read)."""
        with tempfile.TemporaryDirectory(prefix="huichat-salvage-") as folder:
            out = Path(folder)
            wanted = out / "wanted.txt"
            wanted.write_text("\n".join([*(f"id:{i}" for i in ids), *(f"file:{f}" for f in files)]), encoding="utf-8")
            status, _ = _child(["turns", self.uri, self.name, str(self.version), str(wanted)], timeout, out)
            return _read_ipc(out / "turns.arrow") if status == 0 else None


def _child(arguments: list[str], timeout: float, out: Path | None = None) -> tuple[int, str]:
    """Run this module as a child: (exit status, one line saying why it failed; "" when it read)."""
    environment = {**os.environ, "LANCEDB_LOG": "error", "RUST_BACKTRACE": "0"}
    command = [sys.executable, "-m", __name__, *arguments, str(out or "")]
    try:
        done = subprocess.run(
            command, capture_output=True, text=True, errors="replace", timeout=timeout, env=environment
        )
    except subprocess.TimeoutExpired:
        return -signal.SIGKILL, f"reading it took over {timeout:.0f} s"
    if done.returncode == 0:
        return 0, ""
    if done.returncode < 0:
        return done.returncode, f"the reading process was killed by {signal.Signals(-done.returncode).name}"
    lines = [line.strip() for line in done.stderr.splitlines() if line.strip()]
    if done.returncode in (_EXIT_UNREADABLE, _EXIT_NO_VERSION) and lines:
        return done.returncode, lines[-1][:300]
    return done.returncode, f"the reading process ended with exit {done.returncode}" + (
        f": {lines[-1][:200]}" if lines else ""
    )


def probe(uri: str, timeout: float = PROBE_SECONDS) -> str | None:
    """Read every row of the index at ``uri`` in a child process: None when it reads, else why not."""
    status, reason = _child(["scan", uri], timeout)
    return reason if status else None


def salvage(uri: str, name: str, timeout: float = PROBE_SECONDS, tries: int = 5) -> Salvaged | None:
    """The newest version of the set-aside table ``name`` that still reads (at most ``tries``, newest
    first, each in its own child), with the kept columns of every row; None when none reads."""
    with tempfile.TemporaryDirectory(prefix="huichat-salvage-") as folder:
        out = Path(folder)
        for rank in range(tries):
            status, _ = _child(["kept", uri, name, str(rank)], timeout, out)
            if status == _EXIT_NO_VERSION:
                return None
            if status == 0:
                version = int((out / "version").read_text(encoding="ascii"))
                return Salvaged(uri, name, version, _read_ipc(out / "kept.arrow"), rank == 0)
    return None


def _read_ipc(path: Path) -> pa.Table:
    with pa.OSFile(str(path), "rb") as source:
        return pa.ipc.open_file(source).read_all()


def _write_ipc(path: Path, table: pa.Table) -> None:
    with pa.OSFile(str(path), "wb") as sink, pa.ipc.new_file(sink, table.schema) as writer:
        writer.write_table(table)


# ------------------------------------------------------------------ marks


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # another user's process
    return True


def readers_that_died(data_dir: Path) -> list[Path]:
    """The marks of processes that opened this memory and ended without closing it."""
    folder = data_dir / READERS
    try:
        marks = list(folder.iterdir())
    except OSError:
        return []
    return [mark for mark in marks if not mark.name.isdigit() or not _alive(int(mark.name))]


def guard(data_dir: Path, uri: str) -> None:
    """Before this process reads the index: when a reader died since the last clean look, probe it
    first, and raise ``IndexUnavailable`` (one line) when it does not read."""
    died = readers_that_died(data_dir)
    if not died:
        return
    reason = probe(uri)
    if reason is not None:
        raise IndexUnavailable(f"the memory index at {uri} is damaged ({reason}); {REINDEX}")
    vouch(died)


def vouch(marks: Collection[Path]) -> None:
    """The index was read whole since these readers died: their marks are no longer evidence."""
    for mark in marks:
        _unmark(mark)


def reading(data_dir: Path) -> Callable[[], None]:
    """Leave this process's mark under ``data_dir`` (until the returned release, or a clean exit).

    Best effort: where the mark cannot be written (a read-only data folder) memory opens all
    the same, without that evidence."""
    folder = data_dir / READERS
    mark = folder / str(os.getpid())
    with _lock:
        if not _open.get(folder):
            try:
                folder.mkdir(mode=0o700, parents=True, exist_ok=True)
                mark.touch(mode=0o600)
            except OSError:
                return lambda: None
            if folder not in _open:
                atexit.register(_unmark, mark)
        _open[folder] = _open.get(folder, 0) + 1
    released = threading.Event()

    def release() -> None:
        if released.is_set():
            return
        released.set()
        with _lock:
            _open[folder] -= 1
            if not _open[folder]:
                _unmark(mark)

    return release


def _unmark(mark: Path) -> None:
    with contextlib.suppress(OSError):
        mark.unlink(missing_ok=True)


# ------------------------------------------------------------------ the child


def _main(arguments: list[str]) -> int:
    if os.environ.get(ABORT_FOR_TESTS):
        os.abort()
    from huichat.memory.errors import KernelError
    from huichat.memory.store import read_every_row, read_set_aside, read_set_aside_turns

    try:
        if arguments[0] == "scan":
            read_every_row(arguments[1])
            return 0
        if arguments[0] == "kept":
            uri, name, rank, out = arguments[1:5]
            found = read_set_aside(uri, name, int(rank))
            if found is None:
                print("the table has no older version", file=sys.stderr)
                return _EXIT_NO_VERSION
            _write_ipc(Path(out) / "kept.arrow", found[1])
            (Path(out) / "version").write_text(str(found[0]), encoding="ascii")
            return 0
        uri, name, version, wanted, out = arguments[1:6]
        lines = Path(wanted).read_text(encoding="utf-8").splitlines()
        ids = [line[3:] for line in lines if line.startswith("id:")]
        files = [line[5:] for line in lines if line.startswith("file:")]
        _write_ipc(Path(out) / "turns.arrow", read_set_aside_turns(uri, name, int(version), ids, files))
        return 0
    except KernelError as exc:
        print(exc, file=sys.stderr)
        return _EXIT_UNREADABLE


if __name__ == "__main__":
    sys.exit(_main(sys.argv[1:]))

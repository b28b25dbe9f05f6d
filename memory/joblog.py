"""The log of the lifecycle jobs: what every run planned, applied and moved (JSON lines, append-only).

A run writes ``start``, then what it is about to change (``move`` and ``cluster`` records,
fsynced *before* the index is touched), then ``applied`` once the index commit is done,
and ``end``. A run killed in between leaves a run without ``end``: the next run checks
which of its planned changes reached the index, records that (``resumed``), and plans
the rest again. So the log never claims a change that did not happen without saying so,
and never misses one that did.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import secrets
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import IO, Any

_JOB_SWITCH_INTERVAL = 0.0005
"""Seconds between GIL hand-overs while a job runs (Python's default is 0.005)."""
_RUN_EVENTS = frozenset({"start", "end", "resumed"})
LOG_NAME = "lifecycle.jsonl"
LOCK_NAME = "lifecycle.lock"


@dataclass(frozen=True)
class Interrupted:
    """A run that never ended: its id, its job, and the changes it had planned."""

    run: str
    job: str
    records: tuple[dict[str, Any], ...]


class JobLog:
    """The append-only log of job runs under the data folder, and the lock that lets one run at a time."""

    def __init__(self, data_dir: Path) -> None:
        self.path = data_dir / LOG_NAME
        self.lock_path = data_dir / LOCK_NAME

    @staticmethod
    def new_run_id(now: datetime) -> str:
        """A readable, unique run id: ``20261125-150000-k3f9``."""
        return now.strftime("%Y%m%d-%H%M%S-") + secrets.token_hex(2)

    def append(self, *records: dict[str, Any]) -> None:
        """Append records and fsync: once this returns they survive a crash."""
        if not records:
            return
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with self.path.open("a", encoding="utf-8") as handle:
            handle.write("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records))
            handle.flush()
            os.fsync(handle.fileno())

    def records(self, events: frozenset[str] | None = None) -> list[dict[str, Any]]:
        """Every record in order, or only those of ``events`` (a torn last line from a crash is skipped)."""
        if not self.path.exists():
            return []
        markers = tuple(f'"event": "{e}"' for e in events) if events else ()
        found = []
        with self.path.open(encoding="utf-8") as handle:
            for line in handle:
                if markers and not any(m in line for m in markers):
                    continue  # most lines are moves: the run records are found without parsing them
                try:
                    record = json.loads(line)
                except ValueError:
                    continue
                if isinstance(record, dict):
                    found.append(record)
        return found

    def interrupted(self, job: str) -> Interrupted | None:
        """The last run of ``job`` if it has no ``end`` and no later run resumed it."""
        runs = self.records(_RUN_EVENTS)
        started = [r for r in runs if r.get("event") == "start" and r.get("job") == job]
        if not started:
            return None
        run = started[-1]["run"]
        closed = any(
            (r.get("event") == "end" and r.get("run") == run) or (r.get("event") == "resumed" and r.get("of") == run)
            for r in runs
        )
        if closed:
            return None
        return Interrupted(run, job, tuple(r for r in self.records() if r.get("run") == run))

    def last_finished(self, job: str) -> datetime | None:
        """When ``job`` last finished a run (its ``start`` time), or None."""
        runs = self.records(_RUN_EVENTS)
        ended = {r["run"] for r in runs if r.get("event") == "end" and r.get("job") == job}
        starts = [datetime.fromisoformat(r["at"]) for r in runs if r.get("event") == "start" and r.get("run") in ended]
        return max(starts, default=None)

    @contextlib.contextmanager
    def exclusive(self) -> Iterator[bool]:
        """Hold the job lock while the block runs; yields False when another job holds it.

        While a job runs, the interpreter hands the GIL between threads more often, so that
        searches in the app's other threads are not kept waiting behind the job's Python work.
        """
        self.lock_path.parent.mkdir(parents=True, exist_ok=True)
        handle: IO[str] = self.lock_path.open("a+")
        interval = sys.getswitchinterval()
        try:
            try:
                fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError:
                yield False
                return
            sys.setswitchinterval(_JOB_SWITCH_INTERVAL)
            yield True
        finally:
            sys.setswitchinterval(interval)
            handle.close()

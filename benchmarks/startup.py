"""``huichat bench startup``: first paint, memory ready, LLM client ready and quitting, in real processes.

Each run starts the real ``huichat`` in a pseudo-terminal (so imports, the terminal and
the exit path all count, as for a user) with the user's configuration. The app logs its
milestones (``huichat.milestones``); ``benchmarks.startup_probe`` starts it with those
records going to a file, and the benchmark presses ctrl+q once
everything is loaded ("quit when idle") and, in separate runs, right after the first
paint ("quit while loading"), and times until the process has exited.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import pty
import select
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rich.console import Console
from rich.table import Table

from benchmarks.common import machine, median, write_json
from huichat.app.config import LoadedConfig

if TYPE_CHECKING:
    from huichat.app.runtime import Zone

CTRL_Q = b"\x11"


class Launch:
    """One ``huichat`` process in a pseudo-terminal, its milestones read from the trace file."""

    def __init__(self, config: Path | None, trace: Path) -> None:
        self.trace = trace
        self.started = time.time()
        self.master, slave = pty.openpty()
        os.set_blocking(self.master, False)
        command = [sys.executable, "-m", "benchmarks.startup_probe", str(trace)]
        command += ["--config", str(config)] if config else []
        env = {**os.environ, "TERM": "xterm-256color", "COLUMNS": "120", "LINES": "36"}
        self.process = subprocess.Popen(command, stdin=slave, stdout=slave, stderr=slave, env=env, close_fds=True)
        os.close(slave)

    def _drain(self, seconds: float) -> None:
        ready, _, _ = select.select([self.master], [], [], seconds)
        if ready:
            with contextlib.suppress(OSError):
                os.read(self.master, 1 << 16)

    def events(self) -> dict[str, float]:
        """Milestone → seconds after launch, and ``<milestone>_cpu`` → the process's CPU-seconds then."""
        if not self.trace.exists():
            return {}
        found: dict[str, float] = {}
        for line in self.trace.read_text(encoding="utf-8").splitlines():
            stamp, event, cpu = line.split(" ")
            found.setdefault(event, float(stamp) - self.started)
            found.setdefault(f"{event}_cpu", float(cpu))
        return found

    def wait_for(self, *events: str, timeout: float = 300.0) -> dict[str, float]:
        deadline = time.time() + timeout
        while time.time() < deadline:
            seen = self.events()
            if all(e in seen for e in events) or self.process.poll() is not None:
                return seen
            self._drain(0.05)
        raise RuntimeError(f"huichat never reached {events} (saw {sorted(self.events())})")

    def quit(self, timeout: float = 120.0) -> float:
        """Press ctrl+q; seconds until the process has exited."""
        pressed = time.time()
        os.write(self.master, CTRL_Q)
        deadline = pressed + timeout
        while self.process.poll() is None and time.time() < deadline:
            self._drain(0.01)
        if self.process.poll() is None:
            self.process.kill()
            raise RuntimeError("huichat did not exit after ctrl+q")
        exited = time.time() - pressed
        os.close(self.master)
        return exited


def one_run(config: Path | None, scratch: Path, index: int) -> dict[str, Any]:
    """A full start (until memory and the LLM client are ready, then quit) and a quit while loading."""
    idle = Launch(config, scratch / f"idle-{index}.trace")
    marks = idle.wait_for("first_paint", "memory_ready", "llm_ready")
    marks = {**marks, "quit_idle": idle.quit()}
    early = Launch(config, scratch / f"early-{index}.trace")
    early.wait_for("first_paint")
    loading = early.events()
    marks["quit_loading"] = early.quit()
    marks["quit_loading_was_loading"] = "memory_ready" not in loading or "llm_ready" not in loading
    return marks


def run_startup_bench(args: argparse.Namespace, loaded: LoadedConfig, zone: Zone) -> int:
    """Median of several cold process starts."""
    console = Console()
    config = loaded.files[0] if loaded.files else None
    runs = []
    with tempfile.TemporaryDirectory(prefix="huichat-startup-") as scratch, console.status("starting huichat…"):
        for index in range(args.runs):
            runs.append(one_run(config, Path(scratch), index))
    moments = [
        ("first_paint", "first paint (prompt accepts typing)"),
        ("memory_ready", "memory ready for recall"),
        ("llm_ready", "LLM client ready"),
        ("quit_idle", "quit (ctrl+q → shell prompt), everything loaded"),
        ("quit_loading", "quit (ctrl+q → shell prompt) right after the first paint"),
    ]
    report: dict[str, Any] = {"runs": runs, "machine": machine()}
    table = Table(title=f"startup · median of {args.runs} fresh processes in a terminal")
    table.add_column("moment")
    table.add_column("median (s)", justify="right")
    table.add_column("runs (s)")
    table.add_column("CPU-s (median)", justify="right")
    for key, label in moments:
        values = [r[key] for r in runs if key in r]
        report[f"median_{key}_s"] = round(median(values), 3)
        cpu = [r[f"{key}_cpu"] for r in runs if f"{key}_cpu" in r]
        if cpu:
            report[f"median_{key}_cpu_s"] = round(median(cpu), 3)
        shown = f"{median(cpu):.2f}" if cpu else ""
        table.add_row(label, f"{median(values):.2f}", ", ".join(f"{v:.2f}" for v in values), shown)
    console.print(table)
    write_json(args.json, report)
    return 0

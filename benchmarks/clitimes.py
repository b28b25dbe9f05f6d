"""``huichat bench cli``: the cold time of each command, as a user starts it from the shell.

Every run is a fresh process (``python -m app …``, imports included) against the user's
configuration; the median of several runs is reported. ``show`` shows the first turn of
the most recent session (or an unknown id on an empty memory).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rich.console import Console
from rich.table import Table

from benchmarks.common import machine, median, write_json
from huichat.app.config import LoadedConfig

if TYPE_CHECKING:
    from huichat.app.runtime import Zone

TARGETS = {"sessions": 1.0, "show": 1.0, "doctor": 1.0, "recall": 3.0}
"""Seconds each command may take cold (issue 15)."""


def _run(config: Path | None, *args: str) -> tuple[float, subprocess.CompletedProcess[str]]:
    command = [sys.executable, "-m", "huichat", *(["--config", str(config)] if config else []), *args]
    started = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True, timeout=600)
    return time.perf_counter() - started, done


def _some_turn(config: Path | None) -> str:
    _, listed = _run(config, "sessions", "--json")
    try:
        sessions = json.loads(listed.stdout or "[]")
    except ValueError:
        sessions = []
    if not sessions:
        return "zzzzzz"
    _, recalled = _run(config, "recall", sessions[0]["first_message"][:40] or "hello", "--json", "--top-k", "1")
    try:
        results = json.loads(recalled.stdout)["results"]
    except (ValueError, KeyError):
        results = []
    return str(results[0]["id"]) if results else "zzzzzz"


def run_cli_bench(args: argparse.Namespace, loaded: LoadedConfig, zone: Zone) -> int:
    """Median cold time of sessions, show, recall and doctor."""
    console = Console()
    config = loaded.files[0] if loaded.files else None
    turn = _some_turn(config)
    commands = {
        "sessions": ["sessions"],
        "show": ["show", turn],
        "recall": ["recall", "VPN keepalive 上周三下午"],
        "doctor": ["doctor"],
    }
    report: dict[str, Any] = {"machine": machine(), "commands": {}}
    table = Table(title=f"cold command times · median of {args.runs} fresh processes")
    table.add_column("command")
    table.add_column("median (s)", justify="right")
    table.add_column("target (s)", justify="right")
    table.add_column("runs (s)")
    with console.status("timing commands…"):
        for name, argv in commands.items():
            times = [_run(config, *argv)[0] for _ in range(args.runs)]
            report["commands"][name] = {"median_s": round(median(times), 3), "runs_s": [round(t, 3) for t in times]}
            table.add_row(
                " ".join(argv), f"{median(times):.2f}", f"{TARGETS[name]:.1f}", ", ".join(f"{t:.2f}" for t in times)
            )
    console.print(table)
    write_json(args.json, report)
    return 0

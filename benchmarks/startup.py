"""``huichat bench startup``: time to first paint and until memory is ready, in fresh processes.

Each run starts a new interpreter (so imports count, as for a user), builds the app through
the composition root with the real configuration, runs it headless, and reports when the
first frame was painted and when the kernel (embedding model + index) was ready.
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

from app.config import LoadedConfig
from benchmarks.common import machine, median, write_json

if TYPE_CHECKING:
    from app.runtime import Zone

_PROBE = """
import sys, time, json, asyncio
started = float(sys.argv[1])
from pathlib import Path
from app.config import load_config
from app.wiring import runtime
from app.tui import HuichatApp

config = Path(sys.argv[2]) if sys.argv[2] else None
marks = {}
app = HuichatApp(runtime(load_config(config)))

async def main():
    async with app.run_test(headless=True, size=(120, 40)) as pilot:
        await pilot.pause()
        marks["first_paint"] = time.time() - started
        prompt = app.chat_screen.query_one("#prompt")
        marks["prompt_focused"] = prompt.has_focus
        try:
            kernel = await app.gateway.kernel()
            marks["memory_error"] = ""
        except Exception as exc:
            kernel, marks["memory_error"] = None, str(exc)
        marks["memory_ready"] = time.time() - started
        try:
            await app.gateway.llm()
        except Exception:
            pass
        marks["llm_ready"] = time.time() - started
        marks["turns"] = kernel.count() if kernel else None

asyncio.run(main())
print("PROBE " + json.dumps(marks))
"""


def probe(config: Path | None) -> dict[str, Any]:
    """One fresh process: seconds from launch to first paint, memory ready, LLM client ready."""
    started = time.time()
    done = subprocess.run(
        [sys.executable, "-c", _PROBE, str(started), str(config or "")],
        capture_output=True,
        text=True,
        timeout=600,
    )
    for line in done.stdout.splitlines():
        if line.startswith("PROBE "):
            return dict(json.loads(line[6:]))
    raise RuntimeError(f"startup probe failed: {done.stderr.strip().splitlines()[-1:] or done.returncode}")


def run_startup_bench(args: argparse.Namespace, loaded: LoadedConfig, zone: Zone) -> int:
    """Median of several cold process starts."""
    console = Console()
    config = loaded.files[0] if loaded.files else None
    runs = []
    with console.status("starting huichat…"):
        for _ in range(args.runs):
            runs.append(probe(config))
    report = {
        "runs": runs,
        "median_first_paint_s": round(median([r["first_paint"] for r in runs]), 3),
        "median_memory_ready_s": round(median([r["memory_ready"] for r in runs]), 3),
        "median_llm_ready_s": round(median([r["llm_ready"] for r in runs]), 3),
        "prompt_focused_at_first_paint": all(r["prompt_focused"] for r in runs),
        "turns": runs[-1].get("turns"),
        "machine": machine(),
    }
    table = Table(title=f"startup · median of {args.runs} fresh processes · {report['turns']} turns in memory")
    table.add_column("moment")
    table.add_column("seconds after launch", justify="right")
    table.add_row("first paint (prompt accepts typing)", f"{report['median_first_paint_s']:.2f}")
    table.add_row("memory ready (model + index)", f"{report['median_memory_ready_s']:.2f}")
    table.add_row("LLM client ready (litellm)", f"{report['median_llm_ready_s']:.2f}")
    console.print(table)
    write_json(args.json, report)
    return 0

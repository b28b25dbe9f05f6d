"""``python -m benchmarks.doctorping``: how long ``huichat doctor --ping`` takes with two providers.

Issue 25 asks for at most 5 s with two providers configured. Each run is a fresh process, as a
user starts it, with the configured embedding model and a fresh data folder; the providers are
two scripted servers (``benchmarks.fakellm``) that answer at once, one calling tools and one
not, so what is measured is huichat's own part: start-up, the memory checks, importing the
provider layer and the pings. Wall seconds need a quiet machine; CPU-seconds (the child's user
+ system time) say what the command costs on a busy one.
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from benchmarks.common import median
from benchmarks.fakellm import FakeLLM, Reply, ToolCall


def _calls_tools(body: dict[str, Any]) -> Reply:
    return Reply(tool_calls=[ToolCall("recall_memory", {"query": "cat name"})]) if body.get("tools") else Reply("OK")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--runs", type=int, default=3, help="fresh processes to time (default 3)")
    args = parser.parse_args(argv)
    walls, cpus = [], []
    with FakeLLM(responder=_calls_tools) as calls, FakeLLM() as talks, tempfile.TemporaryDirectory() as tmp:
        config = Path(tmp) / "config.yaml"
        config.write_text(
            f"storage:\n  data_dir: {tmp}/data\nproviders:\n  named:\n"
            f"    calls: {{model: openai/a, api_base: '{calls.base_url}'}}\n"
            f"    talks: {{model: openai/b, api_base: '{talks.base_url}'}}\n",
            encoding="utf-8",
        )
        env = {**os.environ, "HOME": tmp, "HF_HUB_OFFLINE": "1", "COLUMNS": "200"}
        for run in range(1, args.runs + 1):
            before = resource.getrusage(resource.RUSAGE_CHILDREN)
            started = time.perf_counter()
            command = [sys.executable, "-m", "huichat", "--config", str(config), "doctor", "--ping"]
            done = subprocess.run(command, capture_output=True, text=True, env=env, timeout=300)
            walls.append(time.perf_counter() - started)
            after = resource.getrusage(resource.RUSAGE_CHILDREN)
            cpus.append(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)
            print(f"run {run}: {walls[-1]:.2f} s, {cpus[-1]:.2f} CPU-s, exit {done.returncode}")
            if done.returncode != 0:
                print(done.stdout[-2000:], done.stderr[-2000:], sep="\n")
    print(
        f"doctor --ping, two providers: median {median(walls):.2f} s, {median(cpus):.2f} CPU-s · load {os.getloadavg()}"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""Resident memory of a catch-up: memory opened as the chat opens it, its waiting turns embedded the chat's way.

``embed_pending`` is called in one worker thread (the chat's gateway) until no turn waits, while ``VmRSS`` is
read every 0.1 s; one JSON line gives RSS before, at the peak and ``--idle`` seconds after, the turns and the
CPU-seconds (the data folder comes from the configuration: ``HOME`` or ``storage.data_dir``)::

    python -m benchmarks.synthetic --out conv.zip --conversations 100 --messages 800 --long-answers --seed 21
    huichat import --no-embed conv.zip
    python -m benchmarks.catchup_rss
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from huichat.app.config import load_config
from huichat.app.wiring import runtime


def resident_mb() -> float:
    """This process's resident memory (``VmRSS``) in MB."""
    for line in Path("/proc/self/status").read_text(encoding="utf-8").splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


def _cpu_seconds() -> float:
    used = resource.getrusage(resource.RUSAGE_SELF)
    return used.ru_utime + used.ru_stime


def main(argv: list[str] | None = None) -> int:
    """Command line: ``python -m benchmarks.catchup_rss [--config FILE] [--idle S]``."""
    parser = argparse.ArgumentParser(prog="python -m benchmarks.catchup_rss", description=__doc__.split("\n\n")[0])
    parser.add_argument("--config", type=Path, default=None)
    parser.add_argument("--idle", type=float, default=5.0, help="seconds to wait after the catch-up")
    args = parser.parse_args(argv)
    kernel = runtime(load_config(args.config)).open_kernel()
    waiting = kernel.pending_vectors
    before = peak = resident_mb()
    sampling = threading.Event()

    def sample() -> None:
        nonlocal peak
        while not sampling.wait(0.1):
            peak = max(peak, resident_mb())

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    cpu, done = _cpu_seconds(), 0
    with ThreadPoolExecutor(1, thread_name_prefix="gateway") as gateway:
        while batch := gateway.submit(kernel.embed_pending).result():
            done += batch
    cpu = _cpu_seconds() - cpu
    time.sleep(args.idle)
    after = resident_mb()
    sampling.set()
    sampler.join()
    kernel.close()
    figures = {
        "waiting": waiting,
        "embedded": done,
        "cpu_s": round(cpu, 1),
        "rss_before_mb": round(before),
        "rss_peak_mb": round(max(peak, after)),
        "rss_after_mb": round(after),
        "load": [round(x, 2) for x in os.getloadavg()],
    }
    print(json.dumps(figures))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""``huichat import`` timed from outside: each output line stamped, SIGINT at a deadline.

Runs the installed command as a user would (output to a pipe, so the progress lines are the
plain ones), prints every line with the seconds since start, sends SIGINT once ``--stop-after``
seconds have passed and ends with one JSON line: wall seconds, CPU-seconds of the command
(``getrusage``), its exit status, the seconds from SIGINT to exit, the load average::

    python -m benchmarks.importtime --config cfg.yaml --stop-after 520 conv2500.json
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import signal
import subprocess
import threading
import time
from pathlib import Path


def _default_sigint() -> None:
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def main(argv: list[str] | None = None) -> int:
    """Command line: ``python -m benchmarks.importtime --config FILE PATH…``."""
    parser = argparse.ArgumentParser(prog="python -m benchmarks.importtime", description=__doc__.split("\n\n")[0])
    parser.add_argument("--config", type=Path, required=True)
    parser.add_argument("--stop-after", type=float, default=None, help="send SIGINT after this many seconds")
    parser.add_argument("paths", nargs="+")
    args = parser.parse_args(argv)
    command = [shutil.which("huichat") or "huichat", "--config", str(args.config), "import", *args.paths]
    start = time.monotonic()
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "LANCEDB_LOG": "error"}
    process = subprocess.Popen(
        command,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env=env,
        # a shell starting this in the background (``&``, nohup) passes SIGINT on as ignored, and Python
        # keeps an ignored SIGINT: the command would never see the interrupt this bench sends
        preexec_fn=_default_sigint,
    )
    interrupted: list[float] = []

    def interrupt(deadline: float) -> None:
        while process.poll() is None:
            if time.monotonic() - start > deadline:
                interrupted.append(time.monotonic())
                process.send_signal(signal.SIGINT)
                return
            time.sleep(0.05)

    if args.stop_after is not None:
        threading.Thread(target=interrupt, args=(args.stop_after,), daemon=True).start()
    assert process.stdout is not None
    for line in process.stdout:
        print(f"{time.monotonic() - start:7.1f}s {line}", end="", flush=True)
    process.wait()
    end = time.monotonic()
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    figures = {
        "wall_s": round(end - start, 1),
        "cpu_s": round(usage.ru_utime + usage.ru_stime, 1),
        "status": process.returncode,
        "stop_s": round(end - interrupted[0], 2) if interrupted else None,
        "load": os.getloadavg(),
    }
    print(json.dumps(figures))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

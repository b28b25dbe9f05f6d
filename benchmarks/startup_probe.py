"""``python -m benchmarks.startup_probe TRACE [huichat arguments]``: ``huichat`` with its milestones
(the ``huichat.milestones`` log: first_paint, memory_ready, llm_ready, quit) appended to TRACE
as ``<unix time> <milestone> <process CPU-seconds>`` lines, for ``huichat bench startup`` (the
CPU time moves much less with other work on the machine than the wall time does)."""

import logging
import sys
import time

from huichat.app.wiring import main


class _Cpu(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        record.cpu = time.process_time()
        return True


if __name__ == "__main__":
    handler = logging.FileHandler(sys.argv[1], encoding="utf-8")
    handler.setFormatter(logging.Formatter("%(created).6f %(message)s %(cpu).3f"))
    handler.addFilter(_Cpu())
    milestones = logging.getLogger("huichat.milestones")
    milestones.addHandler(handler)
    milestones.setLevel(logging.INFO)
    sys.exit(main(sys.argv[2:]))

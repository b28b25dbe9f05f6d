"""``python -m benchmarks.startup_probe TRACE [huichat arguments]``: ``huichat`` with its milestones
(the ``huichat.milestones`` log: first_paint, memory_ready, llm_ready, quit) appended to TRACE
as ``<unix time> <milestone>`` lines, for ``huichat bench startup``."""

import logging
import sys

from huichat.app.wiring import main

if __name__ == "__main__":
    handler = logging.FileHandler(sys.argv[1], encoding="utf-8")
    handler.setFormatter(logging.Formatter("%(created).6f %(message)s"))
    milestones = logging.getLogger("huichat.milestones")
    milestones.addHandler(handler)
    milestones.setLevel(logging.INFO)
    sys.exit(main(sys.argv[2:]))

"""Run as a separate process by the lifecycle tests: a job that is killed (SIGKILL) part-way.

``python -m tests.memory.job_process ROOT lifecycle|consolidation before-commit|after-commit``

``before-commit`` dies once the job has logged what it plans and before the index changes;
``after-commit`` dies right after the index commit, before the log says it was applied.
"""

from __future__ import annotations

import os
import signal
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from huichat.memory.config import ConsolidationConfig, LifecycleConfig, RetrieverConfig
from huichat.memory.consolidation import run_consolidation
from huichat.memory.embedding import HashEmbedder
from huichat.memory.joblog import JobLog
from huichat.memory.lifecycle import run_lifecycle
from huichat.memory.opening import MemoryLocation, open_kernel
from tests.conftest import NOW, ZONE


def main() -> None:
    root, job, when = Path(sys.argv[1]), sys.argv[2], sys.argv[3]
    kernel = open_kernel(
        MemoryLocation.under(root), HashEmbedder(64), RetrieverConfig(), ZONE, now=NOW, lifecycle=LifecycleConfig()
    )
    watched = "tier" if job == "lifecycle" else "cluster_role"
    update = kernel.store.update_columns

    def dying(ids: Sequence[str], columns: dict[str, Sequence[Any]]) -> None:
        if watched in columns and when == "before-commit":
            os.kill(os.getpid(), signal.SIGKILL)
        update(ids, columns)
        if watched in columns:
            os.kill(os.getpid(), signal.SIGKILL)

    kernel.store.update_columns = dying  # type: ignore[method-assign]
    log = JobLog(root)
    if job == "lifecycle":
        run_lifecycle(kernel, NOW, log)
    else:
        run_consolidation(kernel, NOW, ConsolidationConfig(), log)


if __name__ == "__main__":
    main()

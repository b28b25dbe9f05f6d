"""Memory upkeep jobs served at ``/v1/memory/<name>``: each maps (kernel, now, config) to a JSON-able record.

Javis's lifecycle jobs: ``consolidate`` groups near-duplicates (``memory.consolidation``; the seed's
``clusters_found`` / ``clusters_consolidated`` / ``memories_consolidated``);
``promote`` and ``cleanup`` run the daily lifecycle job (``memory.lifecycle``: importance
re-scored, turns moved between tiers) — one job, since a turn's tier follows from all of its
state at once — and report the moves up to long-term memory and down to the archive
as the seed's ``promoted`` and ``cleaned`` (every move is in ``moves``). Every run is logged in ``<data_dir>/lifecycle.jsonl``
like the CLI's and the chat's; a run while another process runs a job says so in ``skipped``.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import Any

from huichat.memory.config import ConsolidationConfig
from huichat.memory.kernel import MemoryKernel
from huichat.memory.turns import TIER_ARCHIVE, TIER_LONG_TERM

Job = Callable[[MemoryKernel, datetime, ConsolidationConfig], dict[str, Any]]


def consolidate(kernel: MemoryKernel, now: datetime, config: ConsolidationConfig) -> dict[str, Any]:
    """Group near-duplicates behind their most important turn (nothing is deleted)."""
    from huichat.memory.consolidation import run_consolidation
    from huichat.memory.joblog import JobLog

    report = run_consolidation(kernel, now, config, JobLog(kernel.data_dir))
    return {
        "clusters_found": len(report.clusters),
        "clusters_consolidated": 0 if report.dry_run else len(report.clusters),
        "memories_consolidated": report.grouped,
        "run": report.run,
        "resumed": report.resumed or None,
        "skipped": report.skipped or None,
    }


def _lifecycle(kernel: MemoryKernel, now: datetime, direction: str, target: str) -> dict[str, Any]:
    from huichat.memory.joblog import JobLog
    from huichat.memory.lifecycle import run_lifecycle

    report = run_lifecycle(kernel, now, JobLog(kernel.data_dir))
    return {
        "run": report.run,
        "scored": report.scored,
        direction: sum(1 for m in report.moves if m.target == target),
        "moves": [m.to_record() for m in report.moves],
        "resumed": report.resumed or None,
        "skipped": report.skipped or None,
    }


JOBS: dict[str, Job] = {
    "consolidate": consolidate,
    "promote": lambda kernel, now, _config: _lifecycle(kernel, now, "promoted", TIER_LONG_TERM),
    "cleanup": lambda kernel, now, _config: _lifecycle(kernel, now, "cleaned", TIER_ARCHIVE),
}

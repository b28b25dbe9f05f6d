"""The statistics' own presentation, shared by ``huichat stats`` and the F3 screen."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime

import pytest

from huichat.memory.stats import MemoryStats

EMPTY = MemoryStats(
    total_turns=0,
    total_sessions=0,
    tiers={},
    sessions_per_tier={},
    avg_importance=0.0,
    total_accesses=0,
    importance_histogram=(),
    top_important=(),
    recent_accesses=(),
    top_accessed=(),
    turns_per_week=(),
    languages={},
    disk_bytes=0,
    clusters=0,
    clustered_turns=0,
    generated_at=datetime(2026, 12, 1, tzinfo=UTC),
)


@pytest.mark.parametrize(
    ("disk_bytes", "shown"),
    [
        (0, "0 B"),
        (999, "999 B"),
        (1000, "1.0 kB"),
        (12_345_678, "12.3 MB"),
        (999_949_999_999, "999.9 GB"),
        # both copies stopped at GB ("1234.0 GB"; their unreachable last lines said TB and GB)
        (1_234_000_000_000, "1.2 TB"),
        (5_000_000_000_000_000, "5000.0 TB"),
    ],
)
def test_disk_size_is_for_people(disk_bytes: int, shown: str) -> None:
    assert replace(EMPTY, disk_bytes=disk_bytes).disk_size == shown

"""Memory statistics for the dashboard and ``/v1/memory/stats``: counts, weeks, accesses.

``collect(kernel, now)`` reads every turn's light columns once. Importance and tiers come
with the lifecycle (Javis's three tiers); until then those fields are empty.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import asdict, dataclass, field
from datetime import datetime, timedelta
from typing import Any

from memory.kernel import MemoryKernel
from memory.turns import Turn

_TOP = 10
_WEEKS = 12


@dataclass(frozen=True)
class TurnSummary:
    """One turn as a list row: id, topic, when, how often recalled, the start of its text."""

    id: str
    topic: str
    timestamp: str
    access_count: int
    last_accessed_at: str | None
    snippet: str

    @classmethod
    def of(cls, turn: Turn) -> TurnSummary:
        """The row for ``turn``."""
        first = next((m.text for m in turn.messages if m.is_chat), "")
        return cls(
            turn.id,
            turn.topic,
            turn.timestamp.isoformat(),
            turn.access_count,
            turn.last_accessed_at.isoformat() if turn.last_accessed_at else None,
            first[:120],
        )


@dataclass(frozen=True)
class MemoryStats:
    """What the dashboard draws; ``to_record`` is its JSON."""

    total_turns: int
    total_sessions: int
    total_accesses: int
    turns_per_week: tuple[tuple[str, int], ...]
    """The last weeks (ISO week labels, oldest first) and the turns said in each."""
    recent_accesses: tuple[TurnSummary, ...]
    top_accessed: tuple[TurnSummary, ...]
    tiers: dict[str, int] = field(default_factory=dict)
    avg_importance: float | None = None
    importance_histogram: tuple[int, ...] = ()
    top_important: tuple[TurnSummary, ...] = ()

    def to_record(self) -> dict[str, Any]:
        """Plain JSON-able data under the field names."""
        record = asdict(self)
        record["turns_per_week"] = [{"week": week, "turns": n} for week, n in self.turns_per_week]
        return record


def _week(moment: datetime) -> str:
    year, week, _ = moment.isocalendar()
    return f"{year}-W{week:02d}"


def collect(kernel: MemoryKernel, now: datetime) -> MemoryStats:
    """Statistics of everything ``kernel`` holds, weeks counted back from ``now``."""
    turns = kernel.store.where(None)
    local_now = now.astimezone(kernel.zone)
    per_week = Counter(_week(t.timestamp.astimezone(kernel.zone)) for t in turns)
    weeks = []
    for back in range(_WEEKS - 1, -1, -1):
        label = _week(local_now - timedelta(weeks=back))
        weeks.append((label, per_week.get(label, 0)))
    accessed = [t for t in turns if t.access_count]
    recent = sorted((t for t in accessed if t.last_accessed_at), key=lambda t: t.last_accessed_at or now, reverse=True)
    top = sorted(accessed, key=lambda t: (t.access_count, t.timestamp), reverse=True)
    return MemoryStats(
        total_turns=len(turns),
        total_sessions=len({t.session_id for t in turns}),
        total_accesses=sum(t.access_count for t in turns),
        turns_per_week=tuple(weeks),
        recent_accesses=tuple(TurnSummary.of(t) for t in recent[:_TOP]),
        top_accessed=tuple(TurnSummary.of(t) for t in top[:_TOP]),
    )

"""Statistics of the whole memory: what the seed's dashboard shows, for the terminal, scripts and the web.

``collect(kernel, now)`` reads the index once (lifecycle state of every turn, plus the text
for languages) and returns a frozen ``MemoryStats``; ``to_record()`` is its JSON form, used
unchanged by ``huichat stats --json`` and ``GET /v1/memory/stats``. Field names are a contract:

| field | meaning |
|---|---|
| ``total_turns``, ``total_sessions`` | stored turns and sessions |
| ``tiers`` | turns per tier: ``{"working": n, "long_term": n, "archive": n}`` |
| ``sessions_per_tier`` | sessions with at least one turn in each tier |
| ``avg_importance`` | mean importance of the scored turns (0 when none) |
| ``total_accesses`` | sum of every turn's ``access_count`` |
| ``importance_histogram`` | turns per importance decile: 10 counts for [0, 0.1) … [0.9, 1.0] |
| ``top_important`` | the most important turns (``MemoryItem``) |
| ``recent_accesses`` | the most recently retrieved turns (``MemoryItem``) |
| ``top_accessed`` | the most often retrieved turns (``MemoryItem``) |
| ``turns_per_week`` | ``[{"week": "2026-W48", "turns": n}, …]`` from the first week to the last, gaps as 0 |
| ``languages`` | turns by script: ``zh`` (Chinese), ``en`` (Latin script), ``mixed``, ``other`` |
| ``disk_bytes`` | index plus transcripts and archives on disk (the index counts 0 on object storage) |
| ``clusters``, ``clustered_turns`` | consolidation clusters, and the turns shown through a representative |
| ``generated_at`` | the ``now`` it was collected for |
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any

from huichat.memory.turns import ROLE_MEMBER, ROLE_REPRESENTATIVE, TIERS

if TYPE_CHECKING:
    from huichat.memory.kernel import MemoryKernel
    from huichat.memory.results import TurnState

TOP = 10
_BINS = 10
_CJK = re.compile(r"[\u3400-\u9fff\uf900-\ufaff]")
_LATIN = re.compile(r"[A-Za-z]")
_SNIPPET = 120
_SPEAKER = re.compile(r"^[^:\n]{1,40}: ", re.MULTILINE)


@dataclass(frozen=True)
class MemoryItem:
    """One turn as the statistics list it."""

    id: str
    timestamp: datetime
    tier: str
    importance: float | None
    access_count: int
    last_accessed_at: datetime | None
    snippet: str

    def to_record(self) -> dict[str, Any]:
        """Plain data (times in ISO 8601, UTC)."""
        return {
            "id": self.id,
            "timestamp": self.timestamp.isoformat(),
            "tier": self.tier,
            "importance": self.importance,
            "access_count": self.access_count,
            "last_accessed_at": self.last_accessed_at.isoformat() if self.last_accessed_at else None,
            "snippet": self.snippet,
        }


@dataclass(frozen=True)
class MemoryStats:
    """The state of the whole memory at one moment (see the module's table)."""

    total_turns: int
    total_sessions: int
    tiers: dict[str, int]
    sessions_per_tier: dict[str, int]
    avg_importance: float
    total_accesses: int
    importance_histogram: tuple[int, ...]
    top_important: tuple[MemoryItem, ...]
    recent_accesses: tuple[MemoryItem, ...]
    top_accessed: tuple[MemoryItem, ...]
    turns_per_week: tuple[tuple[str, int], ...]
    languages: dict[str, int]
    disk_bytes: int
    clusters: int
    clustered_turns: int
    generated_at: datetime

    @property
    def disk_size(self) -> str:
        """``disk_bytes`` for people, in decimal units as disks are sold: ``12.3 MB``."""
        count = float(self.disk_bytes)
        for unit in ("B", "kB", "MB", "GB"):
            if count < 1000:
                return f"{count:.0f} {unit}" if unit == "B" else f"{count:.1f} {unit}"
            count /= 1000
        return f"{count:.1f} TB"

    def to_record(self) -> dict[str, Any]:
        """The statistics as JSON-able data, under the field names of the contract."""
        return {
            "total_turns": self.total_turns,
            "total_sessions": self.total_sessions,
            "tiers": dict(self.tiers),
            "sessions_per_tier": dict(self.sessions_per_tier),
            "avg_importance": self.avg_importance,
            "total_accesses": self.total_accesses,
            "importance_histogram": list(self.importance_histogram),
            "top_important": [i.to_record() for i in self.top_important],
            "recent_accesses": [i.to_record() for i in self.recent_accesses],
            "top_accessed": [i.to_record() for i in self.top_accessed],
            "turns_per_week": [{"week": w, "turns": n} for w, n in self.turns_per_week],
            "languages": dict(self.languages),
            "disk_bytes": self.disk_bytes,
            "clusters": self.clusters,
            "clustered_turns": self.clustered_turns,
            "generated_at": self.generated_at.isoformat(),
        }


def language(text: str) -> str:
    """``zh``, ``en`` (Latin script), ``mixed`` or ``other`` — by the letters a turn is written in.

    ``text`` is a turn's searchable text; the ``speaker:`` at the start of each line is not counted.
    """
    text = _SPEAKER.sub("", text)
    cjk = len(_CJK.findall(text))
    latin = len(_LATIN.findall(text))
    # a Chinese character carries about as much as a short Latin word
    weight_cjk, weight_latin = cjk * 3, latin
    total = weight_cjk + weight_latin
    if total == 0:
        return "other"
    if weight_cjk >= 0.8 * total:
        return "zh"
    if weight_latin >= 0.8 * total:
        return "en"
    return "mixed"


def _week(day: date) -> str:
    iso = day.isocalendar()
    return f"{iso.year}-W{iso.week:02d}"


def _weeks(days: list[date]) -> tuple[tuple[str, int], ...]:
    if not days:
        return ()
    counted = Counter(_week(d) for d in days)
    first = min(days)
    monday = first - timedelta(days=first.weekday())
    weeks = []
    while monday <= max(days):
        label = _week(monday)
        weeks.append((label, counted.get(label, 0)))
        monday += timedelta(days=7)
    return tuple(weeks)


def _folder_bytes(root: Path) -> int:
    if not root.exists():
        return 0
    return sum(f.stat().st_size for f in root.rglob("*") if f.is_file())


def collect(kernel: MemoryKernel, now: datetime) -> MemoryStats:
    """Statistics of everything ``kernel`` holds, as of ``now``."""
    kernel.flush_access()
    states = kernel.store.states()
    tiers = dict.fromkeys(TIERS, 0)
    sessions: dict[str, set[str]] = {tier: set() for tier in TIERS}
    histogram = [0] * _BINS
    scored: list[float] = []
    for state in states:
        tiers[state.tier] = tiers.get(state.tier, 0) + 1
        sessions.setdefault(state.tier, set()).add(state.session_id)
        if state.importance is not None:
            scored.append(state.importance)
            histogram[min(_BINS - 1, int(state.importance * _BINS))] += 1
    top = sorted((s for s in states if s.importance is not None), key=lambda s: -(s.importance or 0.0))[:TOP]
    recent = sorted((s for s in states if s.last_accessed_at is not None), key=lambda s: s.last_accessed_at or now)
    recent = recent[::-1][:TOP]
    used = sorted((s for s in states if s.access_count), key=lambda s: (-s.access_count, s.id))[:TOP]
    turns = kernel.store.get({s.id for s in (*top, *recent, *used)})

    def item(state: TurnState) -> MemoryItem:
        # the lifecycle facts as the lists were ranked by (the state), the text from the turn
        snippet = " ".join(turns[state.id].text.split())
        return MemoryItem(
            state.id,
            state.timestamp,
            state.tier,
            state.importance,
            state.access_count,
            state.last_accessed_at,
            snippet if len(snippet) <= _SNIPPET else snippet[: _SNIPPET - 1] + "…",
        )

    zone = kernel.zone
    clustered = [s for s in states if s.cluster_role in (ROLE_REPRESENTATIVE, ROLE_MEMBER)]
    return MemoryStats(
        total_turns=len(states),
        total_sessions=len({s.session_id for s in states}),
        tiers=tiers,
        sessions_per_tier={tier: len(ids) for tier, ids in sessions.items()},
        avg_importance=round(sum(scored) / len(scored), 4) if scored else 0.0,
        total_accesses=sum(s.access_count for s in states),
        importance_histogram=tuple(histogram),
        top_important=tuple(item(s) for s in top if s.id in turns),
        recent_accesses=tuple(item(s) for s in recent if s.id in turns),
        top_accessed=tuple(item(s) for s in used if s.id in turns),
        turns_per_week=_weeks([s.timestamp.astimezone(zone).date() for s in states]),
        languages=dict(Counter(language(text) for text in kernel.store.texts().values())),
        disk_bytes=kernel.store.disk_bytes() + _folder_bytes(kernel.sessions_dir),
        clusters=len({s.cluster_id for s in clustered}),
        clustered_turns=sum(1 for s in clustered if s.cluster_role == ROLE_MEMBER),
        generated_at=now,
    )

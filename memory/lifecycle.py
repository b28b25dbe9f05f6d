"""The daily lifecycle job: importance brought up to date, then turns moved between the seed's tiers.

Rules (the seed's, configurable under ``lifecycle:``; first match wins):

- working, retrieved ``promotion_access_count`` times or more → long_term
- working or archive, importance ≥ ``long_term_threshold`` → long_term
- working, older than ``working_memory_days`` → archive (it was not important: the rule above
  would have promoted it)
- long_term, older than ``archive_after_days``, not retrieved for as long, and importance
  below ``archive_threshold`` → archive (promoted at 0.6, archived only under 0.3: a turn
  does not flip between tiers as its score wobbles)

New turns start in working memory: a turn's worth shows in how it is used, which takes time.
A tier only ranks and groups; nothing is deleted, and transcripts are never touched. The job
is idempotent (a second run at the same time moves nothing) and crash-safe (see
``memory.joblog``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any

import numpy as np
from croniter import croniter

from huichat.memory import importance
from huichat.memory.config import ConsolidationConfig, LifecycleConfig
from huichat.memory.joblog import JobLog
from huichat.memory.results import TurnState
from huichat.memory.turns import TIER_ARCHIVE, TIER_LONG_TERM, TIER_WORKING, ImportanceParts

if TYPE_CHECKING:
    from datetime import tzinfo

    from huichat.memory.consolidation import ConsolidationReport
    from huichat.memory.kernel import MemoryKernel

JOB = "lifecycle"
_SCORE_BATCH = 256
_EPSILON = 5e-4
"""Importance changes smaller than this are not written (they change no rank or tier)."""


@dataclass(frozen=True)
class Move:
    """One turn changing tier, and why."""

    turn_id: str
    source: str
    target: str
    reason: str

    def to_record(self) -> dict[str, str]:
        """The move as plain data (the log and ``--json``)."""
        return {"id": self.turn_id, "from": self.source, "to": self.target, "reason": self.reason}


@dataclass(frozen=True)
class LifecycleReport:
    """What one run of the lifecycle job did (or, dry, would do)."""

    run: str
    """This run's id (in the lifecycle log)."""
    dry_run: bool
    scored: int
    """Turns whose importance was scored."""
    moves: tuple[Move, ...]
    resumed: str = ""
    """The interrupted run this one completed, if any."""
    skipped: str = ""
    """Why nothing ran ('' when it ran)."""

    def counts(self) -> dict[str, int]:
        """Moves per ``source→target``."""
        counted: dict[str, int] = {}
        for move in self.moves:
            key = f"{move.source}→{move.target}"
            counted[key] = counted.get(key, 0) + 1
        return counted


def _days(span: timedelta) -> float:
    return span.total_seconds() / 86400


def next_tier(state: TurnState, now: datetime, config: LifecycleConfig) -> tuple[str, str] | None:
    """The tier ``state`` should move to now and why, or None to stay."""
    score = state.importance
    important = score is not None and score >= config.long_term_threshold
    age = _days(now - state.timestamp)
    if state.tier == TIER_WORKING and state.access_count >= config.promotion_access_count:
        return TIER_LONG_TERM, f"retrieved {state.access_count} times (≥ {config.promotion_access_count})"
    if state.tier in (TIER_WORKING, TIER_ARCHIVE) and important:
        return TIER_LONG_TERM, f"importance {score:.2f} ≥ {config.long_term_threshold}"
    if state.tier == TIER_WORKING and age > config.working_memory_days:
        shown = "unscored" if score is None else f"importance {score:.2f}"
        return TIER_ARCHIVE, f"older than {config.working_memory_days} days, {shown}"
    if state.tier == TIER_LONG_TERM and age > config.archive_after_days:
        idle = state.last_accessed_at is None or _days(now - state.last_accessed_at) > config.archive_after_days
        if idle and (score is None or score < config.archive_threshold):
            shown = "unscored" if score is None else f"importance {score:.2f} < {config.archive_threshold}"
            return TIER_ARCHIVE, f"older than {config.archive_after_days} days, not retrieved since, {shown}"
    return None


def plan_moves(states: Sequence[TurnState], now: datetime, config: LifecycleConfig) -> list[Move]:
    """Every move the rules make at ``now`` (pure: nothing is written)."""
    moves = []
    for state in states:
        decided = next_tier(state, now, config)
        if decided is not None and decided[0] != state.tier:
            moves.append(Move(state.id, state.tier, decided[0], decided[1]))
    return moves


def _rescore(kernel: MemoryKernel, states: list[TurnState], now: datetime) -> dict[str, tuple[float, ImportanceParts]]:
    """New importance for every turn whose score changed; turns never scored are scored in full."""
    weights = kernel.lifecycle.importance.weights
    changed: dict[str, tuple[float, ImportanceParts]] = {}
    unscored = []
    for state in states:
        if state.importance_parts is None:
            unscored.append(state.id)
            continue
        parts = importance.rescored(state.importance_parts, state.access_count, state.last_accessed_at, now)
        if parts.novelty is None and state.embedded:
            unscored.append(state.id)
            continue
        score = importance.score(parts, weights)
        if state.importance is None or abs(score - state.importance) >= _EPSILON:
            changed[state.id] = (score, parts)
    for start in range(0, len(unscored), _SCORE_BATCH):
        ids = unscored[start : start + _SCORE_BATCH]
        turns = list(kernel.store.get(ids).values())
        vectors = kernel.store.vectors(t.id for t in turns)
        embedded = [t for t in turns if t.id in vectors]
        nearest: dict[str, float | None] = {}
        if embedded:
            stacked = np.stack([vectors[t.id] for t in embedded])
            nearest = dict(
                zip([t.id for t in embedded], kernel.indexer.nearest_similarity(embedded, stacked), strict=True)
            )
        for turn in turns:
            parts = importance.parts_for(
                turn.text, turn.access_count, turn.last_accessed_at, now, importance.novelty(nearest.get(turn.id))
            )
            changed[turn.id] = (importance.score(parts, weights), parts)
    return changed


def run_lifecycle(kernel: MemoryKernel, now: datetime, log: JobLog, *, dry_run: bool = False) -> LifecycleReport:
    """Score, then move turns between tiers; every move is logged before it is made."""
    config = kernel.lifecycle
    run = JobLog.new_run_id(now)
    with log.exclusive() as alone:
        if not alone:
            return LifecycleReport(run, dry_run, 0, (), skipped="another lifecycle job is running")
        kernel.flush_access()
        resumed = "" if dry_run else _resume(kernel, log, run, now)
        states = kernel.store.states()
        if not dry_run:
            log.append({"event": "start", "job": JOB, "run": run, "at": now.isoformat()})
        scores: dict[str, tuple[float, ImportanceParts]] = {}
        if config.importance.enabled:
            scores = _rescore(kernel, states, now)
            if scores and not dry_run:
                ids = list(scores)
                kernel.update_turns(
                    ids,
                    {"importance": [scores[i][0] for i in ids], "importance_parts": [scores[i][1] for i in ids]},
                )
            states = [
                replace(s, importance=scores[s.id][0], importance_parts=scores[s.id][1]) if s.id in scores else s
                for s in states
            ]
        moves = plan_moves(states, now, config) if config.enabled else []
        if not dry_run:
            at = now.isoformat()
            log.append(*({"event": "move", "job": JOB, "run": run, "at": at, **m.to_record()} for m in moves))
            kernel.update_turns([m.turn_id for m in moves], {"tier": [m.target for m in moves]})
            log.append({"event": "applied", "job": JOB, "run": run, "at": at})
            log.append({"event": "end", "job": JOB, "run": run, "at": at, "scored": len(scores), "moved": len(moves)})
        return LifecycleReport(run, dry_run, len(scores), tuple(moves), resumed)


def _resume(kernel: MemoryKernel, log: JobLog, run: str, now: datetime) -> str:
    """Close an interrupted run: record which of its planned moves reached the index."""
    interrupted = log.interrupted(JOB)
    if interrupted is None:
        return ""
    planned = [r for r in interrupted.records if r.get("event") == "move"]
    current = {s.id: s.tier for s in kernel.store.states()} if planned else {}
    applied = [r["id"] for r in planned if current.get(r["id"]) == r["to"]]
    log.append(
        {
            "event": "resumed",
            "job": JOB,
            "run": run,
            "of": interrupted.run,
            "at": now.isoformat(),
            "planned": len(planned),
            "applied": applied,
        }
    )
    return interrupted.run


def due(schedule: str, last_run: datetime | None, now: datetime, zone: tzinfo) -> bool:
    """True when a scheduled time (cron, local) passed since ``last_run`` (never run: due)."""
    if last_run is None:
        return True
    previous: datetime = croniter(schedule, now.astimezone(zone)).get_prev(datetime)
    return previous > last_run


def moves_in_log(log: JobLog, limit: int | None = None) -> list[dict[str, Any]]:
    """The logged moves, clusters, releases, runs and undos, newest last (``huichat lifecycle log``)."""
    shown = [
        r for r in log.records() if r.get("event") in {"start", "move", "cluster", "release", "undo", "resumed", "end"}
    ]
    return shown[-limit:] if limit else shown


def run_scheduled(
    kernel: MemoryKernel,
    now: datetime,
    consolidation: ConsolidationConfig,
    log: JobLog,
    *,
    force: bool = False,
) -> tuple[LifecycleReport | None, ConsolidationReport | None]:
    """Run each daily job whose scheduled time passed since its last run (all of them with ``force``).

    A job whose last run was interrupted is always due: the run completes it.
    """
    from huichat.memory.consolidation import JOB as CONSOLIDATION
    from huichat.memory.consolidation import run_consolidation

    config = kernel.lifecycle
    zone = kernel.zone

    def wanted(job: str, schedule: str) -> bool:
        return force or log.interrupted(job) is not None or due(schedule, log.last_finished(job), now, zone)

    active = config.enabled or config.importance.enabled
    scored = run_lifecycle(kernel, now, log) if active and wanted(JOB, config.schedule) else None
    grouped = None
    if consolidation.enabled and wanted(CONSOLIDATION, consolidation.schedule):
        grouped = run_consolidation(kernel, now, consolidation, log)
    return scored, grouped

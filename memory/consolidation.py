"""Consolidation without loss: near-duplicate turns grouped behind one representative.

Turns at least ``similarity_threshold`` alike and at most
``time_window_days`` from the most important of them form a cluster once there are
``min_cluster_size`` of them. Search then shows the representative once, with "+N similar"
naming the others; every member keeps its text, transcript, anchors and id, and ``undo``
takes a cluster apart (its turns are left alone from then on). Nothing is merged into
anything: only the ``cluster_id``/``cluster_role`` columns of the index change.

"Alike" is ``duplicates.near_duplicates``: the turns' own words at least that alike as a whole
(the first sieve, cheap enough for every pair in a window), then what was said and the reply
each compared by the sentences that differ.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING

import numpy as np
import numpy.typing as npt

from huichat.memory.config import ConsolidationConfig
from huichat.memory.duplicates import near_duplicates, word_vectors
from huichat.memory.errors import KernelError
from huichat.memory.filters import Compare, In, combine
from huichat.memory.joblog import JobLog
from huichat.memory.results import TurnState
from huichat.memory.turns import (
    ROLE_MEMBER,
    ROLE_REPRESENTATIVE,
    ROLE_SEPARATE,
    STATUS_OK,
    Message,
    Turn,
    new_turn_id,
    plain_text,
)

if TYPE_CHECKING:
    from huichat.memory.kernel import MemoryKernel

JOB = "consolidation"
_BLOCK = 1024
"""Turns compared at once with everything in their time window (bounds memory)."""


@dataclass(frozen=True)
class Cluster:
    """A representative and the near-duplicates it stands for (``fresh``: a new cluster, else one that grew)."""

    cluster_id: str
    representative: str
    members: tuple[str, ...]
    fresh: bool = True

    def to_record(self) -> dict[str, object]:
        """The cluster as plain data (the log and ``--json``)."""
        return {
            "cluster": self.cluster_id,
            "representative": self.representative,
            "members": list(self.members),
            "new": self.fresh,
        }


@dataclass(frozen=True)
class ConsolidationReport:
    """What one consolidation run grouped (or, dry, would group)."""

    run: str
    dry_run: bool
    clusters: tuple[Cluster, ...]
    resumed: str = ""
    skipped: str = ""

    @property
    def grouped(self) -> int:
        """Turns that now stand behind a representative."""
        return sum(len(c.members) for c in self.clusters)


def _pairs(
    stamps: npt.NDArray[np.float64], unit: npt.NDArray[np.float32], threshold: float, window: float
) -> list[list[int]]:
    """For each turn (in time order), the earlier and later turns alike enough (cosine of the
    ``unit`` vectors, row for row) and close enough in time."""
    neighbours: list[list[int]] = [[] for _ in range(len(stamps))]
    for start in range(0, len(stamps), _BLOCK):
        stop = min(len(stamps), start + _BLOCK)
        low = int(np.searchsorted(stamps, stamps[start] - window, side="left"))
        similar = unit[start:stop] @ unit[low:stop].T
        close = np.abs(stamps[start:stop, None] - stamps[None, low:stop]) <= window
        earlier = np.arange(start, stop)[:, None] > np.arange(low, stop)[None, :]
        rows, cols = np.nonzero((similar >= threshold) & close & earlier)
        for i, j in zip((rows + start).tolist(), (cols + low).tolist(), strict=True):
            neighbours[i].append(j)
            neighbours[j].append(i)
    return neighbours


def find_clusters(
    states: Sequence[TurnState], messages: Sequence[Sequence[Message]], config: ConsolidationConfig
) -> list[Cluster]:
    """Clusters among ``states`` (with their own ``messages``, row for row); pure, nothing is written.

    Star clustering: the most important turn not yet placed gathers its unplaced
    near-duplicates; existing representatives go first and may gain members.
    """
    if not len(states):
        return []
    order = sorted(range(len(states)), key=lambda i: states[i].timestamp)
    ordered = [states[i] for i in order]
    said = [messages[i] for i in order]
    words = word_vectors([plain_text(m) for m in said])
    stamps = np.array([s.timestamp.timestamp() for s in ordered], dtype=np.float64)
    threshold = config.similarity_threshold
    alike = _pairs(stamps, words, threshold, config.time_window_days * 86400.0)
    # the cosine of whole turns is only the first sieve: shared boilerplate lifts it (``near_duplicates``)
    repeats = {
        (i, j) for i, near in enumerate(alike) for j in near if i < j and near_duplicates(said[i], said[j], threshold)
    }
    neighbours = [[j for j in near if (min(i, j), max(i, j)) in repeats] for i, near in enumerate(alike)]
    seeds = sorted(
        range(len(ordered)),
        key=lambda i: (ordered[i].cluster_role != ROLE_REPRESENTATIVE, -(ordered[i].importance or 0.0), stamps[i]),
    )
    placed: set[int] = set()
    clusters: list[Cluster] = []
    for seed in seeds:
        if seed in placed or not neighbours[seed]:
            continue
        existing = ordered[seed].cluster_role == ROLE_REPRESENTATIVE
        group = sorted(
            {j for j in neighbours[seed] if j not in placed and ordered[j].cluster_role != ROLE_REPRESENTATIVE}
        )
        if existing and group:
            clusters.append(
                Cluster(ordered[seed].cluster_id, ordered[seed].id, tuple(ordered[j].id for j in group), False)
            )
        elif not existing and len(group) + 1 >= config.min_cluster_size:
            clusters.append(Cluster("c" + new_turn_id(), ordered[seed].id, tuple(ordered[j].id for j in group)))
        else:
            continue
        placed.add(seed)
        placed.update(group)
    return clusters


def run_consolidation(
    kernel: MemoryKernel, now: datetime, config: ConsolidationConfig, log: JobLog, *, dry_run: bool = False
) -> ConsolidationReport:
    """Find clusters among turns not yet grouped and group them (logged before the index changes)."""
    run = JobLog.new_run_id(now)
    with log.exclusive() as alone:
        if not alone:
            return ConsolidationReport(run, dry_run, (), skipped="another lifecycle job is running")
        resumed = "" if dry_run else _resume(kernel, log, run, now)
        where = combine(Compare("status", "=", STATUS_OK), In("cluster_role", ("", ROLE_REPRESENTATIVE)))
        states = kernel.store.states(where)
        turns = {t.id: t for t in kernel.store.where(where)}
        clusters = find_clusters(states, [turns[s.id].messages if s.id in turns else () for s in states], config)
        if not dry_run:
            at = now.isoformat()
            log.append(
                {"event": "start", "job": JOB, "run": run, "at": at},
                *({"event": "cluster", "job": JOB, "run": run, "at": at, **c.to_record()} for c in clusters),
            )
            _apply(kernel, clusters)
            log.append(
                {"event": "applied", "job": JOB, "run": run, "at": at},
                {"event": "end", "job": JOB, "run": run, "at": at, "clusters": len(clusters)},
            )
        return ConsolidationReport(run, dry_run, tuple(clusters), resumed)


def _apply(kernel: MemoryKernel, clusters: Sequence[Cluster]) -> None:
    ids: list[str] = []
    cluster_ids: list[str] = []
    roles: list[str] = []
    for cluster in clusters:
        for turn_id in (cluster.representative, *cluster.members):
            ids.append(turn_id)
            cluster_ids.append(cluster.cluster_id)
            roles.append(ROLE_REPRESENTATIVE if turn_id == cluster.representative else ROLE_MEMBER)
    kernel.update_turns(ids, {"cluster_id": cluster_ids, "cluster_role": roles})


def _resume(kernel: MemoryKernel, log: JobLog, run: str, now: datetime) -> str:
    """Close an interrupted run: record which of its planned clusters reached the index."""
    interrupted = log.interrupted(JOB)
    if interrupted is None:
        return ""
    planned = [r for r in interrupted.records if r.get("event") == "cluster"]
    reps = kernel.store.get(str(r["representative"]) for r in planned)
    applied = [
        str(r["cluster"]) for r in planned if (t := reps.get(str(r["representative"]))) and t.cluster_id == r["cluster"]
    ]
    log.append(
        {"event": "resumed", "job": JOB, "run": run, "of": interrupted.run, "at": now.isoformat(), "applied": applied}
    )
    return interrupted.run


def cluster_turns(kernel: MemoryKernel, cluster_id: str) -> list[Turn]:
    """The turns of one cluster, representative first, then in time order."""
    turns = kernel.store.where(Compare("cluster_id", "=", cluster_id))
    return sorted(turns, key=lambda t: (t.cluster_role != ROLE_REPRESENTATIVE, t.timestamp))


def undo(kernel: MemoryKernel, cluster_id: str, now: datetime, log: JobLog) -> list[Turn]:
    """Take a cluster apart: its turns are shown on their own again and never regrouped."""
    turns = cluster_turns(kernel, cluster_id.strip())
    if not turns:
        raise KernelError(f"no cluster '{cluster_id.strip()[:20]}' (see `huichat consolidate --list`)")
    ids = [t.id for t in turns]
    log.append(
        {
            "event": "undo",
            "job": JOB,
            "run": JobLog.new_run_id(now),
            "at": now.isoformat(),
            "cluster": cluster_id,
            "members": ids,
        }
    )
    kernel.update_turns(ids, {"cluster_id": [""] * len(ids), "cluster_role": [ROLE_SEPARATE] * len(ids)})
    return turns


def clusters_of(kernel: MemoryKernel) -> dict[str, list[TurnState]]:
    """Every cluster's turns by cluster id (representative first)."""
    grouped: dict[str, list[TurnState]] = {}
    for state in kernel.store.states(In("cluster_role", (ROLE_REPRESENTATIVE, ROLE_MEMBER))):
        grouped.setdefault(state.cluster_id, []).append(state)
    for members in grouped.values():
        members.sort(key=lambda s: (s.cluster_role != ROLE_REPRESENTATIVE, s.timestamp))
    return grouped

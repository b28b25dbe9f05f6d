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

Each run first re-checks the clusters already made, since the rule has grown stricter than the
one that made some of them: a member that is no near-duplicate of its representative under the
current rule is released (shown on its own again, as ``undo`` leaves it, and never regrouped), and
a cluster left with fewer turns than ``min_cluster_size`` is dissolved: its turns are ungrouped,
as consolidation leaves turns too few to group, and may group again with later repeats. Releases
are logged with the run's clusters, before the index changes.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
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
class Release:
    """Members of a cluster that no longer count as near-duplicates of its representative (``ungrouped``:
    the representative and the members kept, when too few are kept for a cluster)."""

    cluster_id: str
    representative: str
    members: tuple[str, ...]
    ungrouped: tuple[str, ...] = ()

    def to_record(self) -> dict[str, object]:
        """The release as plain data (the log and ``--json``)."""
        return {
            "cluster": self.cluster_id,
            "representative": self.representative,
            "members": list(self.members),
            "ungrouped": list(self.ungrouped),
        }


@dataclass(frozen=True)
class ConsolidationReport:
    """What one consolidation run grouped and released (or, dry, would)."""

    run: str
    dry_run: bool
    clusters: tuple[Cluster, ...]
    resumed: str = ""
    skipped: str = ""
    releases: tuple[Release, ...] = ()

    @property
    def grouped(self) -> int:
        """Turns that now stand behind a representative."""
        return sum(len(c.members) for c in self.clusters)

    @property
    def released(self) -> int:
        """Members shown on their own again: they no longer count as near-duplicates."""
        return sum(len(r.members) for r in self.releases)


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


def find_releases(grouped: Sequence[Turn], config: ConsolidationConfig) -> list[Release]:
    """The members among ``grouped`` (the turns of clusters) that are no near-duplicates of their
    representative under the current rule; pure, nothing is written. A cluster without its
    representative among them is left as it is."""
    clusters: dict[str, list[Turn]] = {}
    for turn in grouped:
        clusters.setdefault(turn.cluster_id, []).append(turn)
    releases = []
    for cluster_id, turns in clusters.items():
        representative = next((t for t in turns if t.cluster_role == ROLE_REPRESENTATIVE), None)
        if representative is None:
            continue
        members = [t for t in turns if t.cluster_role == ROLE_MEMBER]
        threshold = config.similarity_threshold
        released = [t.id for t in members if not near_duplicates(representative.messages, t.messages, threshold)]
        if not released:
            continue
        kept = [t.id for t in members if t.id not in released]
        too_few = len(kept) + 1 < config.min_cluster_size
        releases.append(
            Release(cluster_id, representative.id, tuple(released), (representative.id, *kept) if too_few else ())
        )
    return releases


def run_consolidation(
    kernel: MemoryKernel, now: datetime, config: ConsolidationConfig, log: JobLog, *, dry_run: bool = False
) -> ConsolidationReport:
    """Release the members of existing clusters that are no longer near-duplicates, then find clusters
    among turns not grouped and group them (all logged before the index changes, in one commit)."""
    run = JobLog.new_run_id(now)
    with log.exclusive() as alone:
        if not alone:
            return ConsolidationReport(run, dry_run, (), skipped="another lifecycle job is running")
        resumed = "" if dry_run else _resume(kernel, log, run, now)
        grouped = kernel.store.where(In("cluster_role", (ROLE_REPRESENTATIVE, ROLE_MEMBER)))
        releases = find_releases(grouped, config)
        ungrouped = {turn_id for r in releases for turn_id in r.ungrouped}
        # the turns of a dissolved cluster are read as the ungrouped turns they are about to be
        where = combine(Compare("status", "=", STATUS_OK), In("cluster_role", ("", ROLE_REPRESENTATIVE, ROLE_MEMBER)))
        states = [
            replace(s, cluster_id="", cluster_role="") if s.id in ungrouped else s
            for s in kernel.store.states(where)
            if s.cluster_role != ROLE_MEMBER or s.id in ungrouped
        ]
        unplaced = combine(Compare("status", "=", STATUS_OK), Compare("cluster_role", "=", ""))
        messages = {t.id: t.messages for t in grouped} | kernel.store.messages(unplaced)
        clusters = find_clusters(states, [messages.get(s.id, ()) for s in states], config)
        if not dry_run:
            at = now.isoformat()
            log.append(
                {"event": "start", "job": JOB, "run": run, "at": at},
                *({"event": "release", "job": JOB, "run": run, "at": at, **r.to_record()} for r in releases),
                *({"event": "cluster", "job": JOB, "run": run, "at": at, **c.to_record()} for c in clusters),
            )
            _apply(kernel, releases, clusters)
            log.append(
                {"event": "applied", "job": JOB, "run": run, "at": at},
                {"event": "end", "job": JOB, "run": run, "at": at, "clusters": len(clusters)},
            )
        return ConsolidationReport(run, dry_run, tuple(clusters), resumed, releases=tuple(releases))


def _apply(kernel: MemoryKernel, releases: Sequence[Release], clusters: Sequence[Cluster]) -> None:
    placed: dict[str, tuple[str, str]] = {}
    for release in releases:
        placed.update(dict.fromkeys(release.members, ("", ROLE_SEPARATE)))
        placed.update(dict.fromkeys(release.ungrouped, ("", "")))
    for cluster in clusters:  # a dissolved cluster's turns may group again in the same run
        placed[cluster.representative] = (cluster.cluster_id, ROLE_REPRESENTATIVE)
        placed.update(dict.fromkeys(cluster.members, (cluster.cluster_id, ROLE_MEMBER)))
    ids = list(placed)
    kernel.update_turns(ids, {"cluster_id": [placed[i][0] for i in ids], "cluster_role": [placed[i][1] for i in ids]})


def _resume(kernel: MemoryKernel, log: JobLog, run: str, now: datetime) -> str:
    """Close an interrupted run: record which of its planned clusters and releases reached the index."""
    interrupted = log.interrupted(JOB)
    if interrupted is None:
        return ""
    planned = [r for r in interrupted.records if r.get("event") == "cluster"]
    releases = [r for r in interrupted.records if r.get("event") == "release"]
    turns = kernel.store.get(
        [str(r["representative"]) for r in planned] + [str(i) for r in releases for i in r.get("members", [])]
    )
    applied = [
        str(r["cluster"])
        for r in planned
        if (t := turns.get(str(r["representative"]))) and t.cluster_id == r["cluster"]
    ]
    released = [
        str(r["cluster"])
        for r in releases
        if all((t := turns.get(str(i))) is None or t.cluster_id != r["cluster"] for i in r.get("members", []))
    ]
    log.append(
        {
            "event": "resumed",
            "job": JOB,
            "run": run,
            "of": interrupted.run,
            "at": now.isoformat(),
            "applied": applied,
            "released": released,
        }
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

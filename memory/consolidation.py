"""Consolidation without loss: near-duplicate turns grouped behind one representative.

Turns at least ``similarity_threshold`` alike and at most
``time_window_days`` from the most important of them form a cluster once there are
``min_cluster_size`` of them. Search then shows the representative once, with "+N similar"
naming the others; every member keeps its text, transcript, anchors and id, and ``undo``
takes a cluster apart (its turns are left alone from then on). Nothing is merged into
anything: only the ``cluster_id``/``cluster_role`` columns of the index change.

"Alike" is the cosine of the turns' own words (hashed words and CJK bigrams). The stored
vectors are not used: each also carries the tail of the turn before it, so the same fact
said in two conversations rarely reaches 0.85, while a short "ok" reaches it with the long
turn it follows. Paraphrases are therefore not grouped; repeated wording is.

The whole turns' cosine is not enough: long answers recombined from the same advice reach
0.85 although the one sentence that holds their fact differs (an imported export grouped
answers about seven projects, and a search for one project's database found only the
others). So what was said and the reply are each compared by the parts that differ: the
sentences one holds and the other lacks must themselves be alike, and neither may bring a
number or a name the other lacks. A reply of one sentence each ("Noted." / "好的，记下了。")
may differ in anything but a number or a name: the same thing said again gets another
acknowledgement.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING

import numpy as np
import numpy.typing as npt

from huichat.memory.config import ConsolidationConfig
from huichat.memory.embedding import HashEmbedder
from huichat.memory.errors import KernelError
from huichat.memory.filters import Compare, In, combine
from huichat.memory.joblog import JobLog
from huichat.memory.results import TurnState
from huichat.memory.turns import (
    CORRECTION,
    ROLE_MEMBER,
    ROLE_REPRESENTATIVE,
    ROLE_SEPARATE,
    STATUS_OK,
    Message,
    Turn,
    new_turn_id,
    plain_text,
)
from huichat.memory.words import content_terms, names

if TYPE_CHECKING:
    from huichat.memory.kernel import MemoryKernel

JOB = "consolidation"
_BLOCK = 1024
"""Turns compared at once with everything in their time window (bounds memory)."""
_WORDS_DIM = 256
"""Size of the hashed bag of words and CJK bigrams that is compared."""
_SENTENCE_END = re.compile(r"(?<=[。！？!?；;])|(?<=\.)\s+|\n+")
_NUMBER = re.compile(r"\w*\d[\w:.\-/]*")


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


def _unit(vectors: npt.NDArray[np.float32]) -> npt.NDArray[np.float32]:
    norms = np.maximum(np.linalg.norm(vectors, axis=1, keepdims=True), 1e-12)
    return np.asarray(vectors / norms, dtype=np.float32)


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


def _sentences(text: str) -> set[str]:
    """The sentences of ``text``, each as compared (NFKC, case folded, spaces collapsed)."""
    normal = unicodedata.normalize("NFKC", text).casefold()
    return {" ".join(s.split()) for s in _SENTENCE_END.split(normal)} - {""}


def _brings_new(part: str, other: str) -> bool:
    """Whether ``part`` holds a number or a name (``words.names``) that ``other`` does not."""
    numbers = set(_NUMBER.findall(other.casefold()))
    return bool(set(_NUMBER.findall(part.casefold())) - numbers or names(part) - content_terms(other))


def _alike(one: str, other: str, threshold: float, *, acknowledgement: bool = False) -> bool:
    """Whether two texts say the same: the sentences each holds and the other lacks are at least
    ``threshold`` alike and bring no number or name of their own. With ``acknowledgement``, two
    texts of one sentence each need only the latter (a reply to the same thing said again)."""
    mine, theirs = _sentences(one), _sentences(other)
    own, their_own = sorted(mine - theirs), sorted(theirs - mine)
    if not own and not their_own:
        return True
    if _brings_new("\n".join(own), other) or _brings_new("\n".join(their_own), one):
        return False
    if acknowledgement and len(mine) <= 1 and len(theirs) <= 1:
        return True
    words = _unit(HashEmbedder(_WORDS_DIM).embed_passages(["\n".join(own), "\n".join(their_own)]))
    return float(words[0] @ words[1]) >= threshold


def _parts(messages: Sequence[Message]) -> tuple[str, str]:
    """What was said (the user's messages and later corrections) and the reply (the other chat messages)."""
    said = [m.text for m in messages if (m.is_chat and m.role == "user") or m.kind == CORRECTION]
    reply = [m.text for m in messages if m.is_chat and m.role != "user"]
    return "\n".join(said), "\n".join(reply)


def near_duplicates(one: Sequence[Message], other: Sequence[Message], threshold: float) -> bool:
    """Whether two turns alike as a whole (the cosine ``find_clusters`` first asks for) repeat each
    other: what was said alike, and the replies alike (``_alike``, by the parts that differ)."""
    (said, reply), (said_again, reply_again) = _parts(one), _parts(other)
    return _alike(said, said_again, threshold) and _alike(
        reply, reply_again, threshold, acknowledgement=bool(said and said_again)
    )


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
    words = _unit(HashEmbedder(_WORDS_DIM).embed_passages([plain_text(m) for m in said]))
    stamps = np.array([s.timestamp.timestamp() for s in ordered], dtype=np.float64)
    threshold = config.similarity_threshold
    alike = _pairs(stamps, words, threshold, config.time_window_days * 86400.0)
    # the cosine of whole turns is only the first sieve: shared boilerplate lifts it (``_alike``)
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

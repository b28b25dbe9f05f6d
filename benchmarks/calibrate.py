"""Refit the calibrated similarity (``memory.calibration``) and choose ``retriever.min_similarity``.

Input: one or more dumps of ``huichat bench abstain --data DIR --dump FILE`` (every search's top
10 candidates with their evidence: own questions with their gold turns, the other
conversations' questions, garbage) — LoCoMo-dev's English conversations and Chinese ones
(``benchmarks.zhgen``, ``benchmarks.zhhard``; asked with ``--foreign 0``: their other haystacks'
questions share templates and names, so they are answered by look-alikes and are no negatives). A logistic regression over
``memory.calibration.features`` tells the gold turns of the own questions from the
candidates of questions whose answer is not in memory (the other conversations' and
garbage), both classes weighed equally (so 0.5 reads "as likely a match as not"). The own
questions' other candidates are left out of the fit: LoCoMo marks only the few turns that
answer, and many others of the same conversation are on the topic asked about. The
threshold is the highest that keeps training recall@10 within ``--recall-loss`` of the
unthresholded figure in every dump on its own (so that the few Chinese questions are not
outvoted by the many English ones) — except the ``--paraphrase`` dumps (``benchmarks.zhhard``):
their gold turns join the fit, so that the weights see what a true match that shares no word
with its question looks like, but their recall does not set the threshold (it would have to let
garbage through: BENCHMARKS.md, "Names, and Chinese positives"). Leave-one-conversation-out: fit on all but one conversation, score
the one left out; the spread over folds says how well it holds on unseen data. Then the
final fit on everything is printed as code to paste into ``memory/calibration.py``::

    huichat bench abstain --data LOCOMO_DEV --dump dump.json   # LOCOMO_DEV: a LoCoMo-dev folder (see README)
    huichat bench abstain --data ZHGEN --foreign 0 --dump zh.json
    huichat bench abstain --data ZHHARD_TUNE --foreign 0 --dump hard.json
    python -m benchmarks.calibrate dump.json zh.json --paraphrase hard.json
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
from huichat.memory.words import has_cjk, names, names_share, words_share

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
    """A candidate's evidence; its word and name shares as ``memory.words`` gives them now when the
    dump kept the search's words and the candidate's text (the ranking does not depend on them: a
    dump taken before a change to the word evidence refits it without building the stores again)."""
    found = hit["evidence"]
    words, named, cjk = found.get("words", 0.0), found.get("names", 1.0), found.get("cjk", False)
    if "keywords" in search and "text" in hit:
        words = words_share(search["keywords"], hit["text"])
        named = names_share(names(search["keywords"]), hit["text"])
        cjk = has_cjk(hit["text"])
    return Evidence(
        found["cosine"],
        found["bm25"],
        found["background"],
        found["spread"],
        found.get("inherited", 0.0),
        words,
        cjk,
        named,
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
    a, b, c, d, e = (round(float(w), 4) for w in weights)
    return Calibration(weights=(a, b, c, d, e), intercept=round(intercept, 4))


def rescored(searches: list[dict[str, Any]], calibration: Calibration) -> list[dict[str, Any]]:
    """The searches with their similarities recomputed by ``calibration``."""
    out = []
    for search in searches:
        values = calibrated([_evidence(search, h) for h in search["hits"]], calibration)
        hits = [{**h, "similarity": v} for h, v in zip(search["hits"], values, strict=True)]
        out.append({**search, "hits": hits})
    return out


def choose_threshold(searches: list[dict[str, Any]], loss: float) -> float:
    """The highest threshold (0.01 steps) that keeps own recall@10 within ``loss`` of no threshold,
    in each dump (``source``) on its own; the searches of ``--paraphrase`` dumps do not count."""
    counted = {s["source"] for s in searches if not s["paraphrase"]}
    sources = [[s for s in searches if s["source"] == source] for source in sorted(counted)]
    full = [score(group, 0.0)["recall@10"] for group in sources]
    best = 0.0
    for step in range(1, 100):
        t = step / 100
        if all(score(g, t)["recall@10_thresholded"] >= f - loss for g, f in zip(sources, full, strict=True)):
            best = t
    return best


def load(paths: list[Path], paraphrase: bool = False) -> tuple[str, list[dict[str, Any]]]:
    """The embedder and the searches of the dumps whose every candidate has its evidence, each marked
    with its dump's name (``source``), its conversation with both (conversations are held out
    one at a time across all dumps) and whether its questions paraphrase (``--paraphrase``)."""
    embedders, searches = set(), []
    for path in paths:
        dump = json.loads(path.read_text(encoding="utf-8"))
        embedders.add(dump["embedder"])
        searches += [
            {**s, "source": path.stem, "conversation": f"{path.stem}/{s['conversation']}", "paraphrase": paraphrase}
            for s in dump["searches"]
            if all(h["evidence"] for h in s["hits"])
        ]
    if len(embedders) != 1:
        raise SystemExit(f"the dumps come from different embedders: {sorted(embedders)}")
    return embedders.pop(), searches


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.calibrate", description=__doc__.splitlines()[0])
    parser.add_argument("dumps", type=Path, nargs="+", help="files written by huichat bench abstain --dump")
    parser.add_argument(
        "--recall-loss", type=float, default=0.01, help="recall@10 the threshold may cost (default 0.01)"
    )
    parser.add_argument(
        "--paraphrase",
        type=Path,
        nargs="*",
        default=[],
        help="dumps fitted on whose recall does not set the threshold (questions in other words)",
    )
    parser.add_argument(
        "--score",
        type=Path,
        nargs="*",
        default=[],
        help="more dumps, not fitted on: scored with the final fit (e.g. a benchmark's own questions)",
    )
    parser.add_argument("--json", type=Path, default=None, help="write the folds' figures here")
    args = parser.parse_args(argv)
    embedder, searches = load(args.dumps)
    if args.paraphrase:
        searches += load(args.paraphrase, paraphrase=True)[1]
    folds = []
    for held_out in sorted({s["conversation"] for s in searches}):
        train = [s for s in searches if s["conversation"] != held_out]
        test = [s for s in searches if s["conversation"] == held_out]
        calibration = fit(train)
        threshold = choose_threshold(rescored(train, calibration), args.recall_loss)
        result = score(rescored(test, calibration), threshold)
        folds.append({"held_out": held_out, "source": test[0]["source"], "threshold": threshold, **result})
        print(f"{held_out}: threshold {threshold:.2f} · {_figures(result)}")
    for source in sorted({f["source"] for f in folds}):
        mine = [f for f in folds if f["source"] == source]
        means = {k: statistics.mean(f[k] for f in mine) for k in mine[0] if isinstance(mine[0][k], float)}
        losses = [f["recall@10"] - f["recall@10_thresholded"] for f in mine]
        print(f"{source}, {len(mine)} folds: mean {_figures(means)} · loss max {max(losses):.4f}")
    final = fit(searches)
    threshold = choose_threshold(rescored(searches, final), args.recall_loss)
    print(f"\nembedder: {embedder}")
    print(f"CALIBRATION = {final!r}")
    print(f"min_similarity: {threshold:.2f}")
    scored = {}
    for path in [*args.dumps, *args.paraphrase, *args.score]:
        _, own = load([path])
        scored[path.stem] = score(rescored(own, final), threshold)
        print(f"  {path.stem}{' (not fitted on)' if path in args.score else ''}: {_figures(scored[path.stem])}")
    if args.json is not None:
        report = {"folds": folds, "final": repr(final), "threshold": threshold, "scored": scored}
        args.json.write_text(json.dumps(report, indent=2))
    return 0


def _figures(result: dict[str, float]) -> str:
    return (
        f"abstain {result['abstain']:.3f} (foreign {result['abstain_foreign']:.3f}, "
        f"garbage {result['abstain_garbage']:.3f}) · recall@5 {result['recall@5']:.3f} → "
        f"{result['recall@5_thresholded']:.3f} · recall@10 {result['recall@10']:.3f} → "
        f"{result['recall@10_thresholded']:.3f}"
    )


if __name__ == "__main__":
    raise SystemExit(main())

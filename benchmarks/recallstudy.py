"""Offline study of ranking variants on a recall benchmark: one ingest, many rankings.

``python -m benchmarks.recallstudy --data DIR --vectors FILE [--variants a,b]`` ingests every
conversation once through the kernel's normal write path (vectors from the cache that
``huichat bench recall --vectors FILE`` filled: nothing is embedded twice), then asks every
question once per variant through the kernel's normal search, with the variant's ranking
switched on (``VARIANTS``: each a change to the retriever's fusion). Prints recall@5, recall@10,
all@10 per category for each variant, so that one change at a time is measured on the same stores.
Development only: a variant worth keeping moves into ``memory.retrieval`` and is measured
again with ``huichat bench recall``.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import re
import time
from collections import defaultdict
from collections.abc import Callable, Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

from benchmarks.common import bench_embedder, scratch_kernel
from benchmarks.recall import Score, ingest, moment, read_jsonl
from benchmarks.vectorcache import CachedEmbedder
from huichat.app.config import load_config
from huichat.app.wiring import resolve_zone
from huichat.memory.fusion import Fusion
from huichat.memory.kernel import MemoryKernel
from huichat.memory.results import SearchRequest

Variant = Callable[[MemoryKernel], None]
"""Switches a variant on for one kernel (the baseline changes nothing)."""


def _fusion(**changes: Any) -> Variant:
    def apply(kernel: MemoryKernel) -> None:
        kernel.retriever.fusion = replace(Fusion(), **changes)

    return apply


VARIANTS: dict[str, Variant] = {
    "base": _fusion(),
}
"""The rankings compared by name; ``--variants`` also takes ``field=value+field=value`` over ``Fusion``'s
fields, a tuple as ``cjk_weights=0.9/0.1`` (a variant that helps becomes the field's default; one that does not goes, with its field)."""


def variant(name: str) -> Variant:
    """A named variant, or one written as ``field=value+field=value`` over ``Fusion``'s fields."""
    if name in VARIANTS:
        return VARIANTS[name]
    changes = {}
    for part in name.split("+"):
        field_name, _, value = part.partition("=")
        default = getattr(Fusion(), field_name)
        if isinstance(default, tuple):  # cjk_weights=0.9/0.1
            changes[field_name] = tuple(type(default[0])(v) for v in value.split("/"))
        else:
            changes[field_name] = type(default)(value)
    return _fusion(**changes)


_REPHRASED = (
    (
        re.compile(r"^When did ", re.IGNORECASE),
        ("On which day did ", "What date did ", "Around when did ", "How long ago did "),
    ),
    (
        re.compile(r"^When (is|was) ", re.IGNORECASE),
        ("On what date {0} ", "What date {0} ", "Around when {0} ", "At what time {0} "),
    ),
)
"""Other ways to ask LoCoMo's "When did …?" (``--rephrase``): a time hold-out no rule was written for."""


def rephrased(question: str, turn: int) -> str:
    """``question`` asked the ``turn``-th other way (itself when no rephrasing fits)."""
    for pattern, openings in _REPHRASED:
        match = pattern.match(question)
        if match:
            return openings[turn % len(openings)].format(*match.groups()) + question[match.end() :]
    return question


def _ask(kernel: MemoryKernel, question: dict[str, Any], now: Any, depth: int) -> list[str]:
    results = kernel.search(SearchRequest(question["question"], now, depth, record_access=False))
    return [h.turn.id for h in results.hits]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.recallstudy", description=__doc__)
    parser.add_argument("--data", type=Path, required=True)
    parser.add_argument("--vectors", type=Path, required=True)
    parser.add_argument("--variants", default=",".join(VARIANTS))
    parser.add_argument("--limit", type=int, default=None)
    parser.add_argument(
        "--rephrase", action="store_true", help='ask temporal "When did …?" questions in other words (a time hold-out)'
    )
    parser.add_argument("--threshold", type=float, default=None, help="min_similarity (default: the config's)")
    args = parser.parse_args(argv)
    loaded = load_config(None)
    zone = resolve_zone(loaded)
    embedder = CachedEmbedder(bench_embedder(loaded, None), args.vectors)
    rows = read_jsonl(args.data / "conversations.jsonl")
    questions = [q for q in read_jsonl(args.data / "questions.jsonl") if q.get("evidence_turn_ids")]
    if args.rephrase:
        questions = [
            {**q, "question": rephrased(q["question"], i)} if q["category"] == "temporal" else q
            for i, q in enumerate(questions)
        ]
    by_conversation: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for row in rows:
        by_conversation[row["conversation_id"]].append(row)
    conversation_ids = sorted(by_conversation)[: args.limit] if args.limit else sorted(by_conversation)
    with contextlib.ExitStack() as stack:
        opened: list[tuple[MemoryKernel, dict[str, str], Any, list[dict[str, Any]]]] = []
        for conversation_id in conversation_ids:
            kernel = stack.enter_context(_kernel(loaded, embedder, zone.tz))
            if args.threshold is not None:
                kernel.retriever.config = kernel.retriever.config.model_copy(update={"min_similarity": args.threshold})
            mapping = ingest(kernel, by_conversation[conversation_id], zone.tz)
            latest = max(moment(r["session_datetime"], zone.tz) for r in by_conversation[conversation_id])
            asked = [q for q in questions if q["conversation_id"] == conversation_id]
            opened.append((kernel, mapping, latest, asked))
        print(f"ingested {len(opened)} conversations; cache hits {embedder.hits}, misses {embedder.misses}", flush=True)
        for name in args.variants.split(","):
            scores: dict[str, Score] = defaultdict(Score)
            started, cpu = time.perf_counter(), os.times()
            for kernel, mapping, latest, asked in opened:
                variant(name)(kernel)
                for question in asked:
                    now = (
                        moment(question["question_datetime"], zone.tz) if question.get("question_datetime") else latest
                    )
                    ranked = [mapping.get(i, "") for i in _ask(kernel, question, now, 10)]
                    gold = set(question["evidence_turn_ids"])
                    scores["overall"].add(ranked, gold, [5, 10])
                    scores[question["category"]].add(ranked, gold, [5, 10])
            spent = os.times()
            per_query = (spent.user + spent.system - cpu.user - cpu.system) / max(scores["overall"].questions, 1)
            line = " ".join(
                f"{group}={s.summary([5])['recall@5']:.3f}/{s.summary([10])['recall@10']:.3f}/{s.summary([10])['all@10']:.3f}"
                for group, s in sorted(scores.items())
            )
            print(
                f"{name:>16}: {line} · {per_query * 1000:.0f} ms CPU/q · {time.perf_counter() - started:.0f} s",
                flush=True,
            )
    return 0


@contextlib.contextmanager
def _kernel(loaded: Any, embedder: Any, zone: Any) -> Iterator[MemoryKernel]:
    with scratch_kernel(loaded, embedder, zone) as kernel:
        yield kernel


if __name__ == "__main__":
    raise SystemExit(main())

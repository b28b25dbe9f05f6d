"""``huichat bench abstain``: does search say "no relevant memory" when there is none?

For each conversation of a benchmark folder (``shared/bench/FORMAT.md``), its haystack is
asked the questions of the *other* conversations (their answers are not in it; ``--foreign N``
takes a fixed sample of N from each, for a quicker run) and 100
generated garbage and off-topic strings, Chinese and English. Reported: the share of those
that return no hit at or above the threshold (``retriever.min_similarity`` or
``--threshold``), next to recall@10 on the conversation's own questions with and without
the threshold. One search per question serves both: the calibrated similarity does not
depend on the threshold, which only cuts the ranking's tail.

``--turns 10,10000`` asks the same questions over stores of other sizes: each conversation cut
to its first N utterances (own questions only where all their evidence is kept), or padded to
N turns with the utterances of ``--pad DIR`` (another benchmark folder, about other things:
e.g. ``benchmarks.zhgen``'s Chinese users' days), moved to before the conversation. A
similarity must mean the same on a store of ten turns as on one of ten thousand.

``--dump FILE`` writes every search's top candidates with their evidence (the inputs of
``memory.calibration``) for ``python -m benchmarks.calibrate FILE``, which refits the
calibration and the threshold by cross-validation over the conversations.
"""

from __future__ import annotations

import argparse
import json
import random
from collections import defaultdict
from dataclasses import asdict
from datetime import datetime, timedelta, tzinfo
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rich.console import Console
from rich.progress import Progress
from rich.table import Table

from benchmarks.common import bench_embedder, machine, scratch_kernel, write_json
from benchmarks.offtopic import garbage_queries
from benchmarks.recall import ingest, moment, read_jsonl
from benchmarks.vectorcache import cached
from huichat.app.config import LoadedConfig
from huichat.app.errors import CommandError
from huichat.memory.kernel import MemoryKernel
from huichat.memory.results import SearchRequest

if TYPE_CHECKING:
    from huichat.app.runtime import Zone

DEPTH = 10


def _ask(kernel: MemoryKernel, question: str, now: Any) -> tuple[str, list[dict[str, Any]]]:
    """The search's words (its time phrases taken out) and its top candidates; each keeps its text,
    so that a change to the word evidence (``memory.words.words_share``) is refitted from the dump
    without building the stores again (the ranking does not depend on it)."""
    results = kernel.search(SearchRequest(question, now, DEPTH, record_access=False))
    return results.keywords, [
        {
            "id": h.turn.id,
            "text": h.turn.text,
            "similarity": h.similarity,
            "evidence": asdict(h.evidence) if h.evidence else None,
        }
        for h in results.hits
    ]


def run_abstain_bench(args: argparse.Namespace, loaded: LoadedConfig, zone: Zone) -> int:
    """Ingest each conversation (cut or padded to each ``--turns`` size), ask its own, the others'
    and garbage questions; print and write the figures."""
    console = Console()
    data: Path = args.data
    rows = read_jsonl(data / "conversations.jsonl")
    questions = [q for q in read_jsonl(data / "questions.jsonl") if q.get("evidence_turn_ids")]
    by_conversation: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for row in rows:
        by_conversation[row["conversation_id"]].append(row)
    conversation_ids = sorted(by_conversation)[: args.limit] if args.limit else sorted(by_conversation)
    threshold = loaded.config.retriever.min_similarity if args.threshold is None else args.threshold
    sizes: list[int | None] = list(getattr(args, "turns", None) or [None])
    pad_rows = read_jsonl(args.pad / "conversations.jsonl") if getattr(args, "pad", None) else []
    if any(size > len(by_conversation[c]) for size in sizes if size for c in conversation_ids) and not pad_rows:
        raise CommandError("a store larger than a conversation is padded: give --pad DIR (unrelated conversations)")
    garbage = garbage_queries(100)
    embedder = cached(bench_embedder(loaded, args.embedder), getattr(args, "vectors", None))
    searches: list[dict[str, Any]] = []
    if getattr(args, "resume", False) and args.dump is not None and args.dump.exists():
        kept = json.loads(args.dump.read_text(encoding="utf-8"))
        if kept.get("embedder") == embedder.name:  # the stores a stopped run finished
            searches = [s for s in kept["searches"] if s["conversation"] in conversation_ids]
    done = {(s["conversation"], s.get("turns")) for s in searches}
    with Progress(console=console, transient=True) as progress:
        task = progress.add_task("abstain", total=len(conversation_ids) * len(sizes))
        for size, conversation_id in ((n, c) for n in sizes for c in conversation_ids):
            if (conversation_id, size) in done:
                progress.advance(task)
                console.log(f"{conversation_id} at {size or 'all'} turns: kept from {args.dump}")
                continue
            conversation = sized(by_conversation[conversation_id], size)
            with scratch_kernel(loaded, embedder, zone.tz) as kernel:
                # every candidate of the top 10 is kept; the threshold is applied when scoring
                kernel.retriever.config = kernel.retriever.config.model_copy(update={"min_similarity": 0.0})
                first = min(moment(r["session_datetime"], zone.tz) for r in conversation)
                padded = padding(pad_rows, (size or 0) - len(conversation), first, zone.tz)
                if padded:  # its own ids: none of them is anyone's gold
                    ingest(kernel, padded, zone.tz)
                mapping = ingest(kernel, conversation, zone.tz)
                latest = max(moment(r["session_datetime"], zone.tz) for r in conversation)
                kept_ids = set(mapping.values())
                asked = [
                    (q, "own")
                    for q in questions
                    if q["conversation_id"] == conversation_id and set(q["evidence_turn_ids"]) <= kept_ids
                ]
                asked += [(q, "foreign") for q in foreign_sample(questions, conversation_id, args.foreign)]
                asked += [({"question": g, "evidence_turn_ids": []}, "garbage") for g in garbage]
                ask = progress.add_task(f"asking {conversation_id}", total=len(asked))
                for question, kind in asked:
                    now = (
                        moment(question["question_datetime"], zone.tz) if question.get("question_datetime") else latest
                    )
                    keywords, hits = _ask(kernel, question["question"], now)
                    gold = set(question["evidence_turn_ids"]) if kind == "own" else set()
                    for hit in hits:
                        hit["gold"] = mapping.get(hit["id"], "") in gold
                    searches.append(
                        {
                            "conversation": conversation_id,
                            "turns": size,
                            "kind": kind,
                            "question": question["question"],
                            "keywords": keywords,
                            "category": question.get("category", ""),
                            "gold": len(gold),
                            "hits": hits,
                        }
                    )
                    progress.advance(ask)
                progress.remove_task(ask)
            progress.advance(task)
            console.log(f"{conversation_id}: {len(conversation) + len(padded)} turns, {len(asked)} searches")
            if args.dump is not None:  # after each store, so that a long run is never all lost
                write_json(args.dump, {"embedder": embedder.name, "searches": searches})
    report = {
        "data": str(data),
        "embedder": embedder.name,
        "threshold": threshold,
        "sizes": {
            str(size or "all"): {
                "conversations": {
                    c: score([s for s in searches if s["conversation"] == c and s.get("turns") == size], threshold)
                    for c in conversation_ids
                },
                "overall": score([s for s in searches if s.get("turns") == size], threshold),
            }
            for size in sizes
        },
        "machine": machine(),
    }
    _print(console, report)
    write_json(args.json, report)
    return 0


def sized(conversation: list[dict[str, Any]], size: int | None) -> list[dict[str, Any]]:
    """The conversation's first ``size`` utterances in the order they were said (all of it for None
    or a size beyond its length: the rest of such a store is padding)."""
    if size is None or size >= len(conversation):
        return conversation
    ordered = sorted(conversation, key=lambda r: (r["session_datetime"], r["turn_index"]))
    return ordered[:size]


def padding(rows: list[dict[str, Any]], count: int, before: datetime, zone: tzinfo) -> list[dict[str, Any]]:
    """The first ``count`` utterances of the ``--pad`` folder, moved in time to end a day before
    ``before`` (a question's time window sees them as it would any older memory)."""
    if count <= 0:
        return []
    if count > len(rows):
        raise CommandError(f"--pad holds {len(rows)} utterances; a store of this size needs {count}")
    chosen = rows[:count]
    last = max(moment(r.get("turn_datetime") or r["session_datetime"], zone) for r in chosen)
    shift = before - timedelta(days=1) - last

    def moved(text: str | None) -> str | None:
        return (moment(text, zone) + shift).isoformat() if text else text

    return [
        {**r, "session_datetime": moved(r["session_datetime"]), "turn_datetime": moved(r.get("turn_datetime"))}
        for r in chosen
    ]


def foreign_sample(
    questions: list[dict[str, Any]], conversation_id: str, per_conversation: int | None
) -> list[dict[str, Any]]:
    """The other conversations' questions: all of them, or ``per_conversation`` of each (a fixed sample)."""
    by_conversation: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for question in questions:
        if question["conversation_id"] != conversation_id:
            by_conversation[question["conversation_id"]].append(question)
    chosen: list[dict[str, Any]] = []
    for other in sorted(by_conversation):
        pool = by_conversation[other]
        if per_conversation is not None and per_conversation < len(pool):
            pool = random.Random(other).sample(pool, per_conversation)
        chosen.extend(pool)
    return chosen


def score(searches: list[dict[str, Any]], threshold: float) -> dict[str, float]:
    """Abstention (foreign questions, garbage, both) and own recall@5 and @10 with and without ``threshold``."""

    def abstains(search: dict[str, Any]) -> bool:
        return not any(h["similarity"] >= threshold for h in search["hits"])

    def recall(search: dict[str, Any], cut: float, depth: int = DEPTH) -> float:
        found: int = sum(h["gold"] for h in search["hits"][:depth] if h["similarity"] >= cut)
        return found / int(search["gold"])

    own = [s for s in searches if s["kind"] == "own"]
    other = [s for s in searches if s["kind"] != "own"]
    foreign = [s for s in other if s["kind"] == "foreign"]
    garbage = [s for s in other if s["kind"] == "garbage"]

    def share(items: list[dict[str, Any]]) -> float:
        return round(sum(abstains(s) for s in items) / len(items), 4) if items else 0.0

    def mean(values: list[float]) -> float:
        return round(sum(values) / len(values), 4) if values else 0.0

    return {
        "own_questions": len(own),
        "recall@5": mean([recall(s, 0.0, 5) for s in own]),
        "recall@5_thresholded": mean([recall(s, threshold, 5) for s in own]),
        "recall@10": mean([recall(s, 0.0) for s in own]),
        "recall@10_thresholded": mean([recall(s, threshold) for s in own]),
        "own_with_no_hit": share(own),
        "abstain_foreign": share(foreign),
        "abstain_garbage": share(garbage),
        "abstain": share(other),
        "foreign_questions": len(foreign),
        "garbage_strings": len(garbage),
    }


def _print(console: Console, report: dict[str, Any]) -> None:
    table = Table(title=f"abstain · {report['data']} · {report['embedder']} · min_similarity {report['threshold']}")
    columns = ("turns", "conversation", "abstain", "foreign", "garbage", "recall@10", "thresholded", "own with no hit")
    for column in columns:
        table.add_column(column, justify="left" if column in ("turns", "conversation") else "right")
    for size, figures in report["sizes"].items():
        for name, row in [*figures["conversations"].items(), ("overall", figures["overall"])]:
            table.add_row(
                size,
                name,
                f"{row['abstain']:.3f}",
                f"{row['abstain_foreign']:.3f}",
                f"{row['abstain_garbage']:.3f}",
                f"{row['recall@10']:.3f} ({row['own_questions']})",
                f"{row['recall@10_thresholded']:.3f}",
                f"{row['own_with_no_hit']:.3f}",
            )
    console.print(table)

"""``huichat bench timegen``: a bilingual benchmark of time resolution + progressive scan.

The dataset (``timefacts``) plants facts at known moments with look-alikes at other times.
Precise questions of every category ("上周三下午我们聊的那个部署问题是什么？", "what did I say
about the visa on Halloween?") are scored by recall@5, per category and per phrase; vague ones
("前段时间…", "a while ago…") by the scan round in which the gold turn appears. The dataset is
written in the ``shared/bench/FORMAT.md`` layout, so ``bench recall`` can read it too.
``--resolver`` measures the time resolver's own speed instead (``timespeed``).
"""

from __future__ import annotations

import argparse
import json
import time
from collections import defaultdict
from datetime import datetime
from typing import TYPE_CHECKING, Any

from rich.console import Console
from rich.progress import Progress
from rich.table import Table

from benchmarks.common import bench_embedder, machine, scratch_kernel, write_json
from benchmarks.recall import ingest
from benchmarks.timefacts import CATEGORIES, generate
from huichat.app.config import LoadedConfig
from huichat.memory.results import SearchRequest

if TYPE_CHECKING:
    from huichat.app.runtime import Zone

ORDER = ("precise", *CATEGORIES, "vague")


def run_time_bench(args: argparse.Namespace, loaded: LoadedConfig, zone: Zone) -> int:
    """Generate the dataset, ingest it, ask every question, report."""
    if args.resolver:
        from benchmarks.timespeed import run_resolver_bench

        return run_resolver_bench(args, zone)
    console = Console()
    categories = tuple(CATEGORIES) if args.categories is None else args.categories
    utterances, questions = generate(args.users, args.seed, zone.tz, categories)
    if args.out:
        args.out.mkdir(parents=True, exist_ok=True)
        for name, rows in (("conversations.jsonl", utterances), ("questions.jsonl", questions)):
            with (args.out / name).open("w", encoding="utf-8") as handle:
                handle.writelines(json.dumps(row, ensure_ascii=False) + "\n" for row in rows)
    embedder = bench_embedder(loaded, args.embedder)
    by_conversation: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for row in utterances:
        by_conversation[row["conversation_id"]].append(row)
    found: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    per_phrase: dict[str, dict[str, list[int]]] = defaultdict(lambda: defaultdict(lambda: [0, 0]))
    vague_rounds: list[int | None] = []
    latencies: list[float] = []
    with Progress(console=console, transient=True) as progress:
        task = progress.add_task("ingesting and asking", total=len(utterances))
        for conversation, rows in sorted(by_conversation.items()):
            with scratch_kernel(loaded, embedder, zone.tz) as kernel:
                mapping = ingest(kernel, rows, zone.tz)
                reverse = {v: k for k, v in mapping.items()}
                progress.update(task, advance=len(rows))
                for question in (q for q in questions if q["conversation_id"] == conversation):
                    now = datetime.fromisoformat(question["question_datetime"])
                    gold = reverse[question["evidence_turn_ids"][0]]
                    started = time.perf_counter()
                    results = kernel.search(SearchRequest(question["question"], now, 5, record_access=False))
                    latencies.append(time.perf_counter() - started)
                    kind = question["category"]
                    if kind == "vague":
                        vague_rounds.append(
                            next(
                                (i + 1 for i, r in enumerate(results.rounds) if gold in {h.turn.id for h in r.found}),
                                None,
                            )
                        )
                        continue
                    hit = gold in [h.turn.id for h in results.hits]
                    label = (
                        question["extra"]["label"]
                        if kind != "precise" or results.time_range is None
                        else results.time_range.phrase
                    )
                    for tally in (found[kind], per_phrase[kind][label]):
                        tally[0] += hit
                        tally[1] += 1
    within = sum(1 for r in vague_rounds if r is not None and r <= 4)
    report = {
        "users": args.users,
        "seed": args.seed,
        "embedder": embedder.name,
        "turns": len(utterances),
        "recall@5": {kind: round(v[0] / max(v[1], 1), 4) for kind, v in found.items()},
        "questions": {kind: v[1] for kind, v in found.items()},
        "per_phrase_recall@5": {
            kind: {p: round(v[0] / v[1], 4) for p, v in sorted(phrases.items())} for kind, phrases in per_phrase.items()
        },
        "precise_recall@5": round(found["precise"][0] / max(found["precise"][1], 1), 4),
        "vague_questions": len(vague_rounds),
        "vague_found_within_4_rounds": round(within / max(len(vague_rounds), 1), 4),
        "vague_rounds": vague_rounds,
        "search_ms_p50": round(sorted(latencies)[len(latencies) // 2] * 1000, 1) if latencies else 0.0,
        "machine": machine(),
    }
    console.print(_table(args.users, len(utterances), embedder.name, found, per_phrase, within, len(vague_rounds)))
    write_json(args.json, report)
    return 0


def _table(
    users: int,
    turns: int,
    embedder: str,
    found: dict[str, list[int]],
    per_phrase: dict[str, dict[str, list[int]]],
    within: int,
    vague: int,
) -> Table:
    table = Table(title=f"time benchmark · {users} users · {turns} turns · {embedder}")
    table.add_column("measure")
    table.add_column("value", justify="right")
    for kind in ORDER:
        if kind == "vague":
            table.add_row(
                "vague phrases: found within 4 scan rounds", f"{within / max(vague, 1):.3f} ({within}/{vague})"
            )
            continue
        if kind not in found:
            continue
        hits, total = found[kind]
        table.add_row(f"{kind}: recall@5", f"{hits / total:.3f} ({hits}/{total})")
        for phrase, (phrase_hits, phrase_total) in sorted(per_phrase[kind].items()):
            table.add_row(f"  {phrase}", f"{phrase_hits / phrase_total:.3f}")
    return table

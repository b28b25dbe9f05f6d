"""``huichat bench reindex``: ``reindex --ray`` against the local reindex of the same transcripts.

LoCoMo-dev's utterances (a FORMAT.md folder) are written once as turns, found by their words
only. Then the index is rebuilt from those transcripts twice, as ``huichat reindex`` does it
(every turn by its words, then the catch-up commits the vectors 64 turns at a time): on this
machine, and with the vectors embedded by Ray's workers. The two indexes are compared row by
row (the same turn ids; the cosine of each turn's two vectors), and each rebuild's wall time
and CPU-seconds are recorded — for Ray, this process's and every process it started (the GCS,
the raylet, the workers), measured from /proc before they end: on two cores the start-up and
the hand-over of texts and vectors are the price of the distribution, and it is paid in full.
"""

from __future__ import annotations

import argparse
import os
import resource
import tempfile
import time
from collections import defaultdict
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
from rich.console import Console
from rich.table import Table

from benchmarks.common import bench_embedder, bench_embedding, machine, write_json
from benchmarks.recall import ingest, read_jsonl
from huichat.memory.indexing import EMBED_BATCH
from huichat.memory.location import MemoryLocation
from huichat.memory.opening import open_kernel
from huichat.memory.turns import utc_now

if TYPE_CHECKING:
    from huichat.app.config import LoadedConfig
    from huichat.app.runtime import Zone
    from huichat.memory.embedding import Embedder

_TICK = os.sysconf("SC_CLK_TCK")


def _own_cpu() -> float:
    """CPU-seconds of this process and of its children that ended (the reindex's salvage probe)."""
    return sum(
        usage.ru_utime + usage.ru_stime
        for usage in (resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN))
    )


def _descendants_cpu() -> float:
    """CPU-seconds of the live processes this one started, at any depth (Ray's GCS, raylet and workers)."""
    parents: dict[int, int] = {}
    times: dict[int, float] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        parents[int(entry.name)] = int(fields[1])
        times[int(entry.name)] = (int(fields[11]) + int(fields[12])) / _TICK
    mine = {os.getpid()}
    grew = True
    while grew:
        found = {pid for pid, parent in parents.items() if parent in mine} - mine
        grew = bool(found)
        mine |= found
    return sum(times[pid] for pid in mine if pid != os.getpid())


def _rebuild(
    location: MemoryLocation, embedder: Embedder, loaded: LoadedConfig, zone: Zone, ray: str | None, choice: str | None
) -> dict[str, Any]:
    """One ``reindex`` of the transcripts at ``location`` (on the cluster at ``ray``, when given; ``choice``:
    the bench's ``--embedder``): its figures and its vectors by turn id."""
    kernel = open_kernel(location, embedder, loaded.config.retriever, zone.tz, now=utc_now(), for_rebuild=True)
    started, cpu = time.perf_counter(), _own_cpu()
    workers = None
    try:
        report = kernel.reindex(embed=False)
        words = time.perf_counter() - started
        if ray is not None:
            from huichat.memory.ray_embedding import RayEmbedder

            workers = RayEmbedder(ray, bench_embedding(loaded, choice), loaded.paths.models_dir, embedder)
        ready = time.perf_counter() - started
        while kernel.embed_pending(EMBED_BATCH, None, workers):
            pass
        wall = time.perf_counter() - started
        cpu = _own_cpu() - cpu + (_descendants_cpu() if workers is not None else 0.0)
        vectors = kernel.store.vectors(kernel.store.all_ids())
    finally:
        count = workers.workers if workers is not None else 0
        if workers is not None:
            workers.close()
        kernel.close()
    return {
        "turns": report.added + report.updated,
        "workers": count,
        "words_s": round(words, 1),
        "ready_s": round(ready, 1),
        "wall_s": round(wall, 1),
        "cpu_s": round(cpu, 1),
        "vectors": vectors,
    }


def run_reindex_bench(args: argparse.Namespace, loaded: LoadedConfig, zone: Zone) -> int:
    """Write the transcripts, rebuild locally and on Ray, compare; print a table and optionally write JSON."""
    console = Console()
    by_conversation: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for row in read_jsonl(args.data / "conversations.jsonl"):
        by_conversation[row["conversation_id"]].append(row)
    chosen = sorted(by_conversation)[: args.limit] if args.limit else sorted(by_conversation)
    embedder = bench_embedder(loaded, args.embedder)
    with tempfile.TemporaryDirectory(prefix="huichat-bench-") as scratch:
        location = MemoryLocation.under(Path(scratch))
        kernel = open_kernel(location, embedder, loaded.config.retriever, zone.tz, now=utc_now(), reconcile=False)
        try:
            with console.status("writing the transcripts"):
                for conversation_id in chosen:
                    ingest(kernel, by_conversation[conversation_id], zone.tz, embed=False)
        finally:
            kernel.close()
        with console.status("reindex on this machine"):
            local = _rebuild(location, embedder, loaded, zone, None, args.embedder)
        with console.status(f"reindex on Ray ({args.ray})"):
            distributed = _rebuild(location, embedder, loaded, zone, args.ray, args.embedder)
    ours, theirs = local.pop("vectors"), distributed.pop("vectors")
    cosines = [float(ours[i] @ theirs[i]) for i in ours if i in theirs]
    report = {
        "data": str(args.data),
        "embedder": embedder.name,
        "ray": args.ray,
        "same_ids": ours.keys() == theirs.keys(),
        "rows": {"local": len(ours), "ray": len(theirs)},
        "cosine": {"min": round(min(cosines), 6), "mean": round(float(np.mean(cosines)), 6)},
        "local": local,
        "on_ray": distributed,
        "load": os.getloadavg(),
        "machine": machine(),
    }
    table = Table(title=f"reindex · {report['data']} · {report['embedder']} · ray {args.ray}")
    for column in ("run", "turns", "workers", "words s", "ready s", "wall s", "CPU s", "turns/CPU-s"):
        table.add_column(column, justify="left" if column == "run" else "right")
    for name, run in (("local", local), ("ray", distributed)):
        rate = run["turns"] / run["cpu_s"] if run["cpu_s"] else 0.0
        cells = (run["turns"], run["workers"], run["words_s"], run["ready_s"], run["wall_s"], run["cpu_s"])
        table.add_row(name, *(str(c) for c in cells), f"{rate:.1f}")
    console.print(table)
    console.print(
        f"same turn ids: {report['same_ids']} · rows {len(ours)} / {len(theirs)} · cosine per row "
        f"min {report['cosine']['min']} mean {report['cosine']['mean']} · load {report['load'][0]:.1f}"
    )
    write_json(args.json, report)
    return 0 if report["same_ids"] and report["cosine"]["min"] >= 0.9999 else 1

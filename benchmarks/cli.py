"""``huichat bench``: recall quality, the synthetic time benchmark, scale, start-up and the lifecycle."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from app.runtime import Runtime


def _ints(text: str) -> list[int]:
    try:
        values = [int(part.replace("_", "")) for part in text.split(",") if part.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected comma-separated whole numbers, got {text!r}") from None
    if not values or any(v <= 0 for v in values):
        raise argparse.ArgumentTypeError(f"expected positive numbers, got {text!r}")
    return values


def add_bench_arguments(parser: argparse.ArgumentParser) -> None:
    """The bench sub-commands and their options."""
    kinds = parser.add_subparsers(dest="bench", metavar="KIND", required=True)
    recall = kinds.add_parser("recall", help="retrieval recall on a dataset in the bench FORMAT.md layout")
    recall.add_argument(
        "--data",
        type=Path,
        required=True,
        help="folder with conversations.jsonl and questions.jsonl",
    )
    recall.add_argument("--top-k", type=_ints, default=[1, 5, 10], metavar="K,K", help="cut-offs (default 1,5,10)")
    recall.add_argument("--limit", type=int, default=None, metavar="N", help="only the first N conversations")
    recall.add_argument("--json", type=Path, default=None, metavar="OUT", help="also write the results as JSON")
    recall.add_argument(
        "--embedder",
        default=None,
        help="'hash' for the fast test embedder, else the configured model",
    )
    recall.add_argument("--modes", default="hybrid,text,vector", help="search modes to run (default all three)")
    recall.add_argument(
        "--lifecycle",
        action="store_true",
        help="run the lifecycle job at each question's time and add 'hybrid+tiers' (the tier prior on)",
    )

    timegen = kinds.add_parser("timegen", help="generate and run the bilingual time benchmark")
    timegen.add_argument("--out", type=Path, default=None, help="write the generated dataset to this folder")
    timegen.add_argument("--users", type=int, default=6, help="synthetic users (default 6)")
    timegen.add_argument("--seed", type=int, default=7, help="random seed (default 7)")
    timegen.add_argument("--json", type=Path, default=None, metavar="OUT", help="also write the results as JSON")
    timegen.add_argument("--embedder", default=None, help="'hash' for the fast test embedder")

    scale = kinds.add_parser("scale", help="write and search latency, memory and disk at N turns")
    scale.add_argument(
        "--turns",
        type=_ints,
        default=[10_000, 100_000],
        metavar="N,N",
        help="sizes (default 10000,100000)",
    )
    scale.add_argument("--queries", type=int, default=200, help="searches timed per mode (default 200)")
    scale.add_argument("--json", type=Path, default=None, metavar="OUT", help="also write the results as JSON")
    scale.add_argument(
        "--embedder",
        default="hash",
        help="embedder for bulk vectors (default hash; live-turn timing uses the configured model)",
    )

    lifecycle = kinds.add_parser(
        "lifecycle", help="a synthetic year through the daily jobs: tiers, consolidation, recall"
    )
    lifecycle.add_argument("--turns", type=int, default=50_000, help="turns in the year (default 50000)")
    lifecycle.add_argument("--facts", type=int, default=400, help="planted facts (default 400)")
    lifecycle.add_argument(
        "--search-turns", type=int, default=100_000, help="store size for search during a job (0 skips; default 100000)"
    )
    lifecycle.add_argument("--queries", type=int, default=200, help="idle searches timed (default 200)")
    lifecycle.add_argument("--seed", type=int, default=13, help="random seed (default 13)")
    lifecycle.add_argument("--keep", type=Path, default=None, metavar="DIR", help="build the stores here and keep them")
    lifecycle.add_argument("--json", type=Path, default=None, metavar="OUT", help="also write the results as JSON")

    startup = kinds.add_parser("startup", help="time to first paint and until memory is ready")
    startup.add_argument("--runs", type=int, default=5, help="runs (median reported, default 5)")
    startup.add_argument("--json", type=Path, default=None, metavar="OUT", help="also write the results as JSON")


def run_bench(args: argparse.Namespace, runtime: Runtime) -> int:
    """Run the chosen benchmark."""
    loaded, zone = runtime.loaded, runtime.zone
    if args.bench == "recall":
        from benchmarks.recall import run_recall_bench

        return run_recall_bench(args, loaded, zone)
    if args.bench == "timegen":
        from benchmarks.timegen import run_time_bench

        return run_time_bench(args, loaded, zone)
    if args.bench == "scale":
        from benchmarks.scale import run_scale_bench

        return run_scale_bench(args, loaded, zone)
    if args.bench == "lifecycle":
        from benchmarks.lifecycle import run_lifecycle_bench

        return run_lifecycle_bench(args, loaded, zone)
    from benchmarks.startup import run_startup_bench

    return run_startup_bench(args, loaded, zone)

"""``huichat bench``: recall quality, the synthetic time benchmark, scale, start-up and import."""

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

    imports = kinds.add_parser("import", help="import a synthetic ChatGPT export: messages/s, peak RSS, time to search")
    imports.add_argument("--conversations", type=int, default=2_000, help="conversations (default 2000)")
    imports.add_argument("--messages", type=int, default=60_000, help="visible messages in all (default 60000)")
    imports.add_argument("--seed", type=int, default=1, help="random seed of the export (default 1)")
    imports.add_argument(
        "--embed-sample", type=int, default=512, metavar="N", help="turns embedded to measure the rate (default 512)"
    )
    imports.add_argument(
        "--embedder", default=None, help="'hash' for the fast test embedder, else the configured model"
    )
    imports.add_argument("--json", type=Path, default=None, metavar="OUT", help="also write the results as JSON")

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
    if args.bench == "import":
        from benchmarks.imports import run_import_bench

        return run_import_bench(args, loaded, zone)
    if args.bench == "scale":
        from benchmarks.scale import run_scale_bench

        return run_scale_bench(args, loaded, zone)
    from benchmarks.startup import run_startup_bench

    return run_startup_bench(args, loaded, zone)

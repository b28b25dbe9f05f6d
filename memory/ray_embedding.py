"""Bulk embedding on a Ray cluster: the vectors of ``huichat reindex --ray`` and ``huichat import --ray``.

Only the embedding is distributed. The kernel still writes every vector: the catch-up
(``MemoryKernel.embed_pending``) takes the waiting turns a batch at a time, hands their texts
to ``RayEmbedder``, scores them against the index (novelty needs a search of it) and commits
them onto the turns still waiting, in order, one commit per batch — so a killed run keeps
what was committed and the next run embeds only the rest, exactly as the local path does.

Why a pool of actors and not Ray Data or ``lance-ray``: those write Lance fragments from the
workers, past the kernel (its importance scoring, its check that a turn did not change while
it was embedded, its write lock shared with searches and live turns), and a reindex's
bottleneck is the model, not the writes. Loading the model costs seconds and a few hundred MB,
so each worker is an actor that loads it once (``load_embedder`` with this configuration: the
same ``embedding.bulk`` path, one thread, as Ray gives it one CPU) and is then sent work.

With the bundled model's bulk runtime (the default) the work is forward passes, not texts: this
process tokenises and batches exactly as a local run does (``OnnxEmbedder.embed_passages_with``)
and the workers run the passes. The int8 graph quantises each pass's activations as a whole, so
texts dealt out in other groups would come back slightly different (cosine ~0.998, measured);
the same passes give the local run's vectors. Other embedders (sentence-transformers, the test
hash) are batch-independent: their texts are dealt out in interleaved slices (sorted by length,
so each slice costs about the same).

Workers must have huichat installed (the same version: their vectors join this index).
Nothing here is imported unless ``--ray`` is given: Ray is an optional extra (``huichat[cluster]``).
"""

from __future__ import annotations

import logging
import os
import threading
import warnings
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from huichat.memory.bulk_embedding import BULK_MIN_TEXTS, BundledEmbedder, OnnxEmbedder
from huichat.memory.config import EmbeddingConfig
from huichat.memory.embedding import Embedder, Vector, load_embedder
from huichat.memory.errors import EmbeddingInterrupted, KernelError

LOCAL = "local"
"""The ``--ray`` address that starts a Ray of this machine's CPUs for the run (and stops it after)."""
_POLL = 0.1
"""Seconds between two looks at ``stop`` while the workers embed."""


def require_ray() -> Any:
    """The ``ray`` module; ``KernelError`` saying how to install it where it is missing."""
    try:
        import ray
    except ImportError as exc:
        raise KernelError(f"--ray needs Ray: pip install 'huichat[cluster]' ({exc})") from None
    return ray


def _bulk(embedder: Embedder) -> OnnxEmbedder | None:
    """The bundled model's bulk runtime behind ``embedder`` (prepared on first call), if it has one."""
    return embedder.bulk() if isinstance(embedder, BundledEmbedder) else None


class EmbeddingWorker:
    """One Ray actor: the configured embedder, loaded once, running the passes or slices it is sent."""

    def __init__(self, config: EmbeddingConfig, models_dir: str) -> None:
        self._embedder = load_embedder(config, Path(models_dir), bulk_workers=1)
        self._bulk = _bulk(self._embedder)

    def describe(self) -> tuple[str, int, str | None]:
        """The model's name, vector size and bulk graph: they must be the index's (and this process's)."""
        return self._embedder.name, self._embedder.dim, self._bulk.precision if self._bulk else None

    def passages(self, texts: list[str]) -> npt.NDArray[np.float32]:
        return self._embedder.embed_passages(texts)

    def forward(self, contents: list[list[int]]) -> npt.NDArray[np.float32]:
        if self._bulk is None:
            raise KernelError("this worker has no bulk runtime")
        return self._bulk.forward(contents)


class RayEmbedder:
    """An ``Embedder`` (and ``Interruptible``) whose passages are embedded by a pool of Ray actors."""

    def __init__(self, address: str, config: EmbeddingConfig, models_dir: Path, like: Embedder) -> None:
        """Connect to the cluster at ``address`` (``LOCAL``: start one here) and start one worker per CPU.

        ``like`` is the index's embedder: the workers' model must be the same one. It embeds the
        queries and the few texts that a local run gives the engine, and plans the bulk passes.
        """
        ray = require_ray()
        self._ray = ray
        self._like = like
        self._bulk = _bulk(like)
        expected = (like.name, like.dim, self._bulk.precision if self._bulk else None)
        try:
            with warnings.catch_warnings():
                # Ray starts its local services through fork; the index's engine, already loaded, warns
                # in each child about its own state, which the child drops at once (it runs another program)
                warnings.filterwarnings("ignore", "lancedb fork support", RuntimeWarning)
                if address == LOCAL:
                    ray.init(num_cpus=os.cpu_count() or 1, include_dashboard=False, **_QUIET)
                else:
                    ray.init(address=address, **_QUIET)
        except (ConnectionError, RuntimeError, ValueError) as exc:  # vendor boundary: cannot reach the cluster
            raise KernelError(f"cannot connect to Ray at {address}: {exc}".splitlines()[0]) from exc
        try:
            cpus = max(1, int(ray.cluster_resources().get("CPU", 1)))
            actor = ray.remote(num_cpus=1)(EmbeddingWorker)
            self._workers: list[Any] = [actor.remote(config, str(models_dir)) for _ in range(cpus)]
            described = self._gathered([w.describe.remote() for w in self._workers], None)
        except BaseException:
            self.close()
            raise
        for found in described:
            if tuple(found) != expected:
                self.close()
                raise KernelError(
                    f"the Ray workers embed with {_said(found)}, this index with {_said(expected)}: "
                    "install the same huichat, onnxruntime and configuration on the workers"
                )

    @property
    def name(self) -> str:
        return self._like.name

    @property
    def reading(self) -> str:
        return str(getattr(self._like, "reading", ""))

    @property
    def dim(self) -> int:
        return self._like.dim

    @property
    def workers(self) -> int:
        """How many actors embed (one per CPU of the cluster)."""
        return len(self._workers)

    def embed_query(self, text: str) -> Vector:
        return self._like.embed_query(text)

    def embed_passages(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        return self.embed_passages_until(texts, threading.Event())

    def embed_passages_until(self, texts: Sequence[str], stop: threading.Event) -> npt.NDArray[np.float32]:
        """The texts' vectors, computed by the workers; ``EmbeddingInterrupted`` once ``stop`` is set."""
        if len(texts) < BULK_MIN_TEXTS and self._bulk is not None:
            return self._like.embed_passages(texts)  # the engine's few texts, as a local run embeds them
        if self._bulk is not None:
            return self._bulk.embed_passages_with(texts, lambda passes: self._passes(passes, stop))
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        slices = max(1, min(len(self._workers), len(texts) // BULK_MIN_TEXTS))
        positions = [list(range(start, len(texts), slices)) for start in range(slices)]
        pending = [
            worker.passages.remote([texts[i] for i in part])
            for worker, part in zip(self._workers, positions, strict=False)
        ]
        vectors = np.zeros((len(texts), self.dim), dtype=np.float32)
        for part, found in zip(positions, self._gathered(pending, stop), strict=True):
            vectors[part] = found
        return vectors

    def _passes(self, passes: list[list[list[int]]], stop: threading.Event) -> list[npt.NDArray[np.float32]]:
        """The pooled states of ``passes``, dealt out across the workers in turn (sorted by length: even shares)."""
        workers = self._workers
        return self._gathered([workers[i % len(workers)].forward.remote(p) for i, p in enumerate(passes)], stop)

    def interrupt(self) -> None:
        """Nothing to abort here: the wait for the workers looks at ``stop`` every ``_POLL`` seconds,
        and a slice in flight is dropped (its worker ends with ``close``)."""

    def close(self) -> None:
        """End the workers, and the Ray this process started or connected to."""
        for worker in getattr(self, "_workers", []):
            self._ray.kill(worker)
        self._workers = []
        self._ray.shutdown()

    def _gathered(self, pending: list[Any], stop: threading.Event | None) -> list[Any]:
        """The results of ``pending``, waiting in steps so that ``stop`` is seen within ``_POLL``."""
        ray = self._ray
        try:
            while True:
                if stop is not None and stop.is_set():
                    raise EmbeddingInterrupted("embedding stopped")
                done, _ = ray.wait(pending, num_returns=len(pending), timeout=_POLL)
                if len(done) == len(pending):
                    return list(ray.get(pending))
        except ray.exceptions.RayError as exc:  # vendor boundary: a worker died or raised
            if stop is not None and stop.is_set():
                raise EmbeddingInterrupted("embedding stopped") from None
            raise KernelError(f"a Ray worker failed: {exc}".splitlines()[0]) from exc


def _said(described: Sequence[object]) -> str:
    name, dim, bulk = described
    return f"{name} ({dim} dimensions{f', bulk {bulk}' if bulk else ''})"


_QUIET: dict[str, Any] = {"log_to_driver": False, "logging_level": logging.ERROR, "configure_logging": True}
"""Ray's own start-up lines and the workers' output stay in Ray's log folder: the command has its progress line."""

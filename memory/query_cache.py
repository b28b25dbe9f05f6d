"""The last queries' vectors: a search embeds its query several times (its lists, its evidence, its second hop)."""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable

import numpy as np
import numpy.typing as npt

Vector = npt.NDArray[np.float32]


class QueryCache:
    """The last queries' vectors: the retriever embeds one query several times per search."""

    def __init__(self, size: int = 512) -> None:
        self._size = size
        self._vectors: OrderedDict[str, Vector] = OrderedDict()
        self._lock = threading.Lock()  # searches of several threads (serve) share it

    def get(self, text: str, embed: Callable[[str], Vector]) -> Vector:
        """The cached vector of ``text``, or ``embed(text)`` remembered."""
        with self._lock:
            cached = self._vectors.get(text)
            if cached is not None:
                self._vectors.move_to_end(text)
                return cached
        vector = embed(text)
        with self._lock:
            self._vectors[text] = vector
            if len(self._vectors) > self._size:
                self._vectors.popitem(last=False)
        return vector

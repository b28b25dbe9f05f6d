"""Keys: short facts written about a stretch of a session, each pointing at the turns it came from.

A key is never a turn: it is not shown, quoted or exported as memory, and it replaces nothing.
A search that comes near a key finds the turns the key cites (``Retriever._key_list``): a
fact said as "I'm off to go swimming with the kids" is found by "What activities does
Melanie do?" through the key "Melanie goes swimming with her kids". The keys' vectors are
held in memory (``KeyIndex``); at 100k turns, ~30k keys of 384 floats are 46 MB and one
matrix-vector product (~3 ms).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime

import numpy as np
import numpy.typing as npt

from huichat.memory.vector_matrix import VectorMatrix


@dataclass(frozen=True)
class Key:
    """One fact and the turns it cites (``source``: the provider and model that wrote it)."""

    id: str
    text: str
    turn_ids: tuple[str, ...]
    session_id: str
    written_at: datetime
    source: str = ""


@dataclass(frozen=True, eq=False)
class KeyIndex:
    """The keys of a memory with their unit vectors, for an exact nearest-key search."""

    keys: tuple[Key, ...] = ()
    matrix: VectorMatrix | None = None
    _by_id: dict[str, Key] = field(init=False, repr=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_by_id", {k.id: k for k in self.keys})

    @classmethod
    def of(cls, keys: Sequence[Key], vectors: npt.NDArray[np.float32], dim: int) -> KeyIndex:
        """The index of ``keys`` and their vectors (one row each)."""
        if not keys:
            return cls()
        return cls(tuple(keys), VectorMatrix.of([k.id for k in keys], vectors, dim))

    def __len__(self) -> int:
        return len(self.keys)

    def nearest(self, vector: npt.NDArray[np.float32], count: int) -> list[tuple[Key, float]]:
        """The ``count`` keys nearest to ``vector``, best first, with their cosine."""
        if self.matrix is None:
            return []
        return [(self._by_id[i], score) for i, score in self.matrix.nearest(vector, count)]

    def citing(self, turn_ids: Iterable[str]) -> list[Key]:
        """The keys that cite any of ``turn_ids``."""
        wanted = set(turn_ids)
        return [k for k in self.keys if wanted.intersection(k.turn_ids)]

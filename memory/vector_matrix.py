"""The stored vectors of one table version in memory, for exact nearest-neighbour search.

Below the size at which an ANN index is built, LanceDB answers a vector search by a flat
scan that re-reads and decodes every stored vector on each query (about 30 ms of CPU at
10k turns on the reference machine); the same exact search over a matrix held in memory
is one matrix-vector product (about 2 ms). The store holds it for one table version: a
commit of another process makes the store read it again; this process's own commits carry
it to their version (``extended`` by the turns it appended, or as it was when no vector
changed).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt


@dataclass(frozen=True, eq=False)
class VectorMatrix:
    """The embedded turns of one table version: their ids and unit-length vectors, row by row."""

    ids: tuple[str, ...]
    unit: npt.NDArray[np.float32]
    """One row per id, divided by its length (LanceDB's cosine divides both sides the same way)."""
    _rows: dict[str, int] = field(init=False, repr=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_rows", {turn_id: row for row, turn_id in enumerate(self.ids)})

    @classmethod
    def of(
        cls,
        ids: Sequence[str],
        vectors: npt.NDArray[np.float32],
        dim: int,
    ) -> VectorMatrix:
        """The matrix of ``vectors`` (flat, ``dim`` values per id); a zero vector stays zero (it matches nothing)."""
        matrix = np.asarray(vectors, dtype=np.float32).reshape(len(ids), dim)
        lengths = np.linalg.norm(matrix, axis=1, keepdims=True)
        unit = np.divide(matrix, lengths, out=np.zeros_like(matrix), where=lengths > 0)
        return cls(tuple(ids), unit)

    def extended(self, appended: Sequence[tuple[str, npt.NDArray[np.float32] | None]]) -> VectorMatrix:
        """This matrix after turns (id, its vector or None) were appended."""
        added = [(turn_id, vector) for turn_id, vector in appended if vector is not None]
        if not added:
            return self
        fresh = VectorMatrix.of([i for i, _ in added], np.stack([v for _, v in added]), self.unit.shape[1])
        return VectorMatrix(self.ids + fresh.ids, np.vstack((self.unit, fresh.unit)))

    def __len__(self) -> int:
        return len(self.ids)

    def unit_of(self, ids: Iterable[str]) -> dict[str, npt.NDArray[np.float32]]:
        """The unit vectors of those ``ids`` held here (others are absent)."""
        return {i: self.unit[r] for i, r in ((i, self._rows.get(i)) for i in ids) if r is not None}

    def rows_of(self, ids: Iterable[str]) -> npt.NDArray[np.intp]:
        """The rows of those ``ids`` held here (others are ignored)."""
        return np.fromiter((r for r in (self._rows.get(i) for i in ids) if r is not None), dtype=np.intp)

    def nearest(
        self, vector: npt.NDArray[np.float32], count: int, among: npt.NDArray[np.intp] | None = None
    ) -> list[tuple[str, float]]:
        """The ``count`` ids nearest to ``vector`` (within the rows ``among``), best first, with their cosine."""
        rows = np.arange(len(self.ids)) if among is None else among
        if not len(rows) or count <= 0:
            return []
        query = np.asarray(vector, dtype=np.float32).reshape(-1)
        length = float(np.linalg.norm(query))
        if length > 0:
            query = query / np.float32(length)
        # einsum's own loop, not BLAS: OpenBLAS's threads wait on each other on a busy machine (8 ms, not 1)
        scores = np.einsum("ij,j->i", self.unit if among is None else self.unit[rows], query)
        best = np.argpartition(-scores, count - 1)[:count] if count < len(scores) else np.arange(len(scores))
        # best first; among equal cosines the earlier row first
        best = best[np.lexsort((rows[best], -scores[best]))]
        return [(self.ids[rows[i]], float(scores[i])) for i in best]

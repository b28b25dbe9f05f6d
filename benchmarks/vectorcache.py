"""Embeddings kept on disk between benchmark runs: a change to ranking is measured without re-embedding.

Recall benchmarks embed thousands of turns; on the shared 2-core machine that is most of a
run. ``CachedEmbedder`` wraps the real embedder and answers every text it has embedded
before from a SQLite file (keyed by the embedder's name, query or passage, and the text's
digest), so the second run of ``huichat bench recall --vectors FILE`` only ingests into
LanceDB and searches. What is embedded is still decided by the kernel: a change to the
embedded text (a context tail, a prefix) misses the cache and is embedded for real.

Search latency measured through the cache leaves out the query's embedding; the benchmarks
that print latency say so when a cache is in use.
"""

from __future__ import annotations

import hashlib
import sqlite3
import threading
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import numpy.typing as npt

from benchmarks.common import WrappedEmbedder
from huichat.memory.embedding import Embedder


class CachedEmbedder(WrappedEmbedder):
    """An ``Embedder`` that remembers every vector it was asked for in a SQLite file."""

    def __init__(self, inner: Embedder, path: Path) -> None:
        self.inner = inner
        self.path = path
        self.hits = 0
        self.misses = 0
        path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()
        self._db = sqlite3.connect(path, check_same_thread=False)
        self._db.execute("CREATE TABLE IF NOT EXISTS vectors (key BLOB PRIMARY KEY, vector BLOB NOT NULL)")
        self._db.commit()

    def _key(self, kind: str, text: str) -> bytes:
        return hashlib.blake2b(f"{self.inner.name}\0{kind}\0{text}".encode(), digest_size=16).digest()

    def _lookup(self, keys: Sequence[bytes]) -> dict[bytes, npt.NDArray[np.float32]]:
        found: dict[bytes, npt.NDArray[np.float32]] = {}
        with self._lock:
            for start in range(0, len(keys), 500):
                chunk = list(keys[start : start + 500])
                marks = ",".join("?" * len(chunk))
                for key, blob in self._db.execute(f"SELECT key, vector FROM vectors WHERE key IN ({marks})", chunk):
                    found[bytes(key)] = np.frombuffer(blob, dtype=np.float32).copy()
        return found

    def _store(self, pairs: Sequence[tuple[bytes, npt.NDArray[np.float32]]]) -> None:
        with self._lock:
            self._db.executemany(
                "INSERT OR REPLACE INTO vectors VALUES (?, ?)",
                [(key, np.asarray(v, dtype=np.float32).tobytes()) for key, v in pairs],
            )
            self._db.commit()

    def embed_query(self, text: str) -> npt.NDArray[np.float32]:
        key = self._key("q", text)
        found = self._lookup([key]).get(key)
        if found is not None:
            self.hits += 1
            return found
        self.misses += 1
        vector = np.asarray(self.inner.embed_query(text), dtype=np.float32)
        self._store([(key, vector)])
        return vector

    def embed_passages(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        keys = [self._key("p", t) for t in texts]
        found = self._lookup(keys)
        missing = [i for i, key in enumerate(keys) if key not in found]
        self.hits += len(texts) - len(missing)
        self.misses += len(missing)
        if missing:
            vectors = self.inner.embed_passages([texts[i] for i in missing])
            fresh = [(keys[i], vectors[j]) for j, i in enumerate(missing)]
            self._store(fresh)
            found.update(fresh)
        return np.stack([found[key] for key in keys]).astype(np.float32)

    def close(self) -> None:
        """Close the file (the cache stays on disk for the next run)."""
        with self._lock:
            self._db.close()


def cached(embedder: Embedder, path: Path | None) -> Embedder:
    """``embedder`` behind a vector cache at ``path``; ``embedder`` itself when no path is given."""
    return embedder if path is None else CachedEmbedder(embedder, path)

"""Measure the calibration's reference for the bundled model and write it where huichat ships it.

``memory.calibration.Reference`` — what "no match" looks like to an embedder — is 40 embeddings
of unrelated texts, seconds of CPU at a memory's first search. For the bundled model it is
measured here once and shipped (``memory/references``); run this after changing the reference
texts (``memory/reference_texts.py``) or the bundled model::

    python -m benchmarks.reference

``tests/memory/test_calibration.py`` fails while the shipped file is missing or stale.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

from huichat.memory.calibration import SHIPPED, Reference, key_of
from huichat.memory.config import EmbeddingConfig
from huichat.memory.embedding import load_embedder


def main() -> int:
    with tempfile.TemporaryDirectory(prefix="huichat-reference-") as models:
        # the bundled model as a new user's memory has it: the default configuration (its windows)
        embedder = load_embedder(EmbeddingConfig(), Path(models))
        path = SHIPPED / f"reference-{key_of(embedder)}.npz"
        for stale in SHIPPED.glob("reference-*.npz"):
            stale.unlink()
        Reference.measure(embedder).save(path)
    print(f"wrote {path} ({embedder.name}, {embedder.dim} dimensions)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""The bundled model's vectors computed by Ray workers (a real local Ray) are the local run's own."""

from __future__ import annotations

import threading
from pathlib import Path

import numpy as np
import pytest

from huichat.memory.config import EmbeddingConfig
from huichat.memory.embedding import load_embedder
from huichat.memory.errors import EmbeddingInterrupted

pytest.importorskip("ray", reason="Ray is the optional cluster extra; the dev install has it")

TEXTS = [
    *(f"第{i}次讨论本地模型部署，用 llama.cpp 还是 vLLM" for i in range(12)),
    *(f"Caroline went to the support group on day {i}. " * (1 + i * 9) for i in range(12)),  # some past one window
]


def test_the_workers_run_the_local_passes_so_the_vectors_are_the_local_ones(tmp_path: Path) -> None:
    from huichat.memory.ray_embedding import LOCAL, RayEmbedder

    config = EmbeddingConfig()
    local = load_embedder(config, tmp_path / "models")
    expected = local.embed_passages(TEXTS)
    workers = RayEmbedder(LOCAL, config, tmp_path / "models", local)
    try:
        assert workers.workers >= 1
        found = workers.embed_passages(TEXTS)
        assert np.array_equal(found, expected)  # the same passes: the same arithmetic, bit for bit
        few = TEXTS[:3]  # too few for the bulk runtime: the engine, here, as a local run does
        assert np.array_equal(workers.embed_passages(few), local.embed_passages(few))
        stop = threading.Event()
        stop.set()
        with pytest.raises(EmbeddingInterrupted):
            workers.embed_passages_until(TEXTS, stop)
    finally:
        workers.close()

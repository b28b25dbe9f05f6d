"""Calibrated similarity: a fused candidate's chance of being relevant, comparable across queries.

The fused score ranks well inside one query, but it is made of z-scores over that query's
own candidates: the best candidate of any query — garbage included — looks strong. The
similarity people and models read (相似度) is instead a logistic calibration over what a
candidate brings in absolute terms: its cosine with the query, measured in spreads above
the query's own cosine with unrelated reference texts (``Reference``), and the share of the
query's content words it holds (``memory.words.words_share``). Neither depends on what else
the store holds: BM25, the input before, weighs a word by how few of the store's turns hold
it, so the same match scored twice as high among ten thousand turns as among nine, and a
threshold fitted on one size of store let foreign questions through on a larger one. A
threshold on it
(``retriever.min_similarity``) can then say "no relevant memory". The ranking inside a
query stays the fused one: along it the similarity is made non-increasing (each result gets
the best value at or below its rank, so a result ranked above a confident match is never
shown as weaker than it, and the threshold cuts the ranking's tail). The fused score and
the rank were tried as inputs too and added nothing (BENCHMARKS.md).

Constants are fitted on LoCoMo-dev by leave-one-conversation-out cross-validation and are
refitted with ``python -m benchmarks.calibrate DUMP`` after ``huichat bench abstain --dump
DUMP`` (BENCHMARKS.md, "Abstention and calibrated similarity").
"""

from __future__ import annotations

import contextlib
import hashlib
import math
import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

import numpy as np
import numpy.typing as npt

from huichat.memory.reference_texts import UNRELATED, UNRELATED_LONG

if TYPE_CHECKING:
    from huichat.memory.embedding import Embedder


@dataclass(frozen=True)
class Evidence:
    """What one candidate of a hybrid search brings, before calibration."""

    cosine: float | None
    """Its cosine with the query (the vector list's lowest when that list did not hold it); None
    for a turn that has no vector yet (imported with ``--no-embed``, or its vector still pending)."""
    bm25: float
    """Its BM25 score (0 when full text did not return it)."""
    background: float
    """The query's mean cosine with unrelated reference texts in the candidate's script, moved towards
    long texts' for a long candidate; for one in both scripts, the script that makes it the weaker
    match (see ``Reference``)."""
    spread: float
    """The spread of unrelated cosines in that script."""
    inherited: float = 0.0
    """How much of ``cosine`` the turn before it explains: a turn is embedded after its
    predecessor's tail (``memory.turns.search_text``), so an unrelated reply right after a
    match sits close to the query too. Taken off the cosine before it is calibrated."""
    words: float = 0.0
    """The share of the query's content words it holds (``memory.words.words_share``): the
    calibration's word evidence, and the whole similarity of a turn with no vector (found by its
    words, judged by them)."""
    cjk: bool = False
    """Whether it is Chinese, Japanese or Korean text (``memory.words.has_cjk``): its background and
    spread are that script's, and its word share counts character pairs, which a true Chinese match
    holds fewer of than an English one holds of the query's words."""
    names: float = 1.0
    """The share of the names the query holds that it holds (``memory.words.names_share``; 1 when
    the query names nobody): "What instruments does Tim play?" is not answered by "You play any
    instruments?" in a store that never mentions Tim, however close the rest of the words."""


@dataclass(frozen=True)
class Calibration:
    """Logistic weights over ``features``: the probability that a candidate is relevant."""

    weights: tuple[float, float, float, float, float]
    intercept: float

    def probability(self, evidence: Evidence) -> float:
        """The calibrated similarity of one candidate, in (0, 1); for one without a vector, the share
        of the query's words it holds (no cosine to calibrate: its own words are the evidence)."""
        if evidence.cosine is None:
            return evidence.words
        logit = self.intercept + sum(w * x for w, x in zip(self.weights, features(evidence), strict=True))
        return 1.0 / (1.0 + math.exp(-max(-30.0, min(30.0, logit))))


def features(evidence: Evidence) -> tuple[float, float, float, float, float]:
    """The calibration's inputs: cosine above the query's background (in spreads); the share of the
    query's words the candidate holds; the share of the query's names it holds; and, for a CJK
    candidate, a term of its own and its word share again. Pairs of characters are not words (a
    true Chinese match holds fewer of a question's pairs than an English one holds of its words),
    so a CJK candidate's word share gets a weight of its own — written as a difference from the
    English weight, which the fit's regularisation keeps small unless the data asks for more (a
    separate weight per script ran away on the few Chinese positives: BENCHMARKS.md). No statistic
    of the store enters: a similarity means the same on nine turns as on a hundred thousand (BM25
    stays in the ranking, where only the order within one search counts)."""
    if evidence.cosine is None:
        raise ValueError("a candidate without a vector has no calibration features")
    own = evidence.cosine - evidence.inherited
    cjk = float(evidence.cjk)
    return ((own - evidence.background) / evidence.spread, evidence.words, evidence.names, cjk, cjk * evidence.words)


# Fitted by `python -m benchmarks.calibrate` on LoCoMo-dev with multilingual-e5-small
# (leave-one-conversation-out; figures in BENCHMARKS.md). Refit after changing the fusion,
# the features or the default model: run `huichat bench abstain --data … --dump DUMP`, then
# `python -m benchmarks.calibrate DUMP`, and paste what it prints here.
CALIBRATION = Calibration(weights=(1.0198, 5.9876, 2.0459, -0.8654, 4.2385), intercept=-5.5585)


@dataclass(frozen=True)
class Reference:
    """Unrelated reference texts as one embedder sees them: what "no match" looks like for a query.

    Cosines depend on the model (e5 gives any two texts ~0.75, other models ~0.2), on the
    script (e5: unrelated English pairs 0.72, Chinese pairs 0.83) and on the query itself
    (keyboard noise sits at ~0.8 from everything). So a candidate's cosine is read against
    the query's own mean cosine with these texts in the candidate's script, in units of
    the spread of unrelated cosines. Measured once per embedder (32 short texts and 8 long
    ones), and shipped for the bundled model.

    And on the candidate's length: a long text's vector is a mean over many more tokens (and
    windows), nearer the middle of the space, so every query sits closer to it — e5 put
    off-topic questions at 0.81–0.86 from long assistant answers against 0.73–0.79 from the
    sentences (BENCHMARKS.md, "Long answers"). A candidate longer than one window of the bundled
    model (``LONG_FROM`` characters) is read against a background moved towards the query's mean
    cosine with long unrelated texts (``memory.reference_texts.UNRELATED_LONG``), all the way at
    their length; a chat message keeps the sentences' background.
    """

    latin: npt.NDArray[np.float32]
    cjk: npt.NDArray[np.float32]
    latin_spread: float
    cjk_spread: float
    latin_long: npt.NDArray[np.float32]
    """The unit vectors of the long unrelated English texts."""
    cjk_long: npt.NDArray[np.float32]
    """The unit vectors of the long unrelated Chinese texts."""

    @classmethod
    def measure(cls, embedder: Embedder) -> Reference:
        """Embed the reference texts and measure the spread of their unrelated cosines.

        One text at a time, as a live turn is: 32 short texts are a moment for any embedder (the 8
        long ones ~5 CPU-s on the bundled model's engine, whose reference is shipped: ``SHIPPED``),
        and as one batch they would go to the bundled model's bulk runtime, whose first build (a new
        data folder: the very first start) holds the GIL for seconds at a time — typing froze.
        """
        passages = _unit(np.vstack([embedder.embed_passages([text]) for text in UNRELATED]))
        long = _unit(np.vstack([embedder.embed_passages([text]) for text in UNRELATED_LONG]))
        queries = _unit(np.stack([embedder.embed_query(text) for text in UNRELATED]))
        cosines = queries @ passages.T
        half, long_half = len(UNRELATED) // 2, len(UNRELATED_LONG) // 2
        spreads = []
        for part in (slice(0, half), slice(half, None)):  # within one script (e5: English 0.031, Chinese 0.018)
            block = cosines[part, part]
            spreads.append(round(max(float(block[~np.eye(block.shape[0], dtype=bool)].std()), 1e-3), 4))
        return cls(passages[:half], passages[half:], spreads[0], spreads[1], long[:long_half], long[long_half:])

    @classmethod
    def load_or_measure(cls, embedder: Embedder, folder: Path | None) -> Reference:
        """The reference for ``embedder``: the one shipped with huichat for the bundled model
        (``SHIPPED``), else the one measured before in ``folder``, else measured now (40 embeddings:
        seconds of CPU) and saved there for the next process. A process measures each embedder
        once (a server opening many users' memories, a test suite)."""
        key = key_of(embedder)
        for known in (SHIPPED, folder):
            if known is not None and (read := cls.read(known / f"reference-{key}.npz", embedder.dim)) is not None:
                return read
        measured = _MEASURED.get(key) or _MEASURED.setdefault(key, cls.measure(embedder))
        if folder is not None:
            with contextlib.suppress(OSError):  # a read-only data folder: measured again by the next process
                measured.save(folder / f"reference-{key}.npz")
        return measured

    @classmethod
    def read(cls, path: Path, dim: int) -> Reference | None:
        """The reference saved at ``path``; None when there is none, it is torn, or not of ``dim``."""
        try:
            with np.load(path) as saved:
                spreads = saved["spreads"]
                loaded = cls(
                    saved["latin"],
                    saved["cjk"],
                    float(spreads[0]),
                    float(spreads[1]),
                    saved["latin_long"],
                    saved["cjk_long"],
                )
        except (OSError, ValueError, KeyError, IndexError):
            return None
        vectors = (loaded.latin, loaded.cjk, loaded.latin_long, loaded.cjk_long)
        return loaded if all(v.ndim == 2 and v.shape[1] == dim for v in vectors) else None

    def save(self, path: Path) -> None:
        """Write this reference to ``path`` whole (a reader never sees half a file)."""
        path.parent.mkdir(parents=True, exist_ok=True)
        partial = path.with_name(f".{path.name}.{os.getpid()}.tmp")
        with partial.open("wb") as handle:
            np.savez(
                handle,
                latin=self.latin,
                cjk=self.cjk,
                spreads=np.array([self.latin_spread, self.cjk_spread]),
                latin_long=self.latin_long,
                cjk_long=self.cjk_long,
            )
        partial.replace(path)

    def evidence(self, query: npt.NDArray[np.float32]) -> EvidenceMaker:
        """For one query: the ``Evidence`` of a candidate, with the query's background in its script."""
        unit = _unit(query[None, :])[0]
        latin, cjk = float((self.latin @ unit).mean()), float((self.cjk @ unit).mean())
        # how much closer the query sits to long unrelated texts than to sentences (never less close)
        latin_lift = max(0.0, float((self.latin_long @ unit).mean()) - latin)
        cjk_lift = max(0.0, float((self.cjk_long @ unit).mean()) - cjk)

        def make(
            cosine: float | None,
            bm25: float,
            is_cjk: bool,
            words: float = 0.0,
            before: float | None = None,
            names: float = 1.0,
            length: int = 0,
            mixed: bool = False,
        ) -> Evidence:
            backgrounds = {
                "cjk": (cjk + cjk_lift * long_share(length, "cjk"), self.cjk_spread),
                "latin": (latin + latin_lift * long_share(length, "latin"), self.latin_spread),
            }
            # a text in both scripts is read against the script that makes it the weaker match
            # (a Chinese question before an English answer, asked in Chinese, sat 0.14 above the
            # English background and 0.02 above the Chinese one)
            scripts = ("cjk", "latin") if mixed else ("cjk",) if is_cjk else ("latin",)
            candidates = []
            for script in scripts:
                background, spread = backgrounds[script]
                # before: the cosine of the turn whose tail was embedded with this one, when its closeness is inherited
                inherited = max(0.0, before - background) if before is not None else 0.0
                above = ((cosine or 0.0) - inherited - background) / spread
                candidates.append((above, background, spread, inherited))
            _, background, spread, inherited = min(candidates)
            return Evidence(cosine, bm25, background, spread, inherited, words, is_cjk, names)

        return make


_MEASURED: dict[str, Reference] = {}
"""The references this process measured, by embedder and reference texts."""

SHIPPED = Path(__file__).parent / "references"
"""References measured once for the bundled model and shipped with huichat (``python -m
benchmarks.reference`` writes them): its first search does not spend seconds measuring."""


def key_of(embedder: Embedder) -> str:
    """What a reference is saved under: the embedder, how it reads a long text (``reading``, where it
    says: its windows, its cap, its prefixes) and every reference text (a changed one, a new key)."""
    parts = (embedder.name, str(embedder.dim), str(getattr(embedder, "reading", "")), *UNRELATED, *UNRELATED_LONG)
    return hashlib.blake2b("\n".join(parts).encode(), digest_size=8).hexdigest()


class EvidenceMaker(Protocol):
    """``Reference.evidence``'s answer: builds one candidate's ``Evidence`` for the query it was made for."""

    def __call__(
        self,
        cosine: float | None,
        bm25: float,
        is_cjk: bool,
        words: float = 0.0,
        before: float | None = None,
        names: float = 1.0,
        length: int = 0,
        mixed: bool = False,
    ) -> Evidence: ...


LONG_FROM = {"latin": 1000, "cjk": 300}
"""Characters of a candidate's text up to which it keeps the sentences' background: about one
256-token window of the bundled model (English ~4 characters a token, Chinese ~1). Every turn
of LoCoMo-dev and of the Chinese benchmarks is shorter, so their figures do not move."""
LONG_AT = {
    "latin": sum(len(t) for t in UNRELATED_LONG[:4]) / 4,
    "cjk": sum(len(t) for t in UNRELATED_LONG[4:]) / 4,
}
"""Characters at which a candidate gets the long texts' background: their mean length, per script."""


def long_share(length: int, script: str) -> float:
    """How far a candidate of ``length`` characters is from the sentences' background towards the
    long texts' (0 up to ``LONG_FROM``, 1 from ``LONG_AT``, linear between)."""
    start, end = LONG_FROM[script], LONG_AT[script]
    return min(1.0, max(0.0, (length - start) / (end - start)))


def _unit(vectors: npt.NDArray[np.float32]) -> npt.NDArray[np.float32]:
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    result: npt.NDArray[np.float32] = (vectors / np.maximum(norms, 1e-12)).astype(np.float32)
    return result


LEAD = 4.0
"""How many times likelier than every other candidate a first candidate under the threshold must be
to stand out (``stands_out``)."""
REACH = 10.0
"""How many times less likely than the threshold a candidate that stands out may be, at most."""


def stands_out(evidence: Sequence[Evidence], threshold: float, calibration: Calibration = CALIBRATION) -> bool:
    """Whether the first candidate of a ranking with no hit is still the likely match: its own
    chance (not the ranking's non-increasing one) at least ``LEAD`` times every other candidate's
    and at least ``threshold / REACH``.

    A short turn said right after an unrelated one is embedded after that turn's tail and reads
    as a weaker match than it is: "Who is my dentist?" finds "My dentist appointment is … with
    Dr. Patel" first, at 0.097, while the rest of the ranking lies under 0.01 (BENCHMARKS.md, "Tool
    loop"). The threshold still says "no relevant memory"; whoever shows memory unasked (the
    memory-first block) may show this one candidate, marked as uncertain, for the model to judge.
    A search of noise or of something memory never held has no such candidate: its candidates
    are all about equally unlikely. Nor does a first candidate that lacks a name the question
    holds: it is about someone else (LoCoMo's foreign questions, 34 of 922 offered without this).
    """
    if not evidence or any(e.cosine is None for e in evidence) or evidence[0].names < 1.0:
        return False
    first, *rest = (calibration.probability(e) for e in evidence)
    return first >= threshold / REACH and all(first >= LEAD * other for other in rest)


def calibrated(
    evidence: Sequence[Evidence], calibration: Calibration = CALIBRATION, lowered: Sequence[bool] = ()
) -> list[float]:
    """The similarity of each candidate of one ranking (best first), non-increasing along it.

    A candidate the ranking ``lowered`` for what its words cannot show (it is about someone else
    than the people asked about, ``memory.people``) is held to the similarity of those above it: its own
    evidence must not lift them (an unrelated turn ranked above it would inherit 0.99)."""
    values = [calibration.probability(e) for e in evidence]
    above = 1.0
    for i, is_lowered in enumerate(lowered):
        if is_lowered:
            values[i] = min(values[i], above)
        above = min(above, values[i])
    for i in range(len(values) - 2, -1, -1):
        values[i] = max(values[i], values[i + 1])
    return values

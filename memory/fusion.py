"""How the vector and full-text candidate lists become one ranking (measured in BENCHMARKS.md).

The retriever (``memory.retrieval``) reads the two lists; here their scores are put on one
scale, mixed by weight, and spread to neighbours in the conversation.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace

from huichat.memory.calibration import Evidence
from huichat.memory.results import Scored
from huichat.memory.turns import CONTEXT_GAP, Turn, in_context
from huichat.memory.words import content_terms, has_cjk


@dataclass(frozen=True)
class Fusion:
    """How vector and full-text candidates become one ranking (measured in BENCHMARKS.md).

    Each list's scores are standardised (z-scores over its candidate pool; a turn missing
    from a list gets that list's lowest score) and mixed by weight. Then every turn also
    receives part of the strength of its strongest neighbours in the conversation
    (``context``, by distance): in dialogue the answer often sits next to the turn whose
    words match the question. Only neighbours in context pass strength on (written
    within ``CONTEXT_GAP`` per step): messages hours apart are separate conversations.

    A query holding Chinese (Japanese, Korean) characters is fused with ``cjk_weights``:
    full text over single characters and pairs matches more look-alikes than English
    words do, so the vector counts for more there.
    """

    vector_weight: float = 0.4
    text_weight: float = 0.6
    cjk_weights: tuple[float, float] = (0.7, 0.3)
    """(vector, text) weights for a query with CJK characters."""
    pool: int = 60
    """Candidates fetched from each index."""
    context: tuple[float, ...] = (0.3, 0.3)
    """Share of a neighbour's strength (above the floor) passed on, at distance 1, 2, …"""
    context_count: int = 2
    """How many of the strongest neighbours pass strength on."""
    expand: int = 20
    """Top candidates whose neighbours join the pool even when neither index returned them."""
    hop_weight: float = 0.15
    """Weight of the second hop's list in the fusion: the turns nearest to the query's vector plus
    the mean of its ``hop_seeds`` best turns' vectors, so that evidence sharing little with the
    question but much with its first answers (the same place, person or thing in another
    session) joins the ranking."""
    cjk_hop_weight: float = 0.1
    """``hop_weight`` for a query with CJK characters."""
    hop_seeds: int = 3
    """How many of the first ranking's best turns the second hop starts from."""
    described_weight: float = 1.0
    """Weight of each of the two lists (by meaning, by words) a question about someone described
    instead of named (在小米上班的那个同事追的现场是谁的？) gets once the first ranking has named that
    person (我同事周斌跳槽去了小米): the question searched again with the name (``memory.retrieval``)."""
    cross_weight: float = 0.2
    """Weight of the list the query's words in the other script find (``memory.crossling``): a
    turn that says the query's thing in the other language ("roommate David" for 室友David).
    Where the query's own words are in no turn (full text found nothing: an English question over
    a Chinese memory) that list stands in for full text, at ``text_weight``."""
    speaker_share: float = 0.3
    """Added to the fused score of a turn said by someone the query names ("what has Melanie
    painted?"): in an imported chat between named people, a question about a person is mostly
    answered by what that person said. Roles (user, assistant) are not names."""
    other_person: float = 2.0
    """Taken from the fused score of a turn about someone other than the people the query introduces
    (``memory.people.someone_else``): it names one of them only under another relation ("HR Jason"
    for "my friend Jason's gift"), or names none of them and introduces someone else (产品经理Eric
    for 产品经理Leo). One name is worn by several people."""
    plan_share: float = 1.0
    """Added to the fused score of a turn that states a plan (it talks about a time after it was said:
    下周六和师傅张伟去爬山, "we fly to Kyoto next month") and holds a word of a question that asks which
    plans there are (师傅张伟接下来要忙哪些事？, "What are Caroline's plans?";
    ``memory.retrieval.asks_for_plans``): the person's small talk (师傅张伟发了好多朋友圈) shares the
    question's words as well and had filled the top five. A turn holding none of the question's words
    is not lifted (another person's plan). A question under a condition (下雨的话，我和张伟怎么安排？)
    asks for what was agreed for that case, not for the calendar: no share."""
    people_in_turn: int = 20
    """How many of the best candidates a question about two or more people (我领导林晓打球跟亲弟弟陈杰看电影，
    哪个日子更早？) looks at: the turns among them that name the asked people take those turns' places in
    turns by whom they name (``memory.retrieval``), each person's best before anyone's second, so that
    one person's many turns do not fill the top (0: off)."""

    def for_query(self, keywords: str) -> Fusion:
        """The fusion for this query: ``cjk_weights`` when it holds CJK characters."""
        if not has_cjk(keywords):
            return self
        return replace(
            self, vector_weight=self.cjk_weights[0], text_weight=self.cjk_weights[1], hop_weight=self.cjk_hop_weight
        )


@dataclass(frozen=True)
class Standard:
    """Mean and spread of one list's raw scores; ``floor`` is its lowest z-score."""

    mean: float
    spread: float
    floor: float

    @classmethod
    def of(cls, scores: Sequence[float], baseline: float | None = None, size: int = 0) -> Standard | None:
        """The standardisation of ``scores`` (None for an empty list).

        ``baseline`` is the score of a non-match (0 for BM25), counted once: a list of two strong
        matches does not standardise to nothing. A list of one match has no spread of its own (with
        the non-match counted once it stands one standard deviation up, whatever its score): there
        the non-match counts for each of the ``size`` candidates the list lacks, and a rare word's
        only match (an order number said once) stands as far above the pool as it is.
        """
        if not scores:
            return None
        missing = (max(1, size - 1) if len(scores) == 1 else 1) if baseline is not None else 0
        values = [*scores, *[baseline] * missing] if baseline is not None else list(scores)
        mean = sum(values) / len(values)
        spread = math.sqrt(sum((x - mean) ** 2 for x in values) / len(values)) or 1e-6
        return cls(mean, spread, (min(values) - mean) / spread)

    def z(self, score: float) -> float:
        """``score`` in standard deviations from the mean."""
        return (score - self.mean) / self.spread


@dataclass(frozen=True)
class Scale:
    """The normalisation of both lists; a progressive scan fixes it for the whole span."""

    vector: Standard | None
    text: Standard | None

    @classmethod
    def of(cls, vector: Sequence[Scored], text: Sequence[Scored]) -> Scale:
        """The scale of these two candidate lists: BM25's non-match scores 0 (for a list of one match, each
        turn of the vector list's pool it leaves out: BENCHMARKS.md, "An order number said once")."""
        return cls(Standard.of([s.score for s in vector]), Standard.of([s.score for s in text], 0.0, len(vector)))


@dataclass(frozen=True)
class Candidate:
    """A turn as one search ranks it: its score (fused, or one index's) and, for hybrid search, its evidence."""

    turn: Turn
    score: float
    evidence: Evidence | None = None
    someone_else: bool = False
    """Lowered as being about someone else than the asked people (``Fusion.other_person``)."""


def normalise_bm25(scores: Sequence[float]) -> list[float]:
    """BM25 scores as fractions of the best one (the full-text-only mode's similarity)."""
    top = max(scores, default=0.0)
    return [s / top if top > 0 else 0.0 for s in scores]


def fuse(
    vector: Sequence[Scored],
    text: Sequence[Scored],
    fusion: Fusion,
    scale: Scale,
    hop: Sequence[Scored] = (),
    cross: Sequence[Scored] = (),
    unembedded: frozenset[str] = frozenset(),
    named: Sequence[tuple[Sequence[Scored], bool]] = (),
) -> tuple[dict[str, float], dict[str, Turn], float]:
    """Mixed z-scores per turn id, the turns, and the floor (the score of a turn in none of the lists).

    ``named`` are the lists of the question searched again with the name of the person it describes
    (``Fusion.described_weight``), each with whether it was searched by meaning, each standardised
    over its own scores.

    A turn of ``unembedded`` (waiting for its vector) is mixed from the word lists alone: the
    vector lists did not pass over it, they could not see it (its vector's lowest score would
    rank an exact match of the query's words below every embedded turn).
    """
    turns: dict[str, Turn] = {}
    parts: list[tuple[float, Standard, dict[str, float]]] = []
    by_meaning: list[bool] = []
    for weight, items, standard, meaning in (
        (fusion.vector_weight, vector, scale.vector, True),
        (fusion.text_weight, text, scale.text, False),
        (fusion.hop_weight, hop, Standard.of([s.score for s in hop]) if hop else None, True),
        # the query's words in the other script stand in for its own where those are in no turn at all
        # (an English question over a Chinese memory): the only words that can be matched
        (
            fusion.cross_weight if text else fusion.text_weight,
            cross,
            Standard.of([s.score for s in cross], 0.0) if cross else None,
            False,
        ),
        *(
            (fusion.described_weight, items, Standard.of([s.score for s in items]) if items else None, meaning)
            for items, meaning in named
        ),
    ):
        if standard is None:
            continue  # this index had nothing at all for the query: the other decides alone
        parts.append((weight, standard, {s.turn.id: standard.z(s.score) for s in items}))
        by_meaning.append(meaning)
        for item in items:
            turns.setdefault(item.turn.id, item.turn)
    total = sum(weight for weight, _, _ in parts) or 1.0
    floor = sum(weight * standard.floor for weight, standard, _ in parts) / total
    scores = {
        turn_id: sum(weight * z.get(turn_id, standard.floor) for weight, standard, z in parts) / total
        for turn_id in turns
    }
    by_words = [part for part, meaning in zip(parts, by_meaning, strict=True) if not meaning]
    words_total = sum(weight for weight, _, _ in by_words)
    for turn_id in unembedded & turns.keys() if words_total > 0 else ():
        scores[turn_id] = sum(weight * z.get(turn_id, standard.floor) for weight, standard, z in by_words) / words_total
    return scores, turns, floor


def spread_context(scores: dict[str, float], turns: dict[str, Turn], floor: float, fusion: Fusion) -> dict[str, float]:
    """Each turn's score plus the shares of its strongest neighbours' strength (neighbours in context only).

    Only a turn above the floor has strength to pass on: each one hands its shares to its neighbours,
    and a turn that received none keeps its score.
    """
    position = {(t.session_id, t.turn_index): turn_id for turn_id, t in turns.items()}
    received: dict[str, list[float]] = {}
    for turn_id, turn in turns.items():
        strength = scores.get(turn_id, floor) - floor
        if strength <= 0.0:
            continue
        for distance, share in enumerate(fusion.context, start=1):
            for index in (turn.turn_index - distance, turn.turn_index + distance):
                other = position.get((turn.session_id, index))
                if other is not None and abs(turns[other].timestamp - turn.timestamp) <= distance * CONTEXT_GAP:
                    received.setdefault(other, []).append(share * strength)
    final: dict[str, float] = {}
    for turn_id in turns:
        shares = received.get(turn_id)
        score = scores.get(turn_id, floor)
        final[turn_id] = score + sum(sorted(shares, reverse=True)[: fusion.context_count]) if shares else score
    return final


def words_before_neighbours(
    scores: dict[str, float], turns: dict[str, Turn], wanted: frozenset[str], reach: int
) -> dict[str, float]:
    """``scores`` where a turn holding none of the query's terms (``wanted``) no longer outranks a
    turn next to it in context that holds some: it is placed just below that neighbour.

    The strength ``spread_context`` passes on, added to a close vector, could lift the turn said
    after a match above the match itself: after "客户 Cindy 对花生过敏" came "我下周六去北京出差",
    whose e5 cosine to 花生 was the higher of the two (0.885 against 0.861), and it ranked first
    for 花生. The neighbour keeps its place right after the match (the answer is often next to
    the turn whose words match the question). Only the best ``reach`` turns are looked at.
    """
    if not wanted:
        return scores
    position = {(t.session_id, t.turn_index): turn_id for turn_id, t in turns.items()}
    holds: dict[str, bool] = {}

    def holding(turn_id: str) -> bool:
        if turn_id not in holds:
            holds[turn_id] = not wanted.isdisjoint(content_terms(turns[turn_id].text))
        return holds[turn_id]

    final = dict(scores)
    for turn_id in sorted(scores, key=lambda i: -scores[i])[:reach]:
        turn = turns[turn_id]
        if holding(turn_id):
            continue
        for sign in (-1, 1):
            other = position.get((turn.session_id, turn.turn_index + sign))
            if other is None or not in_context(turn, turns[other]):
                continue
            if final[turn_id] > final[other] and holding(other):
                final[turn_id] = final[other] - _BELOW
    return final


_BELOW = 1e-3
"""How far below the neighbour holding the query's words a turn holding none of them is placed."""


def speakers_named(query: str, turns: Iterable[Turn]) -> frozenset[str]:
    """The speakers of ``turns`` (named ones, not bare roles) whose name the query holds as a word."""
    names = {m.speaker for t in turns for m in t.messages if m.speaker and m.speaker != m.role}
    lowered = query.casefold()
    return frozenset(
        name
        for name in names
        if (name.casefold() in lowered)
        if has_cjk(name) or re.search(rf"(?<!\w){re.escape(name.casefold())}(?!\w)", lowered)
    )

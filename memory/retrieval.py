"""Search over stored turns: hybrid candidates, one fused score, neighbours, time ranges.

Principle from the seed: retrieval is a search engine; the LLM judges. The retriever
finds candidates honestly — each with a similarity in [0, 1], its time and its anchors —
and leaves meaning to the caller.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Collection, Container, Mapping, Sequence
from concurrent.futures import Future
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta, tzinfo
from pathlib import Path

import numpy as np
import numpy.typing as npt

from huichat.memory.calibration import CALIBRATION, Evidence, EvidenceMaker, Reference, calibrated, stands_out
from huichat.memory.config import RetrieverConfig, TierPrior
from huichat.memory.crossling import chinese_words, cross_terms, translations
from huichat.memory.deadline import in_background
from huichat.memory.embedding import Embedder
from huichat.memory.filters import (
    About,
    Filter,
    In,
    Not,
    clamp_utc,
    combine,
    excluding,
    parse_filter,
    said_only,
    said_or_about,
    status_filter,
    time_range_filter,
)
from huichat.memory.fusion import (
    Candidate,
    Fusion,
    Scale,
    fuse,
    normalise_bm25,
    speakers_named,
    spread_context,
    words_before_neighbours,
)
from huichat.memory.people import described, introduced, mentioned, restated, someone_else
from huichat.memory.results import (
    Mode,
    OnRound,
    ScanRound,
    Scored,
    SearchHit,
    SearchRequest,
    SearchResults,
)
from huichat.memory.store import TurnStore
from huichat.memory.timeparse import QueryTime, TimeRange, TimeResolver
from huichat.memory.turns import ROLE_MEMBER, ROLE_REPRESENTATIVE, Turn, in_context
from huichat.memory.words import (
    both_scripts,
    chinese_names,
    content_terms,
    has_cjk,
    named,
    names,
    names_share,
    words_share,
)


@dataclass(frozen=True)
class Ask:
    """One question to the index within a search: its words, where to look, how many, how."""

    keywords: str
    where: Filter | None
    limit: int
    mode: Mode
    scale: Scale | None = None
    """The scale of a whole span searched at once (the progressive scan's weeks share it)."""
    lists: tuple[list[Scored], list[Scored]] | None = None
    """The candidate lists, when they were already read."""


@dataclass(frozen=True)
class Described:
    """What a question about someone described instead of named finds out (``Retriever._named``)."""

    by_meaning: list[Scored] = field(default_factory=list)
    """The question searched again by meaning with the person's relation word and name."""
    by_words: list[Scored] = field(default_factory=list)
    """The same by words."""
    by_restated: list[Scored] = field(default_factory=list)
    """The restated question (below) searched by meaning: what is asked of the person, without the
    description's words, which the first two lists already weigh."""
    restated: str | None = None
    """The question as if it had named the person ("姐姐赵芳捎点解渴的,带啥好?" for "给四川籍的那位姐姐捎点解渴的，
    带啥好？"), when a turn of the first ranking said the description of them; None otherwise."""
    name: str = ""
    """The person's name (赵芳) when the question is restated, keyed as ``memory.people.introduced`` keys it."""

    @property
    def lists(self) -> tuple[tuple[list[Scored], bool], ...]:
        """The lists, each with whether it was searched by meaning (``fusion.fuse``'s ``named``)."""
        return (self.by_meaning, True), (self.by_words, False), (self.by_restated, True)


@dataclass(frozen=True)
class _AsNamed:
    """A described question's candidates that give the person's name, judged against it as restated
    with that name too (``Described.restated``): each keeps the evidence that makes it the likelier match.

    A question that describes someone names no one, and the turns about them hold few of its words:
    in the hard Chinese benchmark's store "我姐姐赵芳只喝柠檬水" (one pair of "给四川籍的那位姐姐捎点解渴的，
    带啥好？") was judged 0.617 under it and "亲姐赵芳老家是四川的" 0.531, below the threshold (0.62), so the
    search answered nothing. Once a turn has said who is described, what is asked of them is judged as
    the question that names them would be (0.98 both). Against the restated question a turn that gives
    the name is close whatever it says of them, and it would lift the turns ranked above it (a ranking's
    similarity never rises along it): so the search also reads the restated question for the people it
    asks about, and another sister's turns are about someone else (``Retriever._others_lowered``),
    ranked lower and never judged as named. No inheritance from the turn before is taken off: a turn
    that gives the name is about the person, whatever was said before it."""

    person: Mapping[str, frozenset[int]]
    """The name, keyed as ``memory.people.introduced`` keys it (only turns that give it are judged so)."""
    query: npt.NDArray[np.float32]
    evidence: EvidenceMaker
    wanted: frozenset[str]

    def judged(
        self,
        turn: Turn,
        vector: npt.NDArray[np.float32] | None,
        asked: Evidence,
        across: Mapping[str, Collection[str]],
    ) -> Evidence:
        """``asked`` (the turn's evidence under the question as asked), or the restated question's when
        that makes the turn the likelier match (``vector``: the turn's, at unit length; None: none yet)."""
        if vector is None or asked.cosine is None or not mentioned(self.person, turn.text):
            return asked
        words = words_share(self.wanted, turn.text, across)
        named = _evidence_of(self.evidence, turn, float(vector @ self.query), words)
        return named if CALIBRATION.probability(named) > CALIBRATION.probability(asked) else asked


def _evidence_of(
    make: EvidenceMaker,
    turn: Turn,
    cosine: float | None,
    words: float,
    bm25: float = 0.0,
    before: float | None = None,
    names: float = 1.0,
) -> Evidence:
    """One candidate's ``Evidence`` for the query ``make`` was made for (BM25 is carried for the
    calibration's dump, not calibrated: 0 where no full-text score applies)."""
    return make(
        cosine,
        bm25,
        has_cjk(turn.text),
        words,
        before=before,
        names=names,
        length=len(turn.text),
        mixed=both_scripts(turn.text),
    )


Judge = Callable[[list[Candidate]], list[Candidate]]
"""Gives the candidates a hybrid ranking kept their calibration's evidence (``Retriever._candidates``)."""

_JUDGED = 10
"""How many of a hybrid ranking's best candidates are judged (``calibrated``) whatever the ``top_k``."""
_DESCRIBED_REACH = 10
"""How many of the first ranking's best turns are read for the name of a person asked about by description."""
_RELATION_POOL = 200
"""How many turns holding the relation word are ranked by the description's meaning when the first
ranking names no one who fits it (``Retriever._by_description``)."""
_RELATION_READ = 3
"""How many of those, best first, are read for someone introduced under the relation."""

_NEAREST_REACH = timedelta(days=3 * 365)
"""How far from an empty range the nearest turns are looked for when the query has no keywords."""


@dataclass(eq=False)
class Retriever:
    """Hybrid search with time resolution, progressive scan and neighbour expansion."""

    store: TurnStore
    embedder: Embedder
    config: RetrieverConfig
    resolver: TimeResolver
    zone: tzinfo
    fusion: Fusion = field(default_factory=Fusion)
    prior: TierPrior = field(default_factory=lambda: TierPrior(long_term=0.0, working=0.0, archive=0.0))
    """A small ranking nudge per tier (none unless the lifecycle gives one)."""
    reference_dir: Path | None = None
    """Where the calibration's reference is kept once measured (None: measured by every process)."""
    _reference: Reference | None = field(default=None, init=False, repr=False)

    # ------------------------------------------------------------- candidates

    def _lists(self, ask: Ask) -> tuple[list[Scored], list[Scored]]:
        keywords, where = ask.keywords, ask.where
        pool = max(ask.limit, self.fusion.pool)
        vector: list[Scored] = []
        text: list[Scored] = []
        pending = None
        if ask.mode in ("hybrid", "text") and keywords.strip():
            pending = self._text_beside(keywords, pool, where)
        if ask.mode in ("hybrid", "vector"):
            vector = self.store.vector_search(self.embedder.embed_query(keywords or " "), pool, where)
        if pending is not None:
            text = pending.result()
        return vector, text

    @property
    def reference_ready(self) -> bool:
        """True once the reference is in memory (every search after the first)."""
        return self._reference is not None

    @property
    def reference(self) -> Reference:
        """What "no match" looks like to this embedder (measured at the first search)."""
        if self._reference is None:
            self._reference = Reference.load_or_measure(self.embedder, self.reference_dir)
        return self._reference

    def _candidates(self, ask: Ask) -> tuple[list[Candidate], Judge | None]:
        """Candidates best first and, for hybrid ones, what gives them their evidence for calibration."""
        keywords, mode = ask.keywords, ask.mode
        fusion = self.fusion.for_query(keywords)
        crossing = self._cross_search(keywords, fusion, ask.where) if mode == "hybrid" else None
        vector, text = ask.lists or self._lists(ask)
        if mode == "vector":
            return [Candidate(s.turn, max(0.0, min(1.0, s.score))) for s in vector], None
        if mode == "text":
            shares = normalise_bm25([s.score for s in text])
            return [Candidate(s.turn, n) for s, n in zip(text, shares, strict=True)], None
        scale = ask.scale or Scale.of(vector, text)
        cross = crossing.result() if crossing is not None else []
        looked_up = {s.turn.id for s in (*text, *cross)}
        unembedded = frozenset(self._without_vector(list(looked_up)))
        wanted = content_terms(keywords)
        scores, turns, floor = self._fused(vector, text, (), fusion, scale, ask.where, cross, unembedded, wanted)
        reach = max(ask.limit, fusion.pool)
        hop = (
            self._second_hop(keywords, scores, turns, fusion, reach, ask.where)
            if fusion.hop_weight > 0 and scores
            else []
        )
        person = self._named(keywords, scores, turns, reach, ask.where) if fusion.described_weight > 0 else Described()
        by_name = person.lists
        if hop or any(items for items, _ in by_name):
            scores, turns, floor = self._fused(
                vector, text, hop, fusion, scale, ask.where, cross, unembedded, wanted, by_name
            )
        named = speakers_named(keywords, turns.values()) if fusion.speaker_share > 0 else frozenset()
        for turn_id, turn in turns.items():
            if named and any(m.speaker in named for m in turn.messages):
                scores[turn_id] = scores.get(turn_id, floor) + fusion.speaker_share
        if fusion.plan_share > 0 and asks_for_plans(keywords):
            for turn_id, turn in turns.items():
                if states_plan(turn) and words_share(wanted, turn.text) > 0:
                    scores[turn_id] = scores.get(turn_id, floor) + fusion.plan_share
        others = self._others_lowered(person.restated or keywords, turns, scores, floor, fusion)
        ranked = sorted(turns.values(), key=lambda t: (-scores.get(t.id, floor), -t.timestamp.timestamp()))
        cosines = {s.turn.id: s.score for s in vector}
        lowest = min(cosines.values(), default=0.0)
        bm25 = {s.turn.id: s.score for s in text}
        # embed_query is cached: this is the vector the search just used
        evidence = self.reference.evidence(self.embedder.embed_query(keywords or " "))
        wanted_names = names(keywords)
        as_named = self._as_named(person)

        def judged(kept: list[Candidate]) -> list[Candidate]:
            # the word lists' turns were looked up above; only neighbours joined since are looked up here
            unknown = [c.turn.id for c in kept if c.turn.id not in cosines and c.turn.id not in looked_up]
            waiting = unembedded | self._without_vector(unknown)
            # a query's word said in the other script is held as well (tent: 帐篷)
            across = translations(keywords, self.reference_dir)
            # the candidates' own vectors, for their cosine to the restated question (one look-up)
            unit = (
                {}
                if as_named is None
                else self.store.unit_vectors([c.turn.id for c in kept if c.turn.id not in waiting])
            )

            def of(turn: Turn) -> Evidence:  # a turn still waiting for its vector has no cosine to give
                vectorless = turn.id in waiting
                asked = _evidence_of(
                    evidence,
                    turn,
                    None if vectorless else cosines.get(turn.id, lowest),
                    words_share(wanted, turn.text, across),
                    bm25.get(turn.id, 0.0),
                    before=None if vectorless else _inherited_from(turn, turns, cosines, bm25),
                    names=names_share(wanted_names, turn.text),
                )
                if as_named is None or turn.id in others:
                    return asked
                return as_named.judged(turn, unit.get(turn.id), asked, across)

            return [replace(c, evidence=of(c.turn)) for c in kept]

        return [Candidate(t, scores.get(t.id, floor), someone_else=t.id in others) for t in ranked], judged

    def _others_lowered(
        self, keywords: str, turns: dict[str, Turn], scores: dict[str, float], floor: float, fusion: Fusion
    ) -> set[str]:
        """Lower the turns about someone else than the people the query introduces ("HR Jason" for
        "my friend Jason's gift", ``memory.people.someone_else``) by ``Fusion.other_person``; their ids."""
        if fusion.other_person <= 0:
            return set()
        words = chinese_words(self.reference_dir)
        wanted = introduced(keywords, words)
        if not wanted:
            return set()
        lowered = {turn_id for turn_id, turn in turns.items() if someone_else(wanted, turn.text, words)}
        for turn_id in lowered:
            scores[turn_id] = scores.get(turn_id, floor) - fusion.other_person
        return lowered

    def _fused(
        self,
        vector: list[Scored],
        text: list[Scored],
        hop: list[Scored] | tuple[()],
        fusion: Fusion,
        scale: Scale,
        where: Filter | None,
        cross: list[Scored] | tuple[()] = (),
        unembedded: frozenset[str] = frozenset(),
        wanted: frozenset[str] = frozenset(),
        named: Sequence[tuple[Sequence[Scored], bool]] = (),
    ) -> tuple[dict[str, float], dict[str, Turn], float]:
        """The fused scores (with the strongest candidates' neighbours' shares), the turns, the floor;
        a turn holding none of the query's terms (``wanted``) kept below its neighbour that holds some."""
        scores, turns, floor = fuse(vector, text, fusion, scale, hop, cross, unembedded, named)
        if fusion.context and scores:
            strongest = sorted(scores, key=lambda i: -scores[i])[: fusion.expand]
            around = self.store.neighbours([turns[i] for i in strongest], len(fusion.context), where)
            for turn in around:
                turns.setdefault(turn.id, turn)
            scores = spread_context(scores, turns, floor, fusion)
            scores = words_before_neighbours(scores, turns, wanted, 2 * fusion.expand)
        return scores, turns, floor

    def _cross_search(self, keywords: str, fusion: Fusion, where: Filter | None) -> Future[list[Scored]] | None:
        """The full-text search for the query's words in the other script (``memory.crossling``),
        started beside the two lists; None when the query has none the store can hold (Chinese
        words in a store without Chinese: an English query in an English memory searches twice)."""
        terms = cross_terms(keywords, self.reference_dir) if fusion.cross_weight > 0 and keywords.strip() else []
        if terms and not self.store.may_hold_cjk:
            terms = [term for term in terms if not has_cjk(term)]
        if not terms:
            return None
        return self._text_beside(" ".join(terms), fusion.pool, where)

    def _text_beside(self, text: str, limit: int, where: Filter | None) -> Future[list[Scored]]:
        """A full-text search started beside the vector search: LanceDB leaves the GIL while it
        searches (in a daemon thread: a search given up at its deadline must not hold the process)."""
        return in_background(self.store.in_same_version(lambda: self.store.text_search(text, limit, where)))

    def _second_hop(
        self,
        keywords: str,
        scores: dict[str, float],
        turns: dict[str, Turn],
        fusion: Fusion,
        limit: int,
        where: Filter | None,
    ) -> list[Scored]:
        """The nearest turns to the query moved towards its first best turns (a second hop).

        A turn said right after a better seed is no seed of its own: it is embedded after that
        seed's tail (``memory.turns.search_text``) and would pull towards its predecessor's words
        twice ("Any tips for juggling?" after the dentist's appointment overtook it for "Who is my
        dentist?"). Each seed pulls by its lead over the candidate ranked after the last seed.
        """
        ranked = sorted(scores, key=lambda i: -scores[i])
        seeds: list[str] = []
        for turn_id in ranked[: 2 * fusion.hop_seeds]:
            previous = turns[turn_id].prev_id
            if previous in seeds and in_context(turns[turn_id], turns[previous or ""]):
                continue
            seeds.append(turn_id)
            if len(seeds) == fusion.hop_seeds:
                break
        after = ranked.index(seeds[-1]) + 1
        below = scores[ranked[after]] if after < len(ranked) else min(scores.values())
        found = self.store.unit_vectors(seeds)
        weights = {i: scores[i] - below for i in found}
        total = sum(weights.values())
        if total <= 0.0:
            return []
        pull = sum(weights[i] * found[i] for i in found) / total
        point = self._unit_query(keywords or " ") + pull
        return self.store.vector_search(point.astype(np.float32), limit, where)

    def _named(
        self, keywords: str, scores: dict[str, float], turns: dict[str, Turn], limit: int, where: Filter | None
    ) -> Described:
        """For a question about someone described instead of named (在小米上班的那个同事追的现场是谁的？,
        ``memory.people.described``): the question searched again, by meaning and by words, with the
        name the first ranking gives that person — the first of its best ``_DESCRIBED_REACH`` turns
        that introduces someone under that relation and holds a word of the description (我同事周斌跳槽
        去了小米: 同事周斌), else the one the relation's own turns describe best (``_by_description``), else
        the first of the best turns that introduces someone under it. The description is said
        once, in one turn; what the question asks about the person is said in others, which name them.
        A description without a content word (我那个同事) is none: nothing is searched again.

        When a turn of the first ranking said the description of them (the first case), the question is
        also restated as if it had named them (``Described.restated``): searched by meaning as a third
        list, and for the judging of its candidates.
        A person found by meaning alone is not: judged as named, a guessed person's turns answered
        questions about someone the store never described (BENCHMARKS.md, "Judged as if the question
        had named them")."""
        words = chinese_words(self.reference_dir)
        # a description that says nothing (我那个同事叫什么来着) describes nobody
        asked = {k: v for k, v in described(keywords, words).items() if content_terms(v[1])} if scores else {}
        if not asked:
            return Described()
        people: list[tuple[str, int, str, bool]] = []
        for turn_id in sorted(scores, key=lambda i: -scores[i])[:_DESCRIBED_REACH]:
            text = turns[turn_id].text
            for name, relations in introduced(text, words).items():
                relation = min(relations & asked.keys(), default=None)
                if relation is not None:
                    word, description = asked[relation]
                    people.append((word + name, relation, name, words_share(description, text) > 0))
        fitting = next(((who, relation, name) for who, relation, name, fits in people if fits), None)
        person = fitting[0] if fitting else self._by_description(asked, words, where)
        if person is None:
            if not people:
                return Described()
            person = people[0][0]
        by_meaning = self.store.vector_search(self.embedder.embed_query(f"{keywords} {person}"), limit, where)
        by_words = self.store.text_search(f"{person} {keywords}", limit, where)
        question = restated(keywords, fitting[1], person) if fitting else None
        if fitting is None or question is None:
            return Described(by_meaning, by_words)
        by_restated = self.store.vector_search(self.embedder.embed_query(question), limit, where)
        return Described(by_meaning, by_words, by_restated, question, fitting[2])

    def _as_named(self, person: Described) -> _AsNamed | None:
        """The judging of a described question's candidates against it as restated (None: not restated)."""
        if person.restated is None:
            return None
        query = self._unit_query(person.restated)
        named = {person.name: frozenset[int]()}  # mentioned reads the keys only
        return _AsNamed(named, query, self.reference.evidence(query), content_terms(person.restated))

    def _unit_query(self, text: str) -> npt.NDArray[np.float32]:
        """``text`` embedded as a query (through the embedder's query cache), at unit length, as the
        store's ``unit_vectors`` are."""
        query = self.embedder.embed_query(text)
        unit: npt.NDArray[np.float32] = query / max(float(np.linalg.norm(query)), 1e-12)
        return unit

    def _by_description(
        self, asked: Mapping[int, tuple[str, str]], words: Container[str], where: Filter | None
    ) -> str | None:
        """The person (relation word and name) whom the turns holding the relation word describe best
        when the first ranking names no one who fits the description: those turns (the word's full-text
        hits, up to ``_RELATION_POOL``) ranked by the description's meaning alone, the first of the best
        ``_RELATION_READ`` that introduces someone under the relation. For "在小米上班的那个同事对什么过敏？"
        the first ranking fills with other colleagues' allergies, and 我同事周斌跳槽去了小米 falls out of its
        best turns; among what was said about colleagues, 在小米上班的 is nearest to it."""
        relation, (word, description) = min(asked.items())
        pool = self.store.text_search(word, _RELATION_POOL, where)
        vectors = self.store.unit_vectors([s.turn.id for s in pool])
        if not vectors:
            return None
        query = self._unit_query(description)
        ranked = sorted((s.turn for s in pool if s.turn.id in vectors), key=lambda t: -float(vectors[t.id] @ query))
        for turn in ranked[:_RELATION_READ]:
            names = [name for name, relations in introduced(turn.text, words).items() if relation in relations]
            if names:
                return word + names[0]
        return None

    def _without_vector(self, ids: list[str]) -> set[str]:
        """Those of ``ids`` that have no vector yet (none is looked up while every turn has one)."""
        if not ids or not self.store.pending_count:
            return set()
        return set(ids) - set(self.store.vectors(ids))

    def _recent(self, where: Filter | None, limit: int) -> list[Candidate]:
        """With no keywords (``query=""`` + a time filter): the most recent turns in range, what was
        said first, then questions, then turns whose reply was made from recalled memory (asked, or
        asked and answered from memory, about next Saturday says less about it than what was said)."""
        turns = self.store.where(where, limit=None)
        ordered = sorted(turns, key=lambda t: (bool(t.recalled_ids), _asks(t), -t.timestamp.timestamp()))
        return [Candidate(t, 1.0) for t in ordered[:limit]]

    def _ranked(self, ask: Ask) -> tuple[list[SearchHit], SearchHit | None]:
        """The best ``limit`` candidates with their similarity, and the best one below ``min_similarity``.

        Hybrid candidates get the calibrated similarity (``memory.calibration``); the
        single-index modes (benchmark baselines) keep their raw score and no threshold.
        """
        keywords, where, limit = ask.keywords, ask.where, ask.limit
        if keywords.strip():
            found, judge = self._candidates(ask)
            # the tier prior only reorders near-equals (a nudge to the fused score); similarities are not touched
            found.sort(key=lambda c: -(c.score + self._prior(c.turn)))
            found = _sources_first(found, 2 * limit, content_terms(keywords))
            if self.fusion.people_in_turn > 0 and ask.mode == "hybrid":  # a single index keeps its own order
                asked = introduced(keywords, chinese_words(self.reference_dir))
                found = _people_in_turn(found, self.fusion.people_in_turn, asked)
            # the evidence of the kept ones only: its word share reads each candidate's whole text
            pool = [c.turn.text for c in found]
            # judged over the same reach whatever ``top_k``: a similarity is made non-increasing along
            # the ranking, and a turn scored 0.9999 at top_k 5 and 0.9665 at top_k 2 when only the
            # first five held the later, likelier candidate
            found = judge(found[: max(limit, _JUDGED)]) if judge is not None else found[:limit]
        else:
            pool = []
            found = self._recent(where, limit)
        evidence = [c.evidence for c in found if c.evidence is not None]
        if len(evidence) != len(found) or not found:
            hits = [SearchHit(c.turn, round(c.score, 6), "hit", score=c.score) for c in found if c.score > 0]
            return self._folded(hits, where, keywords), None
        similarities = calibrated(evidence, lowered=[c.someone_else for c in found])
        lent = borrowed(found, evidence, similarities, self.config.min_similarity)
        scored = [
            SearchHit(c.turn, round(similarity, 6), "hit", score=c.score, evidence=c.evidence)
            for c, similarity, taken in zip(found, similarities, lent, strict=True)
            if not taken
        ][:limit]
        kept = _linked(scored, self.config.min_similarity, keywords, pool, lambda: chinese_words(self.reference_dir))
        below = next((h for h in scored if (h.similarity or 0.0) < self.config.min_similarity), None)
        shown = [h.evidence for h in scored if h.evidence is not None]
        if below is not None and not kept and stands_out(shown, self.config.min_similarity):
            below = replace(below, stands_out=True)
        return self._folded(kept, where, keywords), below

    def _prior(self, turn: Turn) -> float:
        return float(getattr(self.prior, turn.tier, 0.0))

    def _folded(self, hits: list[SearchHit], where: Filter | None, keywords: str) -> list[SearchHit]:
        """Each consolidation cluster once, at the place of its best hit, shown by its representative.

        The representative carries every other member in ``similar`` (all stay stored and
        recallable). When ``where`` leaves the representative out, the best member in range
        stands for the cluster instead; so does the member that was hit when it holds more of the
        query's words than the representative (near-duplicates alike but for a name: a search for
        the name shows the turn that holds it). A later hit of a cluster already shown is shown
        at its own place when it holds more of the query's words than every turn shown for its
        cluster (an imported export grouped answers about different projects: the one holding
        both words of "松果 PostgreSQL" was folded under another member that held one).
        """
        clusters = {h.turn.cluster_id for h in hits if h.turn.cluster_role in (ROLE_REPRESENTATIVE, ROLE_MEMBER)}
        if not clusters:
            return hits
        grouped: dict[str, list[Turn]] = {}
        for turn in self.store.where(In("cluster_id", tuple(sorted(clusters)))):
            grouped.setdefault(turn.cluster_id, []).append(turn)
        in_range = {t.id for t in self.store.where(combine(where, In("cluster_id", tuple(sorted(clusters)))))}
        wanted = content_terms(keywords)
        placed: list[tuple[SearchHit, Turn, str]] = []  # each hit kept, the turn shown, the cluster it folds
        best: dict[str, float] = {}  # per cluster, the largest share of the query's words shown for it
        for hit in hits:
            cluster = hit.turn.cluster_id if hit.turn.cluster_role in (ROLE_REPRESENTATIVE, ROLE_MEMBER) else ""
            if not cluster:
                placed.append((hit, hit.turn, ""))
                continue
            share = words_share(wanted, hit.turn.text) if wanted else 0.0
            if cluster in best:
                if share > best[cluster]:  # it holds query words no turn shown for its cluster holds
                    placed.append((hit, hit.turn, ""))
                    best[cluster] = share
                continue
            shown = next(
                (
                    t
                    for t in grouped.get(cluster, [hit.turn])
                    if t.cluster_role == ROLE_REPRESENTATIVE and t.id in in_range
                ),
                hit.turn,
            )
            shown_share = words_share(wanted, shown.text) if wanted and shown.id != hit.turn.id else share
            if shown_share < share:
                shown, shown_share = hit.turn, share
            placed.append((hit, shown, cluster))
            best[cluster] = shown_share
        on_show = {shown.id for _, shown, _ in placed}
        return [
            replace(hit, turn=shown, similar=tuple(t for t in grouped.get(cluster, ()) if t.id not in on_show))
            if cluster
            else hit
            for hit, shown, cluster in placed
        ]

    # ----------------------------------------------------------------- public

    def search(
        self,
        query: str,
        top_k: int | None = None,
        filter_expr: str | None = None,
        context_window: int = 0,
        enable_progressive_scan: bool = True,
        *,
        now: datetime,
    ) -> SearchResults:
        """The seed's call; everything else a search can ask for is in ``run``'s request."""
        return self.run(SearchRequest(query, now, top_k, filter_expr, context_window, enable_progressive_scan))

    def run(self, request: SearchRequest, on_round: OnRound | None = None) -> SearchResults:
        """Search memory as ``request`` says.

        Time words in the query are resolved against ``request.now`` (unless a range is
        given or resolving is off). A time that constrains the query keeps the turns said
        in it or talking about a time in it (their event ranges); a vague one triggers the
        progressive scan; a calendar date beside other words (a hint) ranks the turns in it
        first and excludes nothing. When the range holds fewer hits than asked, the best
        matches outside it follow, marked ``outside``. ``filter_expr`` raises
        ``FilterError`` when it cannot be parsed.
        """
        with self.store.one_version():
            return self._run(request, on_round)

    def _run(self, request: SearchRequest, on_round: OnRound | None) -> SearchResults:
        top_k = request.top_k or self.config.default_top_k
        parsed = parse_filter(request.filter_expr, self.zone) if request.filter_expr else None
        # what may ever come back, as a hit or as a neighbour: no tool traces, no failed turns, nothing in context
        allowed = combine(said_only(), status_filter(request.include_failed), excluding(request.exclude_ids))
        base = combine(parsed, allowed)
        asked = self._query_time(request)
        keywords = asked.keywords
        span = asked.range if asked.role in ("filter", "hint") else None
        # "我下周六要干嘛？", "what did I do yesterday?": the time is all the question asks about
        searched = "" if span is not None and asked.role == "filter" and asks_what_happens(keywords) else keywords
        rounds: list[ScanRound] = []
        below: SearchHit | None = None
        if span is None:
            ranked, below = self._ranked(Ask(keywords, base, top_k, request.mode))
        elif span.fuzzy and asked.role == "filter" and request.progressive and self.config.enable_progressive_scan:
            ranked = self._progressive(searched, span, base, top_k, request.now, request.mode, rounds, on_round)
        else:
            where = combine(base, _within(span, request.now))
            ranked, below = self._ranked(Ask(searched, where, top_k, request.mode))
        if span is not None:
            ranked = _placed(ranked, span, request.now)
            if len(ranked) < top_k and not (ranked and searched != keywords):  # what happens then: that is all
                ranked += self._outside(keywords, base, span, top_k - len(ranked), request.mode, request.now)
        results = self._with_neighbours(ranked, request.context_window, allowed)
        return SearchResults(
            tuple(results),
            request.query,
            keywords,
            span,
            tuple(rounds),
            request.filter_expr or "",
            asked.role if span is not None else "none",
            None if results else below,
        )

    def _query_time(self, request: SearchRequest) -> QueryTime:
        """The request's time: the range it gives, or the query's own time phrase and its role."""
        if request.time_range is not None:
            return QueryTime(request.query.strip(), request.time_range, "filter", "given")
        if not request.resolve_time:
            return QueryTime(request.query.strip(), None, "none")
        return self.resolver.read_query(request.query, request.now)

    def _outside(
        self, keywords: str, base: Filter | None, span: TimeRange, count: int, mode: Mode, now: datetime
    ) -> list[SearchHit]:
        """The best matches outside ``span`` (without keywords: the turns said nearest to it), marked outside."""
        where = combine(base, Not(_within(span, now)))
        if keywords.strip():
            hits, _ = self._ranked(Ask(keywords, where, count, mode))
        else:
            hits = [SearchHit(turn, 1.0) for turn in self._nearest(where, span, count)]
        return [replace(hit, outside=True) for hit in hits]

    def _nearest(self, where: Filter | None, span: TimeRange, count: int) -> list[Turn]:
        """Up to ``count`` turns said nearest to ``span``, looking a week either side, then ever further."""
        reach = timedelta(weeks=1)
        while True:
            around = self.store.where(combine(where, time_range_filter(span.start - reach, span.end + reach)))
            if len(around) >= count or reach > _NEAREST_REACH:
                break
            reach *= 4

        def distance(turn: Turn) -> timedelta:
            return max(span.start - turn.timestamp, turn.timestamp - span.end, timedelta(0))

        return sorted(around, key=distance)[:count]

    def search_with_progress(
        self,
        query: str,
        on_round: OnRound | None = None,
        max_weeks: int | None = None,
        *,
        now: datetime,
        top_k: int | None = None,
        time_range: TimeRange | None = None,
    ) -> SearchResults:
        """The seed's progressive scan: one week at a time from the most recent backwards.

        ``on_round(week_label, results)`` is called after each week. The scan stops early
        once a week holds a hit about as strong as the best match in the whole span.
        """
        top_k = top_k or self.config.default_top_k
        keywords, resolved = self.resolver.split_query(query, now)
        span = time_range or resolved
        weeks = max_weeks or self.config.max_scan_weeks
        if span is None:
            start = now - timedelta(weeks=weeks)
            span = TimeRange(start.astimezone(self.zone), now.astimezone(self.zone), "span", True, "")
        rounds: list[ScanRound] = []
        base = combine(said_only(), status_filter(include_failed=False))
        ranked = self._progressive(keywords, span, base, top_k, now, "hybrid", rounds, on_round, weeks)
        return SearchResults(tuple(ranked), query, keywords, span, tuple(rounds))

    # ------------------------------------------------------------------ scan

    def _progressive(
        self,
        keywords: str,
        span: TimeRange,
        extra: Filter | None,
        top_k: int,
        now: datetime,
        mode: Mode,
        rounds: list[ScanRound],
        on_round: OnRound | None,
        max_weeks: int | None = None,
    ) -> list[SearchHit]:
        weeks = max_weeks or self.config.max_scan_weeks
        end = min(span.end, now.astimezone(self.zone) + timedelta(minutes=1))
        floor = max(span.start, end - timedelta(weeks=weeks))
        whole = combine(extra, said_or_about(floor, end))
        # one search of the whole span fixes the scale for every week and gives the best match
        scale: Scale | None = None
        best_overall: list[SearchHit] = []
        if keywords.strip():
            ask = Ask(keywords, whole, 1, mode)
            lists = self._lists(ask)
            scale = Scale.of(*lists) if mode == "hybrid" else None
            best_overall, _ = self._ranked(replace(ask, scale=scale, lists=lists))
        # the scan ends one week after the week holding the best match of the whole span
        # (one more week: context spills strength onto the turn after a match)
        target = best_overall[0].score - 0.01 if best_overall else math.inf
        reached = False
        per_week = self.config.per_week_candidates
        found: dict[str, SearchHit] = {}
        focus_start = span.focus[0] if span.focus is not None else end
        for week_start, week_end in _scan_rounds(span, end, floor)[:weeks]:
            where = combine(extra, said_or_about(week_start, week_end))
            week_hits, _ = self._ranked(Ask(keywords, where, per_week, mode, scale))
            label = f"{week_start.astimezone(self.zone):%Y-%m-%d} – {(week_end - timedelta(seconds=1)).astimezone(self.zone):%Y-%m-%d}"
            rounds.append(ScanRound(label, week_start, week_end, tuple(week_hits)))
            if on_round is not None:
                on_round(label, week_hits)
            for hit in week_hits:
                found.setdefault(hit.turn.id, hit)
            if reached:
                break
            # never stop before the part of the span the phrase points at has been read
            reached = week_start <= focus_start and any(h.score >= target for h in found.values())
            if not keywords.strip() and len(found) >= top_k:
                break
        ordered = sorted(
            found.values(), key=lambda h: (-(h.score + self._prior(h.turn)), -h.turn.timestamp.timestamp())
        )[:top_k]
        # the weeks' similarities are each non-increasing; the merged ranking must read so too
        lowest = 0.0
        for i in range(len(ordered) - 1, -1, -1):
            lowest = max(lowest, ordered[i].similarity or 0.0)
            ordered[i] = replace(ordered[i], similarity=lowest)
        return ordered

    # ------------------------------------------------------------ neighbours

    def _with_neighbours(self, hits: list[SearchHit], window: int, allowed: Filter | None) -> list[SearchHit]:
        """Hits numbered by rank, each with its allowed neighbours (±``window``, no similarity of their own)."""
        hits = [replace(h, role="hit", hit_id=None, rank=i + 1) for i, h in enumerate(hits)]
        if not hits:
            return []
        if window <= 0:
            turns = self.store.with_next([h.turn for h in hits])
            return [replace(h, turn=t) for t, h in zip(turns, hits, strict=True)]
        around = self.store.neighbours([h.turn for h in hits], window, allowed)
        by_position = {(t.session_id, t.turn_index): t for t in around}
        hit_ids = {h.turn.id for h in hits}
        ordered: list[SearchHit] = []
        seen: set[str] = set()
        for hit in hits:
            for offset in range(-window, window + 1):
                turn = hit.turn if offset == 0 else by_position.get((hit.turn.session_id, hit.turn.turn_index + offset))
                if turn is None or turn.id in seen:
                    continue
                if offset != 0 and turn.id in hit_ids:
                    continue
                seen.add(turn.id)
                if offset == 0:
                    ordered.append(hit)
                else:
                    ordered.append(SearchHit(turn, None, "neighbor", hit.turn.id, hit.rank))
        turns = self.store.with_next([h.turn for h in ordered])
        return [replace(h, turn=t) for t, h in zip(turns, ordered, strict=True)]


BORROWED_SHARE = 0.2
"""A candidate whose own chance is under this share of the similarity it was lifted to is no hit (``borrowed``)."""


def borrowed(
    found: list[Candidate], evidence: list[Evidence], similarities: list[float], threshold: float
) -> list[bool]:
    """Which candidates are hits only by a likelier one ranked below them, and are no hits.

    A similarity is non-increasing along the ranking (``calibrated``): a candidate takes the chance of
    the likelier ones below it. That is right for the turn next to a match in its conversation (the
    answer after the question that holds the words), which the fusion ranks by its neighbour's
    strength. It is wrong for a turn of another conversation that the fusion put first: in a user's
    nine-turn memory 今天天气不错 (its own chance 0.14) stood above "My sister Zhao Fang drinks only
    lemonade" for 柠檬水 and was shown as a hit at 0.97. Such a candidate — its own chance under
    ``BORROWED_SHARE`` of its similarity, and within two turns of no hit of its session that stands
    on its own evidence (two lifted turns of one chat do not keep each other) — is left out.
    """
    if threshold <= 0:  # ``min_similarity: 0`` keeps every candidate
        return [False] * len(found)
    lifted = [
        similarity >= threshold and CALIBRATION.probability(e) < BORROWED_SHARE * similarity
        for e, similarity in zip(evidence, similarities, strict=True)
    ]
    # hits on their own evidence: the turns they lend to in their conversation keep their places
    own = [c.turn for c, s, up in zip(found, similarities, lifted, strict=True) if s >= threshold and not up]

    def beside_a_hit(turn: Turn) -> bool:
        return any(in_context(turn, other) and abs(other.turn_index - turn.turn_index) <= 2 for other in own)

    return [up and not beside_a_hit(c.turn) for c, up in zip(found, lifted, strict=True)]


def _sources_first(found: list[Candidate], reach: int, wanted: frozenset[str]) -> list[Candidate]:
    """The ranking with each turn whose reply was made from recalled turns placed after those of
    them the search also found among its best ``reach`` that hold a word of the query (``wanted``):
    asked again, the fact comes first, then the earlier answer that quoted it (which holds the
    question's words too, and ranked above it: with top_k 2 the fact itself was left out). What
    else that answer recalled stays where it ranks."""
    best = found[:reach]
    at = {c.turn.id: i for i, c in enumerate(best)}
    if not any(source in at for c in best for source in c.turn.recalled_ids):
        return found
    order: list[Candidate] = []
    placed: set[str] = set()
    for i, candidate in enumerate(best):
        for source in candidate.turn.recalled_ids:
            j = at.get(source, -1)
            if j > i and source not in placed and words_share(wanted, best[j].turn.text) > 0:
                order.append(best[j])
                placed.add(source)
        if candidate.turn.id not in placed:
            order.append(candidate)
            placed.add(candidate.turn.id)
    return order + found[reach:]


def _people_in_turn(found: list[Candidate], reach: int, asked: Mapping[str, frozenset[int]]) -> list[Candidate]:
    """The ranking with the turns among its best ``reach`` that name the asked people taken in turns
    by whom they name, for a question about two or more people (``asked``, as
    ``memory.people.introduced`` reads them): the best turn of each person before anyone's second.
    "我领导林晓打球跟亲弟弟陈杰看电影，哪个日子更早？" is answered by a turn about each, and 陈杰's small talk
    ("和弟弟陈杰聊了会儿天") had filled the top five above 林晓's only match. The people's turns take
    the places the fusion gave people's turns; a turn naming none of them (the message after a plan:
    "他说改到下午三点半了", or one about nobody asked) and one about someone else keep theirs."""
    if len(asked) < 2:
        return found
    best = found[:reach]
    whose = [frozenset() if c.someone_else else mentioned(asked, c.turn.text) for c in best]
    places = [i for i, people in enumerate(whose) if people]
    taken: dict[str, int] = {}
    left = list(places)
    order = list(best)
    for place in places:
        i = min(left, key=lambda j: (min(taken.get(p, 0) for p in whose[j]), j))
        left.remove(i)
        order[place] = best[i]
        for person in whose[i]:
            taken[person] = taken.get(person, 0) + 1
    return order + found[reach:]


def _linked(
    scored: list[SearchHit],
    threshold: float,
    keywords: str,
    pool: list[str],
    dictionary: Callable[[], Container[str]] = frozenset,
) -> list[SearchHit]:
    """The hits at or above ``threshold``, and those under it that hold a name of a hit ranked
    above them which the query does not hold (``SearchHit.linked_to``), in ranking order.

    The second step of a question is rarely close to the question itself: "Where is my dentist's
    office now?" finds "My dentist is Dr. Patel at the Riverside Clinic" (0.92), while "Riverside
    Clinic moved to 14 Elm Street" — ranked next by the second hop — sits at 0.26, under any
    threshold that keeps off-topic questions answerless. A name shared with a hit (Riverside
    Clinic) is what connects them: a name the query does not hold, no day or month, held by at most
    ``_LINK_RARE`` of the search's candidates (``pool``: a speaker of the whole conversation links
    nothing), of a hit that holds every name the query gives. Only ``scored`` (the search's best
    ``top_k``) is looked at, and never without a hit: a question with no hit stays without one.

    A Chinese name (``chinese_names``, told from a word by ``dictionary``) links too: "我那个在小米
    做事的室友讨厌吃什么？" finds "室友杨鹏跳槽去了小米", and "室友杨鹏不吃葱" is under the
    threshold. It is not held to ``_LINK_RARE``: a Chinese name is the whole of how a person is
    written, so every turn about that person holds it and the people a user talks about fill the
    candidates; instead a hit lends its Chinese names to at most ``_LINK_CJK`` hits under it, the
    best ranked.
    """
    kept: list[SearchHit] = []
    seeds: list[SearchHit] = []
    names_of: dict[str, dict[str, str]] = {}  # read once a candidate under the threshold needs them
    lent: dict[str, int] = {}  # links made by Chinese names alone, per hit above
    wanted: frozenset[str] | None = None
    for hit in scored:
        if (hit.similarity or 0.0) >= threshold:
            kept.append(hit)
            if hit.evidence is None or hit.evidence.names >= 1.0:  # it holds every name the query gives
                seeds.append(hit)
            continue
        if not seeds:
            continue
        if wanted is None:
            wanted = content_terms(keywords)
        held = content_terms(hit.turn.text)
        for above in seeds:
            its_names = names_of.get(above.turn.id)
            if its_names is None:
                its_names = names_of[above.turn.id] = named(above.turn.text)
                if has_cjk(above.turn.text):
                    its_names.update((name, name) for name in sorted(chinese_names(above.turn.text, dictionary())))
            shared = tuple(
                written
                for name, written in its_names.items()
                if name in held
                and name not in wanted
                and not _CALENDAR.fullmatch(name)
                and (has_cjk(name) or _rare(written, pool))
            )
            if not shared:
                continue
            if all(has_cjk(name) for name in shared):
                if lent.get(above.turn.id, 0) >= _LINK_CJK:
                    continue
                lent[above.turn.id] = lent.get(above.turn.id, 0) + 1
            kept.append(replace(hit, linked_to=above.turn.id, linked_by=shared))
            break
    return kept


_CALENDAR = re.compile(
    r"(mon|tues|wednes|thurs|fri|satur|sun)day"
    r"|january|february|march|april|may|june|july|august|september|october|november|december"
)
"""Capitalised, but times, not names: a day or a month links nothing."""

_LINK_RARE = 3
"""A name links two hits only while at most this many of the search's candidates hold it."""

_LINK_CJK = 2
"""A hit lends its Chinese names to at most this many hits under the threshold (the best ranked)."""


def _rare(written: str, pool: list[str]) -> bool:
    """True when ``written`` (a name) is held by at most ``_LINK_RARE`` of the search's candidates."""
    word = re.compile(rf"(?<!\w){re.escape(written)}(?!\w)", re.IGNORECASE)
    count = 0
    for text in pool:
        if word.search(text):
            count += 1
            if count > _LINK_RARE:
                return False
    return True


def _inherited_from(
    turn: Turn, turns: dict[str, Turn], cosines: dict[str, float], bm25: dict[str, float]
) -> float | None:
    """When ``turn`` is embedded after the tail of the turn before it, holds none of the query's
    words and that turn does (or is in the other script, where no word of either can show it:
    "capital of Australia" after a Chinese turn about a project lead sat at 0.97 for "我的眼科医生姓什么"):
    that turn's cosine, the whole of its closeness to the query being
    taken as ``turn``'s inheritance. None otherwise (a reply holding any of the query's words
    keeps its whole cosine: answers next to their question stay hits).

    The embedded tail weighs more than its share of the characters (an unrelated question right
    after "my cat is called Mochi" sat closer to "cat name Mochi" than the cat turn itself), so
    no share of it is trusted to be the turn's own.
    """
    previous = turns.get(turn.prev_id or "")
    if previous is None or previous.id not in cosines or not in_context(turn, previous):
        return None
    if bm25.get(turn.id, 0.0) > 0.0:
        return None
    if bm25.get(previous.id, 0.0) <= 0.0 and has_cjk(previous.text) == has_cjk(turn.text):
        return None
    return cosines[previous.id]


_AGENDA = re.compile(
    r"干嘛|干啥|干什么|干|做|安排|计划|打算|日程|行程|事情|事|忙|啥|活动|哪些"
    r"|(?<![A-Za-z])(?:do|does|did|doing|done|go|goes|going|went|happen|happens|happening|happened|plan|plans"
    r"|planned|planning|schedule|scheduled|agenda|anything|something|busy|up)(?![A-Za-z])",
    re.IGNORECASE,
)
"""Words that ask what happens (what is planned, what was done), not about any thing."""


def asks_what_happens(keywords: str) -> bool:
    """True when a query's words, its time phrase taken out, ask only what happens then
    ("我 要干嘛？", "what am I doing?", "去哪"): everything said in or about that time answers
    it, and no word of it could tell one such turn from another."""
    return not content_terms(_AGENDA.sub(" ", keywords))


_PLANS = re.compile(
    r"计划|安排|打算|行程|日程|要忙|接下来"
    r"|(?<![A-Za-z])(?:plan|plans|planned|planning|schedule|scheduled|upcoming|agenda)(?![A-Za-z])",
    re.IGNORECASE,
)
"""Words that ask which plans there are (what is arranged, what is coming up)."""
_CONDITION = re.compile(r"的话|如果|万一|要是|假如|(?<![A-Za-z])(?:if|in case|unless)(?![A-Za-z])", re.IGNORECASE)
"""Words that put a question under a condition (下雨的话…, "if the demo slips, …")."""


def asks_for_plans(keywords: str) -> bool:
    """True when a query asks which plans there are (我记过张伟的哪些计划？, 表妹接下来有哪些安排？,
    "What are Caroline's plans for the summer?"), not what was agreed for a case (票没了的话，跟亲姐的
    安排怎么改？: the answer there states no date)."""
    return bool(_PLANS.search(keywords)) and not _CONDITION.search(keywords)


def states_plan(turn: Turn) -> bool:
    """True when the turn talks about a time after it was said (后天, 下周六, "next month"): it states a plan."""
    return any(event.start > turn.timestamp for event in turn.events)


def _asks(turn: Turn) -> bool:
    """True when the turn's user message is a question (it ends with a question mark)."""
    said = [m.text for m in turn.messages if m.is_chat and m.role == "user"]
    return bool(said) and said[-1].rstrip().endswith(("?", "？"))


def _within(span: TimeRange, now: datetime) -> Filter:
    """The turns said in ``span`` or talking about a time in it; for a span still to come (下周六,
    "next month"), only those talking about it: what was said about next Saturday, not what
    happens to carry a later timestamp (an import's clock, a test's)."""
    if span.start > now:
        return About(clamp_utc(span.start), clamp_utc(span.end))
    return said_or_about(span.start, span.end)


def _placed(hits: list[SearchHit], span: TimeRange, now: datetime) -> list[SearchHit]:
    """The hits that were said in ``span`` or talk about a time in it, each saying which.

    The index's filter may over-match a turn with more event ranges than it has slots
    (``memory.index_schema.EVENT_SLOTS``); its exact ranges decide here.
    """
    placed = []
    for hit in hits:
        said = span.start <= hit.turn.timestamp < span.end and span.start <= now
        about = tuple(e for e in hit.turn.events if e.overlaps(span.start, span.end))
        if said or about:
            placed.append(replace(hit, said_in_range=said, about=about))
    return placed


def _scan_rounds(span: TimeRange, end: datetime, floor: datetime) -> list[tuple[datetime, datetime]]:
    """The rounds of a progressive scan, most recent first.

    A vague phrase covers everything up to now (no recent turn is skipped) but points at a
    part of it (``span.focus``, e.g. 1–8 weeks ago for 前段时间): the time after the focus
    is one round, the focus is read in three, then the scan goes on a week at a time.
    """
    bounds: list[tuple[datetime, datetime]] = []
    cursor = end
    if span.focus is not None:
        focus_start, focus_end = max(span.focus[0], floor), min(span.focus[1], end)
        if focus_end < cursor:
            bounds.append((max(focus_end, floor), cursor))
            cursor = max(focus_end, floor)
        step = max((cursor - focus_start) / 3, timedelta(weeks=1))
        while cursor > focus_start:
            bounds.append((max(focus_start, cursor - step), cursor))
            cursor = bounds[-1][0]
    while cursor > floor:
        bounds.append((max(floor, cursor - timedelta(weeks=1)), cursor))
        cursor = bounds[-1][0]
    return bounds

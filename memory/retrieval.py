"""Search over stored turns: hybrid candidates, one fused score, neighbours, time ranges.

Principle from the seed: retrieval is a search engine; the LLM judges. The retriever
finds candidates honestly — each with a similarity in [0, 1], its time and its anchors —
and leaves meaning to the caller.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta, tzinfo
from typing import Literal

from memory.config import RetrieverConfig
from memory.embedding import Embedder
from memory.filters import Filter, combine, parse_filter, time_range_filter
from memory.store import Scored, TurnStore
from memory.timeparse import TimeRange, TimeResolver
from memory.transcript import format_local_time
from memory.turns import Turn

ContextRole = Literal["hit", "neighbor"]
Mode = Literal["hybrid", "vector", "text"]


@dataclass(frozen=True)
class SearchHit:
    """One search result: a turn, its similarity and whether it was hit or is a neighbour."""

    turn: Turn
    similarity: float
    role: ContextRole = "hit"
    hit_id: str | None = None
    """For a neighbour, the hit it surrounds."""
    rank: int = 0

    @property
    def _context_role(self) -> ContextRole:
        """The seed's name for ``role``."""
        return self.role


@dataclass(frozen=True)
class ScanRound:
    """One week of a progressive scan."""

    label: str
    start: datetime
    end: datetime
    found: tuple[SearchHit, ...]


@dataclass(frozen=True)
class SearchResults:
    """The outcome of a search: results in order, plus how time was understood."""

    results: tuple[SearchHit, ...]
    query: str
    keywords: str
    time_range: TimeRange | None = None
    rounds: tuple[ScanRound, ...] = ()
    filter_text: str = ""

    def __iter__(self) -> Iterator[SearchHit]:
        return iter(self.results)

    def __len__(self) -> int:
        return len(self.results)

    def __getitem__(self, index: int) -> SearchHit:
        return self.results[index]

    @property
    def hits(self) -> list[SearchHit]:
        """Only the hits (no neighbours)."""
        return [r for r in self.results if r.role == "hit"]


OnRound = Callable[[str, list[SearchHit]], None]


@dataclass
class FusionWeights:
    """How vector and full-text candidates become one score (measured in BENCHMARKS.md)."""

    vector: float = 0.7
    text: float = 0.3
    candidates: int = 60
    rrf_k: float = 60.0
    method: Literal["weighted", "rrf"] = "weighted"
    extra: dict[str, float] = field(default_factory=dict)


def _normalise_bm25(scores: Sequence[float]) -> list[float]:
    if not scores:
        return []
    top = max(scores)
    return [s / top if top > 0 else 0.0 for s in scores]


def fuse(vector: Sequence[Scored], text: Sequence[Scored], weights: FusionWeights) -> list[tuple[Turn, float]]:
    """Merge two candidate lists into one ranking with a score in [0, 1]."""
    turns: dict[str, Turn] = {}
    vec_score: dict[str, float] = {}
    txt_score: dict[str, float] = {}
    vec_rank: dict[str, int] = {}
    txt_rank: dict[str, int] = {}
    for rank, item in enumerate(vector):
        turns.setdefault(item.turn.id, item.turn)
        vec_score[item.turn.id] = max(0.0, min(1.0, item.score))
        vec_rank[item.turn.id] = rank
    for rank, (item, norm) in enumerate(zip(text, _normalise_bm25([t.score for t in text]), strict=True)):
        turns.setdefault(item.turn.id, item.turn)
        txt_score[item.turn.id] = norm
        txt_rank[item.turn.id] = rank
    fused: list[tuple[Turn, float]] = []
    for turn_id, turn in turns.items():
        if weights.method == "rrf":
            raw = sum(
                1.0 / (weights.rrf_k + r + 1) for r in (vec_rank.get(turn_id), txt_rank.get(turn_id)) if r is not None
            )
            score = raw * (weights.rrf_k + 1) / 2
        else:
            score = weights.vector * vec_score.get(turn_id, 0.0) + weights.text * txt_score.get(turn_id, 0.0)
        fused.append((turn, score))
    fused.sort(key=lambda pair: (-pair[1], -pair[0].timestamp.timestamp()))
    return fused


class Retriever:
    """Hybrid search with time resolution, progressive scan and neighbour expansion."""

    def __init__(
        self,
        store: TurnStore,
        embedder: Embedder,
        config: RetrieverConfig,
        resolver: TimeResolver,
        zone: tzinfo,
        weights: FusionWeights | None = None,
    ) -> None:
        self.store = store
        self.embedder = embedder
        self.config = config
        self.resolver = resolver
        self.zone = zone
        self.weights = weights or FusionWeights()

    def format_search_result(self, result: SearchHit) -> str:
        """The seed's format for one result, times shown in this retriever's zone."""
        return format_search_result(result, self.zone)

    # ------------------------------------------------------------- candidates

    def _candidates(self, keywords: str, where: Filter | None, limit: int, mode: Mode) -> list[tuple[Turn, float]]:
        pool = max(limit, self.weights.candidates)
        vector: list[Scored] = []
        text: list[Scored] = []
        if mode in ("hybrid", "vector"):
            vector = self.store.vector_search(self.embedder.embed_query(keywords or " "), pool, where)
        if mode in ("hybrid", "text") and keywords.strip():
            text = self.store.text_search(keywords, pool, where)
        if mode == "vector":
            return [(s.turn, max(0.0, min(1.0, s.score))) for s in vector]
        if mode == "text":
            return list(zip([s.turn for s in text], _normalise_bm25([s.score for s in text]), strict=True))
        return fuse(vector, text, self.weights)

    def _recent(self, where: Filter | None, limit: int) -> list[tuple[Turn, float]]:
        """With no keywords (``query=""`` + a time filter): the most recent turns in range."""
        turns = self.store.where(where, limit=None)
        return [(t, 1.0) for t in sorted(turns, key=lambda t: t.timestamp, reverse=True)[:limit]]

    def _ranked(self, keywords: str, where: Filter | None, limit: int, mode: Mode) -> list[SearchHit]:
        pairs = self._candidates(keywords, where, limit, mode) if keywords.strip() else self._recent(where, limit)
        floor = self.config.min_similarity
        hits = [SearchHit(turn, round(score, 6), "hit") for turn, score in pairs if score > 0 and score >= floor]
        return hits[:limit]

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
        time_range: TimeRange | None = None,
        resolve_time: bool = True,
        mode: Mode = "hybrid",
        on_round: OnRound | None = None,
    ) -> SearchResults:
        """Search memory.

        Time words in ``query`` are resolved against ``now`` (unless ``time_range`` is
        given or ``resolve_time`` is false): a precise time filters the search, a vague
        one triggers the progressive scan. ``filter_expr`` uses the kernel's grammar and
        raises ``FilterError`` when it cannot be parsed.
        """
        top_k = top_k or self.config.default_top_k
        parsed = parse_filter(filter_expr, self.zone) if filter_expr else None
        keywords = query.strip()
        if time_range is None and resolve_time:
            keywords, time_range = self.resolver.split_query(query, now)
        if (
            time_range is not None
            and time_range.fuzzy
            and enable_progressive_scan
            and self.config.enable_progressive_scan
        ):
            rounds: list[ScanRound] = []
            ranked = self._progressive(keywords, time_range, parsed, top_k, now, mode, rounds, on_round)
            results = self._with_neighbours(ranked, context_window)
            return SearchResults(tuple(results), query, keywords, time_range, tuple(rounds), filter_expr or "")
        where = combine(parsed, time_range_filter(time_range.start, time_range.end) if time_range else None)
        ranked = self._ranked(keywords, where, top_k, mode)
        results = self._with_neighbours(ranked, context_window)
        return SearchResults(tuple(results), query, keywords, time_range, (), filter_expr or "")

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
        ranked = self._progressive(keywords, span, None, top_k, now, "hybrid", rounds, on_round, weeks)
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
        whole = combine(extra, time_range_filter(floor, end))
        best_overall = self._ranked(keywords, whole, 1, mode) if keywords.strip() else []
        target = best_overall[0].similarity * 0.97 if best_overall else math.inf
        per_week = self.config.per_week_candidates
        found: dict[str, SearchHit] = {}
        week_end = end
        while week_end > floor and len(rounds) < weeks:
            week_start = max(floor, week_end - timedelta(weeks=1))
            where = combine(extra, time_range_filter(week_start, week_end))
            week_hits = self._ranked(keywords, where, per_week, mode)
            label = f"{week_start.astimezone(self.zone):%Y-%m-%d} – {(week_end - timedelta(seconds=1)).astimezone(self.zone):%Y-%m-%d}"
            rounds.append(ScanRound(label, week_start, week_end, tuple(week_hits)))
            if on_round is not None:
                on_round(label, week_hits)
            for hit in week_hits:
                found.setdefault(hit.turn.id, hit)
            if any(h.similarity >= target for h in week_hits):
                break
            if not keywords.strip() and len(found) >= top_k:
                break
            week_end = week_start
        ordered = sorted(found.values(), key=lambda h: (-h.similarity, -h.turn.timestamp.timestamp()))
        return ordered[:top_k]

    # ------------------------------------------------------------ neighbours

    def _with_neighbours(self, hits: list[SearchHit], window: int) -> list[SearchHit]:
        hits = [SearchHit(h.turn, h.similarity, "hit", None, i + 1) for i, h in enumerate(hits)]
        if not hits:
            return []
        if window <= 0:
            turns = self.store.with_next([h.turn for h in hits])
            return [SearchHit(t, h.similarity, "hit", None, h.rank) for t, h in zip(turns, hits, strict=True)]
        around = self.store.neighbours([h.turn for h in hits], window)
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
                    ordered.append(SearchHit(turn, hit.similarity, "neighbor", hit.turn.id, hit.rank))
        turns = self.store.with_next([h.turn for h in ordered])
        return [SearchHit(t, h.similarity, h.role, h.hit_id, h.rank) for t, h in zip(turns, ordered, strict=True)]


def format_search_result(result: SearchHit, zone: tzinfo | None = None) -> str:
    """The seed's result format, exactly::

    [id:a3f2c7 | prev: k7f2a1 | next: d2n7p3 | 相似度: 0.778]

    📁 2026-W11/2026-03-05/chat_xxx.md | 话题: 本地模型部署 | 2026-03-05 Mon 10:00:07

    <the turn's text>
    """
    turn = result.turn
    head = f"[id:{turn.id} | prev: {turn.prev_id or 'none'} | next: {turn.next_id or 'none'} | 相似度: {result.similarity:.3f}]"
    where = f"📁 {turn.session_file} | 话题: {turn.topic or '—'} | {format_local_time(turn.timestamp, zone)}"
    return f"{head}\n\n{where}\n\n{turn.text}"

"""The kernel's value types for reading memory: a search request, its results, sessions.

They load no LanceDB and no model, so the UI and the service faces can import them before
memory is open.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from datetime import datetime, time, timedelta, tzinfo
from typing import TYPE_CHECKING, Any, Literal

from huichat.memory.timeparse import Role, TimeRange
from huichat.memory.transcript import format_local_time
from huichat.memory.turns import ImportanceParts, Turn, anchor_line, one_line

if TYPE_CHECKING:
    from huichat.memory.calibration import Evidence

ContextRole = Literal["hit", "neighbor"]
Mode = Literal["hybrid", "vector", "text"]


@dataclass(frozen=True)
class SearchRequest:
    """One search, as every caller asks for it (tool, CLI, search screen, API, benchmarks).

    Time words in ``query`` are resolved against ``now`` unless ``time_range`` is given or
    ``resolve_time`` is false. A phrase that constrains the query (``TimeResolver.read_query``)
    keeps the turns said in it or talking about a time in it, a vague one triggers the
    progressive scan (when ``progressive``); a phrase that is part of the content stays in the
    keywords. ``filter_expr`` uses the kernel's grammar.
    """

    query: str
    now: datetime
    top_k: int | None = None
    """Hits wanted; None takes ``retriever.default_top_k``."""
    filter_expr: str | None = None
    context_window: int = 0
    """Neighbouring turns (±N) added after each hit."""
    progressive: bool = True
    """The seed's ``enable_progressive_scan``: scan week by week when the time is vague."""
    time_range: TimeRange | None = None
    resolve_time: bool = True
    mode: Mode = "hybrid"
    include_failed: bool = False
    """Failed turns (a reply that never came) are left out unless asked for on purpose."""
    exclude_ids: frozenset[str] = field(default_factory=frozenset)
    """Turns the caller already has (e.g. the conversation in the model's context)."""
    record_access: bool = True
    """Count the hits as accessed (benchmarks and previews do not)."""


@dataclass(frozen=True)
class SearchHit:
    """One search result: a turn, its similarity and whether it was hit or is a neighbour."""

    turn: Turn
    similarity: float | None
    """The calibrated similarity (comparable across queries); None for a neighbour, which is context."""
    role: ContextRole = "hit"
    hit_id: str | None = None
    """For a neighbour, the hit it surrounds."""
    rank: int = 0
    """The hit's place (from 1); a neighbour carries its hit's."""
    said_in_range: bool = False
    """In a search with a time range: the turn was said inside it."""
    about: tuple[TimeRange, ...] = ()
    """In a search with a time range: the times the turn talks about that fall inside it."""
    outside: bool = False
    """Offered because the range held fewer hits than asked: neither said nor about a time inside it."""
    similar: tuple[Turn, ...] = ()
    """For a consolidation representative: the near-duplicates it stands for (each still stored)."""
    score: float = field(default=0.0, compare=False)
    """The fused score that ordered it; comparable inside one search only."""
    evidence: Evidence | None = field(default=None, compare=False)
    """What its similarity was calibrated from (hybrid hits only)."""
    linked_to: str = ""
    """A hit under the threshold kept for the hit ranked above it (its id) whose names it holds:
    the second step of a question ("Where is my dentist's office now?" → the dentist's clinic →
    "Riverside Clinic moved to Elm Street"); its own similarity stays as it is."""
    linked_by: tuple[str, ...] = ()
    """The names it shares with that hit, as written there (``linked_to``)."""
    stands_out: bool = field(default=False, compare=False)
    """For ``SearchResults.below``: the candidate is still the likely match though under the
    threshold (``memory.calibration.stands_out``); the memory-first block shows it, as uncertain."""

    @property
    def _context_role(self) -> ContextRole:
        """The seed's name for ``role``."""
        return self.role

    def to_record(self, zone: tzinfo | None = None) -> dict[str, Any]:
        """The hit as plain data: the turn's record, its local time, similarity and role (CLI and API)."""
        data = turn_record(self.turn, zone)
        similarity = None if self.similarity is None else round(self.similarity, 4)
        data.update(similarity=similarity, _context_role=self.role, rank=self.rank)
        if self.hit_id:
            data["neighbor_of"] = self.hit_id
        if self.linked_to:
            data.update(linked_to=self.linked_to, linked_by=list(self.linked_by))
        if self.said_in_range or self.about or self.outside:
            data.update(
                said_in_range=self.said_in_range, about=[r.to_record() for r in self.about], outside=self.outside
            )
        return data


@dataclass(frozen=True)
class ScanRound:
    """One week of a progressive scan."""

    label: str
    """The week as the progress line names it: its first and last day."""
    start: datetime
    end: datetime
    found: tuple[SearchHit, ...]
    """The hits this round added."""


@dataclass(frozen=True)
class SearchResults:
    """The outcome of a search: results in order, plus how time was understood."""

    results: tuple[SearchHit, ...]
    query: str
    keywords: str
    time_range: TimeRange | None = None
    rounds: tuple[ScanRound, ...] = ()
    filter_text: str = ""
    time_role: Role = "none"
    """How ``time_range`` was used: ``filter`` (only turns said or about a time inside it, then the
    nearest outside when too few) or ``hint`` (turns inside it first, then the rest)."""
    below: SearchHit | None = None
    """When nothing reached ``retriever.min_similarity``: the nearest candidate, which is not a hit
    (``below.stands_out`` when it still stands clearly above the others)."""
    parts: tuple[SearchResults, ...] = ()
    """When one call searched several queries (``recall_memory`` with a query per line): each one's
    own results, in order; ``results`` holds their hits merged, each turn once."""

    def __iter__(self) -> Iterator[SearchHit]:
        return iter(self.results)

    def __len__(self) -> int:
        return len(self.results)

    def __getitem__(self, index: int) -> SearchHit:
        return self.results[index]

    @property
    def hits(self) -> list[SearchHit]:
        """Only the hits (no neighbours), those inside the time range first."""
        return [r for r in self.results if r.role == "hit"]

    @property
    def inside(self) -> int:
        """How many hits lie inside the time range (all of them when there is none)."""
        return sum(1 for r in self.hits if not r.outside)

    @property
    def outside(self) -> int:
        """How many hits were offered from outside the time range."""
        return sum(1 for r in self.hits if r.outside)

    def to_record(self, zone: tzinfo | None = None) -> dict[str, Any]:
        """The results as plain data: how the query was understood, then every hit (CLI and API)."""
        span = self.time_range
        return {
            "query": self.query,
            "keywords": self.keywords,
            "time_range": None
            if span is None
            else {
                "start": span.start.isoformat(),
                "end": span.end.isoformat(),
                "granularity": span.granularity,
                "fuzzy": span.fuzzy,
                "phrase": span.phrase,
                "role": self.time_role,
                "inside": self.inside,
                "outside": self.outside,
            },
            "scan_rounds": [{"week": r.label, "found": [h.turn.id for h in r.found]} for r in self.rounds],
            "results": [hit.to_record(zone) for hit in hits_first(self.results)],
            "nearest_below_threshold": None if self.below is None else self.below.to_record(zone),
        }


OnRound = Callable[[str, list[SearchHit]], None]


@dataclass(frozen=True)
class RecallResult:
    """``recall_by_id``'s answer: the turn, or an error message for the caller to show."""

    turn: Turn | None
    error: str = ""

    @property
    def ok(self) -> bool:
        return self.turn is not None


@dataclass(frozen=True)
class Scored:
    """A turn with the raw score one index gave it."""

    turn: Turn
    score: float
    """A cosine for the vector index, a BM25 score for full text: not comparable between them."""


@dataclass(frozen=True)
class TurnState:
    """Where one turn stands in its lifecycle: what the jobs and the statistics read for every turn."""

    id: str
    session_id: str
    timestamp: datetime
    status: str
    tier: str
    importance: float | None
    importance_parts: ImportanceParts | None
    access_count: int
    last_accessed_at: datetime | None
    cluster_id: str
    cluster_role: str
    embedded: bool


@dataclass(frozen=True)
class SessionInfo:
    """A summary of one stored session."""

    session_id: str
    session_file: str
    started: datetime
    last: datetime
    turns: int
    first_text: str
    title: str = ""
    """The session's title (its topic) where it has one."""
    title_source: str = ""
    """Who wrote the title: ``model``, ``local``, or '' for a session never titled (an older one)."""


def _short(r: TimeRange, zone: tzinfo | None, year: int) -> str:
    """``11-25 12:00–18:00``, ``11-25``, ``11-23 – 11-29`` (with the year when it is not ``year``)."""
    start, last = r.start.astimezone(zone), (r.end - timedelta(microseconds=1)).astimezone(zone)
    day = "%Y-%m-%d" if start.year != year else "%m-%d"
    if start.date() != last.date():
        return f"{start:{day}} – {last:{day}}"
    if start.time() == time() and r.end - r.start >= timedelta(days=1):
        return f"{start:{day}}"
    return f"{start:{day} %H:%M}–{r.end.astimezone(zone):%H:%M}"


def placement(hit: SearchHit, zone: tzinfo | None = None) -> str:
    """Why a hit of a time-constrained search matched: ``said 11-30 · about 11-25 12:00–18:00 (上周三下午)``.

    A hit offered from outside the range says so: ``outside the range · said 10-02``. Empty for
    a neighbour, and for a search without a time range.
    """
    if hit.role != "hit":
        return ""
    said = hit.turn.timestamp.astimezone(zone)
    if hit.outside:
        return f"outside the range · said {said:%Y-%m-%d}"
    parts = [f"said {said:%m-%d}"] if hit.said_in_range else []
    for r in hit.about:
        parts.append(f"about {_short(r, zone, said.year)}" + (f" ({r.phrase})" if r.phrase else ""))
    return " · ".join(parts)


def time_summary(results: SearchResults, label: str = "") -> str:
    """How the search's time was used and what it found: ``0 in 上周三下午 · 3 nearest outside``.

    ``label`` names the range (default: its phrase). Empty without a time range. A hint (a
    calendar date beside other words) restricts nothing: its turns come first.
    """
    if results.time_range is None:
        return ""
    label = label or results.time_range.phrase or results.time_range.describe()
    if results.time_role == "hint":
        return f"{results.inside} in {label} first (a date hint, not a filter)"
    summary = f"{results.inside} in {label}"
    return summary + (f" · {results.outside} nearest outside" if results.outside else "")


def turn_record(turn: Turn, zone: tzinfo | None = None) -> dict[str, Any]:
    """A turn's record plus its local time (the JSON the CLI and the API print)."""
    moment = turn.timestamp.astimezone(zone) if zone is not None else turn.timestamp
    return {**turn.to_record(), "local_time": moment.isoformat()}


def format_turn(
    turn: Turn, zone: tzinfo | None = None, similarity: float | None = None, note: str = "", link: str = ""
) -> str:
    """A turn in the seed's result format; without a similarity the anchor line carries none::

    [id:a3f2c7 | prev: k7f2a1 | next: d2n7p3 | 相似度: 0.778]

    📁 2026-W11/2026-03-05/chat_xxx.md | 话题: 本地模型部署 | 2026-03-05 Mon 10:00:07

    <the turn's text>

    A ``note`` (which of its times matched a search, ``placement``) goes under the 📁 line, and so
    does a ``link`` (``link_line``: the hit whose names a linked hit holds).
    """
    head = anchor_line(turn.id, turn.prev_id, turn.next_id, similarity)
    where = f"📁 {turn.session_file} | 话题: {one_line(turn.topic) or '—'} | {format_local_time(turn.timestamp, zone)}"
    if note:
        where += f"\n🕒 {note}"
    if link:
        where += f"\n{link}"
    return f"{head}\n\n{where}\n\n{turn.text}"


def format_search_result(result: SearchHit, zone: tzinfo | None = None) -> str:
    """One search result in the seed's format, with its similarity and which of its times matched.

    A neighbour (printed right after its hit) says whose context it is and has no similarity::

        ↳ 上下文，属于命中 a3f2c7 (context for hit a3f2c7)
        [id:d2n7p3 | prev: a3f2c7 | next: m4q8z1]

    A consolidation representative ends with a ``+N similar`` line naming every member it
    stands for (each recallable by id), after the seed's block, which stays as it is. A hit kept
    under the threshold for the hit it is linked to says so under its 📁 line::

        🔗 与命中 a3f2c7 相连：Riverside, Clinic (linked to hit a3f2c7 by Riverside, Clinic; …)
    """
    if result.role != "hit":
        return f"{context_label(result.hit_id or '')}\n{format_turn(result.turn, zone)}"
    link = link_line(result.linked_to, result.linked_by) if result.linked_to else ""
    block = format_turn(result.turn, zone, result.similarity, placement(result, zone), link)
    return f"{block}\n\n{similar_line(result.similar, zone)}" if result.similar else block


def similar_line(members: tuple[Turn, ...], zone: tzinfo | None = None) -> str:
    """``+2 similar: [id:k7f2a1 · 2026-03-04 Wed 09:12:00] …`` — the near-duplicates of a representative."""
    listed = " ".join(f"[id:{m.id} · {format_local_time(m.timestamp, zone)}]" for m in members)
    return f"+{len(members)} similar: {listed}"


def link_line(hit_id: str, names: Sequence[str]) -> str:
    """The line that says a hit under the threshold is kept for the hit whose names it holds."""
    shared = ", ".join(names)
    return f"🔗 与命中 {hit_id} 相连：{shared} (linked to hit {hit_id} by {shared}; its own similarity is low)"


def context_label(hit_id: str) -> str:
    """The line that marks a neighbour as context for its hit."""
    return f"↳ 上下文，属于命中 {hit_id} (context for hit {hit_id})"


def format_results(results: SearchResults, zone: tzinfo | None = None) -> str:
    """Every result of a search, hits in rank order, each followed by its context, ``---`` between them."""
    return "\n---\n".join(format_search_result(r, zone) for r in hits_first(results.results))


def hits_first(results: Sequence[SearchHit]) -> list[SearchHit]:
    """Hits in rank order, each followed by its own neighbours in conversation order.

    A neighbour is context for its hit: it is never shown above it, where it would read as
    belonging to the hit before.
    """
    around: dict[str, list[SearchHit]] = {}
    for result in results:
        if result.role != "hit" and result.hit_id:
            around.setdefault(result.hit_id, []).append(result)
    ordered: list[SearchHit] = []
    for hit in sorted((r for r in results if r.role == "hit"), key=lambda h: h.rank):
        ordered.append(hit)
        ordered.extend(sorted(around.get(hit.turn.id, []), key=lambda n: n.turn.turn_index))
    return ordered

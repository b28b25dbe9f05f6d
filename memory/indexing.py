"""How turns enter the index: one way, used by the live write path, reconciliation and rebuilds.

A turn becomes one ``IndexEntry`` (``memory.index_schema``): the turn, the text embedded for
it (after its predecessor's tail when in context: ``memory.turns.search_text``) and, once
embedded, its vector. The entry is made once and passed on: embedded in batches, given its
importance (``memory.importance``), written in one commit per batch. Without embedding the
turns are found by their words at once and get their vectors later (``embed_waiting``).
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager
from dataclasses import replace

import numpy as np
import numpy.typing as npt

from huichat.memory import importance
from huichat.memory.bulk_embedding import BULK_MIN_TEXTS
from huichat.memory.config import ImportanceConfig
from huichat.memory.embedding import Embedder, Interruptible, Vector
from huichat.memory.errors import EmbeddingInterrupted
from huichat.memory.index_schema import EventReader, IndexEntry
from huichat.memory.store import TurnStore
from huichat.memory.turns import Turn, search_text

Progress = Callable[[int, int], None]
EMBED_BATCH = 64
_BULK_BATCH = 2048
"""Turns per index commit when nothing is embedded (imports, rebuilds: words first, vectors later)."""
_PART_CHARACTERS = 32_000
"""Text embedded between two looks at ``stop`` in the catch-up (a few seconds of work; at least
``BULK_MIN_TEXTS`` texts, so a part still goes to the bulk runtime)."""
_NEAREST = 4
"""Nearest stored turns looked at for a new turn's novelty."""


def session_entries(turns: Sequence[Turn], previous: Turn | None = None) -> list[IndexEntry]:
    """The entries of consecutive turns of one session (``previous``: the turn before the first)."""
    entries = []
    for turn in turns:
        entries.append(IndexEntry(turn, search_text(turn, previous)))
        previous = turn
    return entries


class Indexer:
    """Embeds, scores and writes index entries into one store."""

    def __init__(
        self, store: TurnStore, embedder: Embedder, scoring: ImportanceConfig, read_events: EventReader
    ) -> None:
        self.store = store
        self.embedder = embedder
        self.scoring = scoring
        self.read_events = read_events

    def transcript_entries(self, turns: Sequence[Turn]) -> list[IndexEntry]:
        """The entries of one session's turns as read from its transcript, their times read again
        from their text: the transcript's own copy may be stale (edited, or older than the resolver)."""
        return session_entries([replace(t, events=self.read_events(t.text, t.timestamp)) for t in turns])

    def write(
        self,
        entries: Sequence[IndexEntry],
        progress: Progress | None = None,
        *,
        upsert: bool = False,
        embed: bool = True,
    ) -> list[Turn]:
        """Embed (with ``embed``), score and write ``entries`` in batches, one commit per batch;
        ``upsert`` replaces turns already indexed. Returns the turns as stored (with their importance)."""
        stored: list[Turn] = []
        step = EMBED_BATCH * 4 if embed else _BULK_BATCH
        for start in range(0, len(entries), step):
            batch = self.scored(
                self._embedded(entries[start : start + step]) if embed else entries[start : start + step]
            )
            if upsert:
                self.store.upsert(batch)
            else:
                self.store.add(batch)
            stored.extend(e.turn for e in batch)
            if progress is not None:
                progress(len(stored), len(entries))
        return stored

    def embed_waiting(
        self,
        limit: int,
        writing: AbstractContextManager[object],
        stop: threading.Event,
        progress: Progress | None = None,
        embedder: Embedder | None = None,
    ) -> int:
        """Embed up to ``limit`` turns that were indexed without a vector; returns how many got one.

        Each is embedded with its predecessor's tail, exactly as if it had been embedded
        when written, and scored with its novelty then. The embedding runs outside
        ``writing`` (the kernel's write lock: searches and writes go on meanwhile), in parts
        of similar length, ``stop`` looked at between parts (and inside one, for an
        ``Interruptible`` embedder); what was finished is written in one commit under
        ``writing``, onto the turns still waiting unchanged. ``progress(done, of)`` follows the parts.
        ``embedder`` embeds instead of the index's own (the same model elsewhere: a Ray cluster's workers).
        """
        embedder = embedder or self.embedder
        waiting = self.store.pending(limit)
        if not waiting:
            return 0
        previous = self.store.get(t.prev_id for t in waiting if t.prev_id)
        entries = [IndexEntry(t, search_text(t, previous.get(t.prev_id) if t.prev_id else None)) for t in waiting]
        vectors: dict[int, Vector] = {}
        with contextlib.suppress(EmbeddingInterrupted):
            for part in _parts(entries):
                if stop.is_set():
                    break
                texts = [entries[i].text for i in part]
                found = (
                    embedder.embed_passages_until(texts, stop)
                    if isinstance(embedder, Interruptible)
                    else embedder.embed_passages(texts)
                )
                vectors.update(zip(part, found, strict=True))
                if progress is not None:
                    progress(len(vectors), len(entries))
        done = self.scored([replace(e, vector=vectors[i]) for i, e in enumerate(entries) if i in vectors])
        with writing:
            unchanged = self.store.still_waiting(done)
            self.store.set_vectors([e for e in done if e.turn.id in unchanged], importance=self.scoring.enabled)
        return len(done)

    def _embedded(self, entries: Sequence[IndexEntry]) -> list[IndexEntry]:
        vectors = self.embedder.embed_passages([e.text for e in entries])
        return [replace(e, vector=v) for e, v in zip(entries, vectors, strict=True)]

    def scored(self, entries: Sequence[IndexEntry]) -> list[IndexEntry]:
        """The entries with their turns' importance (novelty from their vectors, when they have one).

        A turn re-indexed after an edit keeps what it had: its novelty (measured when it was
        first written) and the parts that come from its use; only the parts read from its text
        follow the new text.
        """
        if not self.scoring.enabled or not entries:
            return list(entries)
        needed = [
            (i, e.vector)
            for i, e in enumerate(entries)
            if e.vector is not None and (e.turn.importance_parts is None or e.turn.importance_parts.novelty is None)
        ]
        nearest: dict[int, float | None] = {}
        if needed:
            found = self.nearest_similarity([entries[i].turn for i, _ in needed], np.stack([v for _, v in needed]))
            nearest = dict(zip((i for i, _ in needed), found, strict=True))
        return [replace(e, turn=self._score(e.turn, nearest.get(i))) for i, e in enumerate(entries)]

    def _score(self, turn: Turn, nearest: float | None) -> Turn:
        kept = turn.importance_parts
        novelty = kept.novelty if kept is not None and kept.novelty is not None else None
        if novelty is None:
            novelty = importance.novelty(nearest)
        if kept is None:
            moment = max(turn.timestamp, turn.last_accessed_at or turn.timestamp)
            parts = importance.parts_for(turn.text, turn.access_count, turn.last_accessed_at, moment, novelty)
        else:
            parts = replace(
                kept, novelty=novelty, sentiment=importance.sentiment(turn.text), density=importance.density(turn.text)
            )
        return replace(turn, importance=importance.score(parts, self.scoring.weights), importance_parts=parts)

    def nearest_similarity(self, turns: Sequence[Turn], vectors: npt.NDArray[np.float32]) -> list[float | None]:
        """For each turn (embedded as the row of ``vectors`` at its place), its highest cosine
        similarity to an earlier turn (stored, or earlier among ``turns``).

        One batched vector search. When only later turns are among the nearest, the lowest
        similarity found bounds the earlier ones from above; a turn with no other turn at all is
        entirely new (similarity 0).
        """
        unit = vectors / np.maximum(np.linalg.norm(vectors, axis=1, keepdims=True), 1e-12)
        stored = self.store.nearest(unit, _NEAREST + 1)
        within = unit @ unit.T
        nearest: list[float | None] = []
        for i, turn in enumerate(turns):
            others = [(moment, cosine) for turn_id, moment, cosine in stored[i] if turn_id != turn.id]
            earlier = [cosine for moment, cosine in others if moment <= turn.timestamp]
            earlier.extend(float(within[i, j]) for j in range(i) if turns[j].timestamp <= turn.timestamp)
            if earlier:
                nearest.append(max(earlier))
            elif others:
                nearest.append(min(cosine for _, cosine in others))
            else:
                nearest.append(0.0)
        return nearest


def _parts(entries: Sequence[IndexEntry]) -> list[list[int]]:
    """The entries' positions in parts of similar length (shortest first), each about
    ``_PART_CHARACTERS`` of text: sorted, a part pads little, and one part is a few seconds of work."""
    order = sorted(range(len(entries)), key=lambda i: len(entries[i].text))
    parts: list[list[int]] = []
    part: list[int] = []
    size = 0
    for i in order:
        part.append(i)
        size += len(entries[i].text)
        if size >= _PART_CHARACTERS and len(part) >= BULK_MIN_TEXTS:
            parts.append(part)
            part, size = [], 0
    if part and parts and len(part) < BULK_MIN_TEXTS:
        parts[-1].extend(part)  # the longest texts, too few for the bulk runtime on their own
    elif part:
        parts.append(part)
    return parts

"""Every turn's light row of one table version in memory: a search's hits and neighbours without a query.

A fused search read its vector hits by id and the best candidates' neighbours by position
from LanceDB: two queries of ~10–20 ms each at 10k turns, most of it the query engine's
fixed cost and its hops between threads, for ~100 small rows. The store holds the light
columns (``LIGHT_COLUMNS``, what a ``Turn`` is made of) of the table version whose vectors
it holds (``memory.vector_matrix``) and answers both look-ups here, filter included
(``memory.row_filter``; a filter it cannot evaluate the same way goes to LanceDB). The
rows belong to one version, like the vectors: another process's commit makes the store read
them again; this process's appends and access statistics carry them to the next version.
The text itself is not held (``Turn.text`` is made from the messages): only whether there
is any (``row_filter.SAID``), and the event slots a time filter tests.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

import numpy as np
import numpy.typing as npt
import pyarrow as pa
import pyarrow.compute as pc

from huichat.memory.filters import Filter
from huichat.memory.index_schema import EVENT_SLOTS, LIGHT_COLUMNS, turns_from
from huichat.memory.row_filter import SAID, passing
from huichat.memory.turns import Turn
from huichat.memory.words import CJK_CLASS

_SLOTS = [f"event{slot}_{side}" for slot in range(EVENT_SLOTS) for side in ("start", "end")]
READ_COLUMNS = [*LIGHT_COLUMNS, "text", *_SLOTS]
"""What is read from the index to hold its rows (the text only to note whether there is any)."""
_MAX_CHUNKS = 32
"""Appends add a chunk each; past this many the columns are joined again (a take over many chunks is slower)."""
_MAX_TURNS = 20_000
"""Turns kept made per version (a few MB); past this many the cache starts again."""
_MAX_MASKS = 32
"""Filters kept evaluated per version (a progressive scan asks one per week)."""


@dataclass(frozen=True, eq=False)
class HeldRows:
    """The light rows of one table version, in the index's order, with their ids and places.

    A row becomes its ``Turn`` once per version (kept in ``_turns``: a search reads ~100 rows,
    most of them read by the searches before it), and a filter is evaluated once per version
    over every row (kept in ``_masks``: searches repeat the same few filters).
    """

    table: pa.Table
    """``LIGHT_COLUMNS``, ``SAID`` and the event slots, one row per stored row."""
    _by_id: dict[str, int] = field(repr=False)
    _by_position: dict[tuple[str, int], list[int]] = field(repr=False)
    following: dict[str, str] = field(repr=False)
    """Every turn's successor by the id it follows: ``next_id`` without a query."""
    cjk: bool
    """Whether any row's text holds a CJK character (a search for Chinese words elsewhere finds nothing)."""
    _turns: dict[int, Turn] = field(default_factory=dict, repr=False)
    """Rows already made into turns; shared with the versions this one is extended to (appends
    change no row), bounded by ``_MAX_TURNS``."""
    _masks: dict[Filter, npt.NDArray[np.bool_] | None] = field(default_factory=dict, repr=False)

    @classmethod
    def of(cls, read: pa.Table) -> HeldRows:
        """The rows of ``read`` (``READ_COLUMNS`` of every row of one version, in the index's order)."""
        return cls._indexed(_held(read).combine_chunks(), {}, {}, {}, 0, {}, _any_cjk(read))

    def extended(self, read: pa.Table) -> HeldRows:
        """These rows followed by those of ``read`` (appended by this process, ``READ_COLUMNS`` at least)."""
        table = pa.concat_tables([self.table, _held(read).cast(self.table.schema)])
        if table.num_columns and table.column(0).num_chunks > _MAX_CHUNKS:
            table = table.combine_chunks()
        start = self.table.num_rows
        return HeldRows._indexed(
            table,
            dict(self._by_id),
            dict(self._by_position),
            dict(self.following),
            start,
            self._turns,
            self.cjk or _any_cjk(read),
        )

    @classmethod
    def _indexed(
        cls,
        table: pa.Table,
        by_id: dict[str, int],
        by_position: dict[tuple[str, int], list[int]],
        following: dict[str, str],
        start: int,
        turns: dict[int, Turn],
        cjk: bool,
    ) -> HeldRows:
        fresh = table.slice(start)
        ids = fresh.column("id").to_pylist()
        previous = fresh.column("prev_id").to_pylist()
        following.update((prev, turn_id) for prev, turn_id in zip(previous, ids, strict=True) if prev)
        places = zip(fresh.column("session_id").to_pylist(), fresh.column("turn_index").to_pylist(), strict=True)
        for row, (turn_id, place) in enumerate(zip(ids, places, strict=True), start=start):
            by_id[turn_id] = row  # a repeated id: the later row, as a look-up by id keeps the last one read
            by_position[place] = [*by_position.get(place, ()), row]
        return cls(table, by_id, by_position, following, cjk, turns)

    def accessed(self, counts: dict[str, int], now: datetime) -> HeldRows:
        """These rows after ``TurnStore.record_access`` added ``counts`` and set the time of access."""
        counted = self.table.column("access_count")
        before = {turn_id: counted[self._by_id[turn_id]].as_py() or 0 for turn_id in counts if turn_id in self._by_id}
        return self.updated(
            {
                "access_count": {turn_id: before[turn_id] + counts[turn_id] for turn_id in before},
                "last_accessed_at": dict.fromkeys(before, now),
            }
        )

    def holds(self, turn_id: str) -> bool:
        """Whether a row of ``turn_id`` is held."""
        return turn_id in self._by_id

    def updated(self, changes: dict[str, dict[str, Any]]) -> HeldRows:
        """These rows after a commit set some light columns of some turns (``{column: {id: stored value}}``)."""
        table = self.table
        touched: set[int] = set()
        for name, by_id in changes.items():
            rows = {self._by_id[turn_id]: value for turn_id, value in by_id.items() if turn_id in self._by_id}
            if not rows:
                continue
            values = table.column(name).to_pylist()
            for row, value in rows.items():
                values[row] = value
            position = table.schema.get_field_index(name)
            table = table.set_column(position, table.field(name), pa.array(values, type=table.field(name).type))
            touched |= rows.keys()
        if not touched:
            return self
        turns = {row: turn for row, turn in self._turns.items() if row not in touched}
        return HeldRows(table, self._by_id, self._by_position, self.following, self.cjk, turns)

    def __len__(self) -> int:
        return int(self.table.num_rows)

    def by_ids(self, ids: Iterable[str], where: Filter | None) -> dict[str, Turn] | None:
        """The turns of ``ids`` that match ``where``, by id (None: ``where`` is not evaluable here)."""
        rows = sorted({row for row in (self._by_id.get(turn_id) for turn_id in ids) if row is not None})
        turns = self._matching(rows, where)
        return None if turns is None else {t.id: t for t in turns}

    def at(self, places: Iterable[tuple[str, int]], where: Filter | None) -> list[Turn] | None:
        """The turns at those (session, index) places that match ``where``, in the index's order."""
        rows = sorted({row for place in places for row in self._by_position.get(place, ())})
        return self._matching(rows, where)

    def every(self, where: Filter) -> list[Turn] | None:
        """Every turn matching ``where``, in the index's order (None: not evaluable here)."""
        keep = self._mask(where)
        return None if keep is None else self._matching(np.flatnonzero(keep).tolist(), None)

    def ids_matching(self, where: Filter) -> list[str] | None:
        """The ids of every row matching ``where`` (None: not evaluable here)."""
        keep = self._mask(where)
        if keep is None:
            return None
        ids: list[str] = self.table.column("id").filter(pa.array(keep)).to_pylist()
        return ids

    def left_out(self, where: Filter) -> int | None:
        """How many rows ``where`` leaves out (None: not evaluable here)."""
        keep = self._mask(where)
        return None if keep is None else len(keep) - int(np.count_nonzero(keep))

    def _mask(self, where: Filter) -> npt.NDArray[np.bool_] | None:
        # searches in several threads share the caches: each works on what it read or made itself
        if where in self._masks:
            return self._masks.get(where)
        mask = passing(where, self.table)
        if len(self._masks) >= _MAX_MASKS:
            self._masks.clear()
        self._masks[where] = mask
        return mask

    def _matching(self, rows: Sequence[int], where: Filter | None) -> list[Turn] | None:
        if where is not None:
            keep = self._mask(where)
            if keep is None:
                return None
            rows = [row for row in rows if keep[row]]
        found = {row: self._turns.get(row) for row in rows}
        missing = [row for row, turn in found.items() if turn is None]
        if missing:
            taken = self.table.take(pa.array(missing, type=pa.int64())).select(LIGHT_COLUMNS)
            made = dict(zip(missing, turns_from(taken), strict=True))
            found.update(made)
            if len(self._turns) + len(made) > _MAX_TURNS:
                self._turns.clear()
            self._turns.update(made)
        return [turn for turn in found.values() if turn is not None]


def _any_cjk(read: pa.Table) -> bool:
    """Whether any text of ``read`` holds a CJK character."""
    return bool(read.num_rows) and bool(pc.any(pc.match_substring_regex(read.column("text"), CJK_CLASS)).as_py())


def _held(read: pa.Table) -> pa.Table:
    """``read``'s held columns: the text replaced by whether there is any (SQL's ``text != ''``)."""
    said = pc.not_equal(read.column("text"), pa.scalar("", type=pa.string()))
    kept = read.select([*LIGHT_COLUMNS, *_SLOTS])
    return kept.append_column(pa.field(SAID, pa.bool_()), said)

"""A typed filter evaluated on rows held in memory, as the index's SQL evaluates it.

``memory.index_schema.compile_filter`` turns a ``Filter`` into LanceDB's SQL; a search whose
rows are held in memory (``memory.held_rows``) tests them here instead of asking LanceDB. The
result must be the one the SQL gives, row for row, so SQL's three-valued logic is kept: a
comparison with a missing value is unknown, ``NOT`` of unknown is unknown, ``AND``/``OR`` are
Kleene's, and only rows whose condition is true pass. What cannot be evaluated the same way
here (``LIKE``, a comparison with the searchable text other than "is empty") gives None: the
caller asks LanceDB.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, TypeAlias

import numpy as np
import numpy.typing as npt
import pyarrow as pa
import pyarrow.compute as pc

from huichat.memory.filters import About, All, Any_, Compare, Filter, In, Not, clamp_utc, normalise
from huichat.memory.index_schema import EVENT_SLOTS, UTC_TS
from huichat.memory.turns import is_turn_id

SAID = "said"
"""The held column standing for ``text != ''`` (the text itself is not held: ``said_only``)."""

_OPERATORS = {
    "=": pc.equal,
    "!=": pc.not_equal,
    "<": pc.less,
    "<=": pc.less_equal,
    ">": pc.greater,
    ">=": pc.greater_equal,
}

Mask: TypeAlias = Any
"""A column of booleans with unknowns (``pa.Array`` or ``pa.ChunkedArray``; pyarrow's compute functions are untyped)."""


def passing(node: Filter, rows: pa.Table) -> npt.NDArray[np.bool_] | None:
    """For each row of ``rows``, whether it passes ``node`` (None: not evaluable here)."""
    mask = _mask(normalise(node), rows)
    if mask is None:
        return None
    kept: npt.NDArray[np.bool_] = np.asarray(pc.fill_null(mask, False).to_numpy(zero_copy_only=False), dtype=np.bool_)
    return kept


def _mask(node: Filter, rows: pa.Table) -> Mask | None:
    if isinstance(node, All | Any_):
        masks = [_mask(part, rows) for part in node.parts]
        if any(m is None for m in masks):
            return None
        join = pc.and_kleene if isinstance(node, All) else pc.or_kleene
        result = masks[0]
        for mask in masks[1:]:
            result = join(result, mask)
        return result
    if isinstance(node, Not):
        inner = _mask(node.part, rows)
        return None if inner is None else pc.invert(inner)
    if isinstance(node, In):
        return _in(node, rows)
    if isinstance(node, About):
        return _about(node, rows)
    return _compare(node, rows)


def _compare(node: Compare, rows: pa.Table) -> Mask | None:
    if node.op not in _OPERATORS:
        return None  # LIKE: its escapes and case rules are the query engine's
    if node.field == "text":
        if node.value != "" or node.op not in ("=", "!="):
            return None
        said = rows.column(SAID)
        return said if node.op == "!=" else pc.invert(said)
    if node.field not in rows.column_names:
        return None
    column = rows.column(node.field)
    value = node.value
    if isinstance(value, datetime):
        if not pa.types.is_timestamp(column.type):
            return None
        scalar = pa.scalar(clamp_utc(value), type=UTC_TS)
    elif isinstance(value, int):
        if not pa.types.is_integer(column.type):
            return None
        scalar = pa.scalar(value, type=pa.int64())
    elif pa.types.is_string(column.type):
        scalar = pa.scalar(value, type=pa.string())
    else:
        return None
    return _OPERATORS[node.op](column, scalar)


def _in(node: In, rows: pa.Table) -> Mask | None:
    if node.field not in rows.column_names:
        return None
    column = rows.column(node.field)
    values = [v for v in node.values if node.field != "id" or is_turn_id(v)]
    if not values:
        # compiled as FALSE: false for every row, even one whose value is missing
        return pa.array([False] * rows.num_rows, type=pa.bool_())
    found = pc.is_in(column, value_set=pa.array(values, type=column.type))
    # SQL: a missing value is in no list and in none of its complement either (unknown)
    return pc.if_else(pc.is_null(column), pa.scalar(None, type=pa.bool_()), found)


def _about(node: About, rows: pa.Table) -> Mask | None:
    start = pa.scalar(clamp_utc(node.start), type=UTC_TS)
    end = pa.scalar(clamp_utc(node.end), type=UTC_TS)
    result: Mask | None = None
    for slot in range(EVENT_SLOTS):
        names = (f"event{slot}_start", f"event{slot}_end")
        if any(name not in rows.column_names for name in names):
            return None
        first, last = rows.column(names[0]), rows.column(names[1])
        overlaps = pc.and_kleene(pc.and_kleene(pc.is_valid(first), pc.less(first, end)), pc.greater(last, start))
        result = overlaps if result is None else pc.or_kleene(result, overlaps)
    return result

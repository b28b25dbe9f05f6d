"""filter_expr: the kernel's own grammar; nothing the LLM writes reaches a query string."""

from __future__ import annotations

from datetime import datetime

import pytest

from memory.filters import All, Any_, Compare, FilterError, Not, parse_filter
from memory.index_schema import compile_filter
from tests.conftest import ZONE


def _utc(text: str) -> datetime:
    return (
        datetime.fromisoformat(text)
        .replace(tzinfo=ZONE)
        .astimezone(ZONE)
        .astimezone(__import__("datetime").timezone.utc)
    )


def test_the_seed_example_becomes_a_typed_range_including_the_last_day() -> None:
    parsed = parse_filter("timestamp >= '2026-04-06' AND timestamp <= '2026-04-13'", ZONE)
    assert parsed == All(
        (
            Compare("timestamp", ">=", _utc("2026-04-06T00:00")),
            Compare("timestamp", "<", _utc("2026-04-14T00:00")),
        )
    )


@pytest.mark.parametrize(
    ("expr", "expected"),
    [
        ("timestamp > '2026-04-13'", Compare("timestamp", ">=", _utc("2026-04-14T00:00"))),
        ("timestamp < '2026-04-13'", Compare("timestamp", "<", _utc("2026-04-13T00:00"))),
        ("time >= 2026-04-06T10:30", Compare("timestamp", ">=", _utc("2026-04-06T10:30"))),
        ("date = '2026-04-06'", All((Compare("timestamp", ">=", _utc("2026-04-06T00:00")), Compare("timestamp", "<", _utc("2026-04-07T00:00"))))),
        ("topic = '本地模型部署'", Compare("topic", "=", "本地模型部署")),
        ("topic LIKE '%部署%'", Compare("topic", "like", "%部署%")),
        ("turn_index >= 3", Compare("turn_index", ">=", 3)),
        ("session = 'abc' OR NOT (turn_index < 2)", Any_((Compare("session_id", "=", "abc"), Not(Compare("turn_index", "<", 2))))),
        ("topic = 'it''s'", Compare("topic", "=", "it's")),
        ("turn_index BETWEEN 2 AND 4", All((Compare("turn_index", ">=", 2), Compare("turn_index", "<=", 4)))),
        ("", None),
    ],
)  # fmt: skip
def test_valid_filters(expr: str, expected: object) -> None:
    assert parse_filter(expr, ZONE) == expected


@pytest.mark.parametrize(
    ("expr", "reason"),
    [
        ("password = 'x'", "unknown field 'password'"),
        ("timestamp >= '2026-04-06'; DROP TABLE turns", "unexpected text near ';"),
        ("topic = 'unclosed", "unterminated quote"),
        ("timestamp >= 'last tuesday'", "not a date or time"),
        ("timestamp >=", "ends too early"),
        ("(turn_index > 1", "missing ')'"),
        ("turn_index = 'abc'", "whole number"),
        ("1=1 OR 1=1", "unknown field '1'"),
        ("topic = 'a') OR (1=1", "unexpected ')'"),
        ("x" * 10_000, "too long"),
        ("timestamp LIKE '2026%'", "LIKE does not apply"),
        ("topic = 'a' AND " * 70 + "topic = 'b'", "too many conditions"),
    ],
)
def test_broken_filters_give_short_errors(expr: str, reason: str) -> None:
    with pytest.raises(FilterError) as caught:
        parse_filter(expr, ZONE)
    assert reason in str(caught.value)
    assert len(str(caught.value)) < 200


def test_compiled_sql_comes_from_typed_values_only() -> None:
    parsed = parse_filter("topic = 'x'' OR 1=1 --' AND timestamp >= '2026-04-06'", ZONE)
    assert parsed is not None
    sql = compile_filter(parsed)
    assert "(topic = 'x'' OR 1=1 --')" in sql  # the quote is doubled: it stays inside the literal
    assert "TIMESTAMP '2026-04-05 16:00:00.000000'" in sql

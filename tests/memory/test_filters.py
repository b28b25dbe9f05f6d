"""filter_expr: the kernel's own grammar; nothing the LLM writes reaches a query string."""

from __future__ import annotations

import re
from datetime import datetime

import pytest

from huichat.memory.filters import All, Any_, Compare, Filter, FilterError, Not, parse_filter
from huichat.memory.index_schema import compile_filter
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


# ------------------------------------------------------- hostile filters (issue 16, items 2 and 3)


@pytest.mark.parametrize(
    "expr",
    [
        "timestamp <= '9999-12-31'",
        "timestamp > '9999-12-31'",
        "timestamp = '9999-12-31'",
        "timestamp >= '0001-01-01'",
        "timestamp >= '0500-01-01'",
        "time < 0001-01-01T00:00",
        "time <= 9999-12-31T23:59:59.999999",
    ],
)
def test_dates_at_the_ends_of_the_calendar_compile_to_four_digit_literals(expr: str) -> None:
    parsed = parse_filter(expr, ZONE)
    assert parsed is not None
    sql = compile_filter(parsed)
    years = re.findall(r"TIMESTAMP '(\d+)-", sql)
    assert years and all(len(year) == 4 for year in years)


def test_a_year_before_1000_is_formatted_with_four_digits() -> None:
    parsed = parse_filter("timestamp >= '0500-01-01'", ZONE)
    assert parsed is not None
    assert "TIMESTAMP '0499-12-31 15:54:17.000000'" in compile_filter(parsed)


@pytest.mark.parametrize("count", [1, 2, 29, 30, 50, 400])
def test_chains_of_not_collapse_to_at_most_one(count: int) -> None:
    parsed = parse_filter("NOT " * count + "topic = 'a'", ZONE)
    expected = Compare("topic", "=", "a")
    assert parsed == (Not(expected) if count % 2 else expected)


def test_double_negations_inside_parentheses_are_removed() -> None:
    parsed = parse_filter("NOT (NOT (NOT (NOT (topic = 'a'))))", ZONE)
    assert parsed == Compare("topic", "=", "a")


def test_nested_and_or_are_flattened_and_duplicates_merged() -> None:
    parsed = parse_filter("topic = 'a' AND (topic = 'a' AND (turn_index > 1 AND topic = 'a'))", ZONE)
    assert parsed == All((Compare("topic", "=", "a"), Compare("turn_index", ">", 1)))
    assert parse_filter("(topic = 'a' OR topic = 'a') OR topic = 'b'", ZONE) == Any_(
        (Compare("topic", "=", "a"), Compare("topic", "=", "b"))
    )


def test_the_compiled_filter_is_normalised_too() -> None:
    clause = Compare("topic", "=", "a")
    nested: Filter = clause
    for _ in range(40):
        nested = Not(Not(All((nested, clause))))
    assert compile_filter(nested) == "(topic = 'a')"


def test_alternating_and_or_nested_30_deep_is_refused_cleanly() -> None:
    expr = "topic = 'a'"
    for depth in range(30):
        expr = f"turn_index > {depth} {'AND' if depth % 2 else 'OR'} ({expr})"
    with pytest.raises(FilterError, match="nested too deeply"):
        parse_filter(expr, ZONE)


def test_parentheses_nested_beyond_the_limit_give_a_filter_error_not_a_recursion_error() -> None:
    with pytest.raises(FilterError, match="nested too deeply"):
        parse_filter("(" * 900 + "topic = 'a'" + ")" * 900, ZONE)
    assert parse_filter("(" * 8 + "topic = 'a'" + ")" * 8, ZONE) == Compare("topic", "=", "a")

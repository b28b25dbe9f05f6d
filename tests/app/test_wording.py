"""How a count reads: one helper for the CLI, the server's lines and the MCP tools' text."""

from __future__ import annotations

import pytest

from huichat.app.wording import plural


@pytest.mark.parametrize(
    ("count", "noun", "reads"),
    [
        (0, "turn", "0 turns"),
        (1, "turn", "1 turn"),
        (2, "session", "2 sessions"),
        (1_200, "turn", "1,200 turns"),
        (1, "access", "1 access"),
        (6, "access", "6 accesses"),
        (1, "API key", "1 API key"),
        (3, "API key", "3 API keys"),
    ],
)
def test_a_count_reads_with_its_noun_in_the_right_number(count: int, noun: str, reads: str) -> None:
    assert plural(count, noun) == reads

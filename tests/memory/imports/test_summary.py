"""The dry-run summary and its language heuristic."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from huichat.memory.imports.reader import iter_conversations
from huichat.memory.imports.summary import SummaryBuilder, language_of, summarise
from tests.memory.imports.helpers import FIXTURES


@pytest.mark.parametrize(
    ("text", "language"),
    [
        ("上周三我们讨论了本地模型部署", "zh"),
        ("How do I rotate a log file?", "en"),
        ("帮我看看这个 Python traceback 是什么意思", "zh"),
        ("これは日本語の文章です", "other"),
        ("Привет, как дела?", "other"),
        ("12345 !!! 😀", ""),
    ],
)
def test_language_of(text: str, language: str) -> None:
    assert language_of(text) == language


def test_the_summary_counts_what_an_import_would_bring() -> None:
    summary = summarise(iter_conversations(FIXTURES / "chatgpt" / "conversations.json"))
    assert (summary.conversations, summary.empty_conversations) == (4, 1)
    assert summary.messages == 11 + 2 + 2
    assert (summary.alternative_branches, summary.alternative_messages) == (3, 4)
    assert summary.skipped == (("context", 1), ("empty", 1), ("system", 1))
    assert summary.turns == 3 + 1 + 1
    assert summary.times_estimated == 4 and summary.unknown_parts == 1
    assert summary.first == datetime.fromtimestamp(1699999990, UTC)
    assert summary.last == datetime.fromtimestamp(1700200000, UTC)
    assert dict(summary.languages) == {"en": 3}
    assert dict(summary.notes)["interrupted reply"] == 1
    assert summary.formats == (("chatgpt", 4),)


def test_the_builder_adds_up_several_sources() -> None:
    builder = SummaryBuilder()
    for path in (FIXTURES / "claude" / "conversations.json", FIXTURES / "deepseek" / "conversations.json"):
        for conversation in iter_conversations(path):
            builder.add(conversation)
    summary = builder.build()
    assert summary.formats == (("claude", 3), ("deepseek", 2))
    assert dict(summary.languages) == {"en": 3, "zh": 1}  # Claude c-1 is mostly English
    assert summary.guessed_branches == 1

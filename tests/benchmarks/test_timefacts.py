"""The time benchmark's event category is well posed: only the event time places each gold turn."""

from __future__ import annotations

from datetime import datetime

import pytest

from benchmarks.timefacts import generate
from huichat.memory.timeparse import TimeResolver
from tests.conftest import ZONE


@pytest.mark.parametrize("seed", [7, 11])
def test_each_event_fact_is_said_outside_the_range_asked_and_talks_about_a_time_in_it(seed: int) -> None:
    utterances, questions = generate(6, seed, ZONE, ("event",))
    by_id = {u["turn_id"]: u for u in utterances}
    resolver = TimeResolver(ZONE)
    asked = [q for q in questions if q["category"] == "event"]
    assert len(asked) == 6 * 4
    for question in asked:
        now = datetime.fromisoformat(question["question_datetime"])
        gold = by_id[question["evidence_turn_ids"][0]]
        said = datetime.fromisoformat(gold["turn_datetime"])
        span = resolver.parse(question["question"], now)
        assert span is not None, question["question"]
        assert said < now and not span.start <= said < span.end, question["question"]
        about = resolver.event_ranges(gold["text"], said)
        assert any(r.overlaps(span.start, span.end) for r in about), (question["question"], gold["text"])

"""The long-answer benchmark: deterministic, every depth and language asked, each answer inside its gold turn."""

from __future__ import annotations

import json
from pathlib import Path

from benchmarks.longgen import depth_of, main


def _read(path: Path) -> list[dict[str, object]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def test_answers_hold_their_fact_at_the_depth_of_the_category(tmp_path: Path) -> None:
    assert main(["--out", str(tmp_path / "a"), "--seed", "3", "--haystacks", "1", "--sessions", "2"]) == 0
    main(["--out", str(tmp_path / "b"), "--seed", "3", "--haystacks", "1", "--sessions", "2"])
    assert (tmp_path / "a" / "questions.jsonl").read_bytes() == (tmp_path / "b" / "questions.jsonl").read_bytes()
    turns = {str(row["turn_id"]): row for row in _read(tmp_path / "a" / "conversations.jsonl")}
    questions = _read(tmp_path / "a" / "questions.jsonl")
    assert {str(q["category"]) for q in questions} == {
        f"{lang}-{d}" for lang in ("en", "zh") for d in ("head", "middle", "deep")
    }
    for question in questions:
        (gold,) = question["evidence_turn_ids"]  # type: ignore[misc]
        text = str(turns[gold]["text"])
        assert turns[gold]["speaker"] == "assistant" and len(text) >= 500
        assert str(question["answer"]) in text
    assert depth_of(0) == "head" and depth_of(1000) == "middle" and depth_of(2000) == "deep"

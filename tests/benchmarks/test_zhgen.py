"""The Chinese benchmark generator: deterministic, well-posed, in the bench FORMAT.md layout."""

from __future__ import annotations

import json
import re
from collections import Counter
from datetime import datetime
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest

from benchmarks.zhgen import CATEGORIES, generate, main
from huichat.memory.timeparse import TimeResolver

ZONE = ZoneInfo("Asia/Shanghai")


def _read(path: Path) -> list[dict[str, object]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


@pytest.fixture(scope="module", params=[False, True], ids=["zh", "mixed"])
def dataset(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("zhgen")
    generate(out, seed=5, haystacks=2, mixed=request.param, users=12, per_user=40, per_type=8)
    return out


def test_same_seed_same_files(tmp_path: Path) -> None:
    generate(tmp_path / "a", seed=3, haystacks=1, users=6, per_user=30, per_type=4)
    generate(tmp_path / "b", seed=3, haystacks=1, users=6, per_user=30, per_type=4)
    generate(tmp_path / "c", seed=4, haystacks=1, users=6, per_user=30, per_type=4)
    for name in ("conversations.jsonl", "questions.jsonl"):
        assert (tmp_path / "a" / name).read_bytes() == (tmp_path / "b" / name).read_bytes()
    assert (tmp_path / "a" / "conversations.jsonl").read_bytes() != (
        tmp_path / "c" / "conversations.jsonl"
    ).read_bytes()


def test_format_and_gold(dataset: Path) -> None:
    rows = _read(dataset / "conversations.jsonl")
    questions = _read(dataset / "questions.jsonl")
    keys = {"conversation_id", "session_id", "session_datetime", "turn_id", "turn_index", "speaker", "text"}
    assert all(keys <= row.keys() for row in rows)
    ids = {str(row["turn_id"]) for row in rows}
    assert len(ids) == len(rows)
    conversation_of = {str(row["turn_id"]): row["conversation_id"] for row in rows}
    assert {q["category"] for q in questions} == set(CATEGORIES)
    for question in questions:
        gold = question["evidence_turn_ids"]
        assert isinstance(gold, list) and gold
        assert all(conversation_of[g] == question["conversation_id"] for g in gold)
        if question["category"] in ("aggregative", "comparative"):
            assert len(gold) >= 2


def test_sessions_are_one_user_day_in_time_order(dataset: Path) -> None:
    rows = _read(dataset / "conversations.jsonl")
    by_session: dict[tuple[object, object], list[dict[str, object]]] = {}
    for row in rows:
        by_session.setdefault((row["conversation_id"], row["session_id"]), []).append(row)
    for session in by_session.values():
        times = [str(r["turn_datetime"]) for r in session]
        assert times == sorted(times)
        assert len({t[:10] for t in times}) == 1
        assert [r["turn_index"] for r in session] == list(range(len(session)))


def test_look_alikes_are_there(dataset: Path) -> None:
    """The same name under several relations, the same event on different days: keywords alone cannot choose."""
    rows = _read(dataset / "conversations.jsonl")
    texts = [str(r["text"]) for r in rows if r["conversation_id"] == rows[0]["conversation_id"]]
    names = Counter(n for t in texts for n in re.findall(r"张伟|李娜|王芳|刘洋|Kevin|Lisa|陈静", t))
    assert names.most_common(1)[0][1] >= 5


def test_questions_hold_no_time_words(dataset: Path) -> None:
    """Question times would become filters on when a message was written, not on the event: none are used."""
    resolver = TimeResolver(ZONE)
    for question in _read(dataset / "questions.jsonl"):
        now = datetime.fromisoformat(str(question["question_datetime"])).replace(tzinfo=ZONE)
        assert resolver.parse(str(question["question"]), now) is None, question["question"]


def test_questions_are_not_copies_of_their_evidence(dataset: Path) -> None:
    rows = {str(r["turn_id"]): str(r["text"]) for r in _read(dataset / "conversations.jsonl")}
    for question in _read(dataset / "questions.jsonl"):
        gold = question["evidence_turn_ids"]
        assert isinstance(gold, list)
        gold_text = " ".join(rows[g] for g in gold)
        assert str(question["question"]).rstrip("？?") not in gold_text


def test_mixed_variant_switches_language(tmp_path: Path) -> None:
    generate(tmp_path, seed=5, haystacks=1, mixed=True, users=10, per_user=40, per_type=6)
    texts = [str(r["text"]) for r in _read(tmp_path / "conversations.jsonl")]
    both = [t for t in texts if re.search(r"[A-Za-z]{3,}", t) and re.search(r"[\u4e00-\u9fff]", t)]
    assert len(both) > len(texts) // 3
    questions = [str(q["question"]) for q in _read(tmp_path / "questions.jsonl")]
    assert any(q.isascii() for q in questions)


def test_cli(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--out", str(tmp_path), "--haystacks", "1", "--users", "5", "--per-type", "3"]) == 0
    assert "questions" in capsys.readouterr().out
    assert (tmp_path / "questions.jsonl").exists()
    with pytest.raises(SystemExit):
        main(["--out", str(tmp_path), "--haystacks", "0"])

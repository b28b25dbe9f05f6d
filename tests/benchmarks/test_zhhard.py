"""The hard Chinese benchmark keeps its promises: paraphrase, one answer, evidence days apart, a real hold-out."""

from __future__ import annotations

import json
import random
import re
from collections import Counter
from datetime import datetime
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import pytest

from benchmarks.zhhard import CATEGORIES, World, generate, haystack, main
from benchmarks.zhhardvocab import AGGREGATES, DESCRIPTORS, KINDS, SPLITS
from huichat.memory.timeparse import TimeResolver
from huichat.memory.words import content_terms

ZONE = ZoneInfo("Asia/Shanghai")


def _terms(templates: tuple[str, ...] | list[str]) -> set[str]:
    """Content characters of templates, slots left out."""
    return set().union(*(content_terms(re.sub(r"\{\w+\}", " ", t)) for t in templates))


@pytest.fixture(scope="module", params=SPLITS)
def drawn(request: pytest.FixtureRequest) -> tuple[World, list[dict[str, Any]], list[dict[str, Any]]]:
    return haystack(random.Random(f"test-{request.param}"), "h", request.param, users=20, per_type=40)


def test_same_seed_same_files(tmp_path: Path) -> None:
    for name, split, seed in (("a", "tune", 3), ("b", "tune", 3), ("c", "tune", 4), ("d", "heldout", 3)):
        generate(tmp_path / name, split, seed, haystacks=1, users=6, per_type=4)
    for name in ("conversations.jsonl", "questions.jsonl"):
        assert (tmp_path / "a" / name).read_bytes() == (tmp_path / "b" / name).read_bytes()
    for other in ("c", "d"):
        a, b = ((tmp_path / n / "conversations.jsonl").read_text(encoding="utf-8") for n in ("a", other))
        assert a.replace("-tune-", "-x-") != b.replace("-heldout-", "-x-")


@pytest.mark.parametrize("split", SPLITS)
def test_questions_share_no_content_word_with_their_kinds_messages(split: str) -> None:
    """Only the slots (the person, the value) can be found by copying the question's words."""
    for kind in KINDS:
        assert not _terms(kind.asks[split]) & _terms(kind.says), kind.name
    for descriptor in DESCRIPTORS:
        assert not _terms(descriptor.refers[split]) & _terms(descriptor.says), descriptor.name
    for group, templates in AGGREGATES.items():
        says = [t for kind in KINDS if kind.group == group for t in kind.says]
        assert not _terms(templates[split]) & _terms(says), group


def test_the_splits_share_no_question_template() -> None:
    for asks in [k.asks for k in KINDS] + [d.refers for d in DESCRIPTORS] + list(AGGREGATES.values()):
        assert asks["tune"] and asks["heldout"]
        assert not set(asks["tune"]) & set(asks["heldout"])


def test_every_question_has_one_answer(drawn: tuple[World, list[dict[str, Any]], list[dict[str, Any]]]) -> None:
    """Whoever the question names (name, relation and name, or relation and descriptor) is one person."""
    world, _rows, questions = drawn
    assert {q["category"] for q in questions} == set(CATEGORIES)
    for question in questions:
        asks = question["extra"]["asks"]
        matching = [
            k
            for k in world.people
            if asks.get("name", k.person.name) == k.person.name
            and asks.get("relation", k.person.relation) == k.person.relation
            and (
                "descriptor" not in asks
                or (k.descriptor and [k.descriptor[0].name, k.descriptor[1]] == asks["descriptor"])
            )
        ]
        assert len(matching) == 1, question["question"]
        if "kind" in asks:
            assert asks["kind"] in matching[0].facts


def test_names_recur_across_users_but_relation_and_name_do_not(
    drawn: tuple[World, list[dict[str, Any]], list[dict[str, Any]]],
) -> None:
    world, _rows, _questions = drawn
    users_of: dict[str, set[int]] = {}
    for known in world.people:
        users_of.setdefault(known.person.name, set()).add(known.user)
    assert sum(len(users) > 1 for users in users_of.values()) >= 5
    pairs = Counter((k.person.relation, k.person.name) for k in world.people)
    assert max(pairs.values()) == 1


def test_aggregative_evidence_is_three_to_five_messages_days_apart(
    drawn: tuple[World, list[dict[str, Any]], list[dict[str, Any]]],
) -> None:
    _world, rows, questions = drawn
    by_id = {r["turn_id"]: r for r in rows}
    aggregative = [q for q in questions if q["category"] == "aggregative"]
    assert len(aggregative) >= 20
    for question in aggregative:
        evidence = [by_id[t] for t in question["evidence_turn_ids"]]
        assert 3 <= len(evidence) <= 5
        assert len({r["session_id"] for r in evidence}) == len(evidence)
        assert len({r["turn_datetime"][:10] for r in evidence}) == len(evidence)


def test_described_questions_need_the_description_and_the_fact(
    drawn: tuple[World, list[dict[str, Any]], list[dict[str, Any]]],
) -> None:
    """The question does not hold the name; its evidence is the message describing the person and the fact."""
    world, rows, questions = drawn
    text = {r["turn_id"]: r["text"] for r in rows}
    described = [q for q in questions if q["category"] == "described"]
    assert described
    for question in described:
        told, fact = question["evidence_turn_ids"]
        person = next(k for k in world.people if k.descriptor and k.descriptor[3].turn == told)
        assert person.person.name not in question["question"]
        assert person.person.name in text[told] and person.person.name in text[fact]


def test_noise_mentions_the_same_people_without_the_facts(
    drawn: tuple[World, list[dict[str, Any]], list[dict[str, Any]]],
) -> None:
    """Everyone is also named in messages that state nothing asked about them, some about the same kinds of things."""
    world, rows, _questions = drawn
    stating = {line.turn for k in world.people for _v, line in k.facts.values()}
    stating |= {k.descriptor[3].turn for k in world.people if k.descriptor}
    loose = [r["text"] for r in rows if r["turn_id"] not in stating]
    for known in world.people:
        assert any(known.person.name in text for text in loose), known.person
    noise = {t.split("{P}")[-1].split("{X}")[0] for kind in KINDS for t in kind.noise}
    assert sum(any(part and part in text for part in noise) for text in loose) >= len(world.people)


def test_questions_hold_no_time_words(drawn: tuple[World, list[dict[str, Any]], list[dict[str, Any]]]) -> None:
    """A time word would become a filter on when a message was written: none are used."""
    resolver = TimeResolver(ZONE)
    for question in drawn[2]:
        now = datetime.fromisoformat(question["question_datetime"]).replace(tzinfo=ZONE)
        assert resolver.parse(question["question"], now) is None, question["question"]


def test_cli(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert (
        main(["--out", str(tmp_path), "--split", "heldout", "--haystacks", "1", "--users", "6", "--per-type", "3"]) == 0
    )
    assert "heldout" in capsys.readouterr().out
    rows = [json.loads(line) for line in (tmp_path / "questions.jsonl").read_text(encoding="utf-8").splitlines()]
    assert {r["extra"]["split"] for r in rows} == {"heldout"}
    with pytest.raises(SystemExit):
        main(["--out", str(tmp_path), "--haystacks", "0"])

"""How ``bench loop`` judges a reply: right fact, invented ids, said "no memory", pretended."""

from __future__ import annotations

import pytest

from benchmarks.loopdata import ABSENT, FACTS
from benchmarks.loopjudge import Asked, has_keys, ids_in, summarise

KNOWN = {"nu5xoj", "kyych5", "abcdef"}


def _asked(answer: str, *, gold: str = "nu5xoj", keys: tuple[str, ...] = ("WireGuard", "51820")) -> Asked:
    asked = Asked("server", "q", gold, keys, answer=answer, shown_ids={"nu5xoj", "abcdef"})
    asked.judge(KNOWN)
    return asked


def test_every_fact_names_what_a_right_answer_says_and_its_own_fact_says_it() -> None:
    for fact in FACTS:
        assert fact.keys and has_keys(fact.said, fact.keys), fact.question
        others = [other for other in FACTS if other is not fact]
        assert not any(has_keys(other.said, fact.keys) for other in others), fact.question  # unambiguous
    assert len(FACTS) == 20 and len(ABSENT) == 5


@pytest.mark.parametrize(
    ("answer", "ids"),
    [
        ("WireGuard on 51820 [id:nu5xoj].", {"nu5xoj"}),
        ('{"id": 123456, "相似度": 0.8}', {"123456"}),
        ("From memory abcdef: WireGuard.", set()),  # letters only, not after "id": a word
        ("ThinkPad X1 Carbon, DS920+, blue-harbor-42, 192.168.50.1", set()),
        ("记忆 ID：k7f2a1 说的", {"k7f2a1"}),
        ("the id 123456 and the id that was used", {"123456"}),
    ],
)
def test_ids_in_an_answer(answer: str, ids: set[str]) -> None:
    assert ids_in(answer) == ids


def test_a_reply_is_judged_in_the_issues_columns() -> None:
    right = _asked("你用的是 wireguard，端口 51820（id:nu5xoj）。")
    assert right.right_fact and right.cited == ["nu5xoj"] and not right.invented and right.verdict() == "right fact ✔"
    invented = _asked('WireGuard, 51820 {"id": "123456"}')
    assert invented.right_fact and invented.invented and invented.invented_ids == ["123456"]
    missed = _asked("我没有找到相关的记忆。")
    assert missed.missed and not missed.right_fact and missed.verdict() == "said no memory"
    half = _asked("WireGuard.")
    assert not half.right_fact and not half.missed and half.verdict() == "wrong"
    honest = _asked("I don't remember you telling me that.", gold="", keys=())
    assert not honest.pretended and not honest.invented and honest.verdict() == "said no memory ✔"
    pretending = _asked("The production server runs on port 8443.", gold="", keys=())
    assert pretending.pretended and not pretending.invented
    citing = _asked("I don't know, but [id:abcdef] says 8443.", gold="", keys=())
    assert citing.pretended and citing.invented  # a memory claimed for a question memory cannot answer
    failed = Asked("server", "q", "nu5xoj", ("x",), status="failed")
    figures = summarise([right, invented, missed, half, honest, pretending, citing, failed])
    assert figures["right_fact"] == 2 and figures["invented"] == 2 and figures["missed"] == 1
    assert figures["absent_honest"] == 1 and figures["pretended"] == 2 and figures["no_answer"] == 1


@pytest.mark.parametrize(
    "answer", ["我不记得了。", "这个我记不得你说过。", "我想不起来你提过这件事。", "I don't remember that."]
)
def test_saying_it_is_not_remembered_is_saying_no_memory(answer: str) -> None:
    # the memory-first rules ask for "不记得" in Chinese: the judge must read it as honest
    assert not _asked(answer, gold="", keys=()).pretended

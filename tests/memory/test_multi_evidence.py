"""Evidence spread over sessions: the second hop, and the speaker a question names."""

from __future__ import annotations

import random
from dataclasses import replace
from datetime import timedelta
from pathlib import Path

from huichat.memory.embedding import HashEmbedder
from huichat.memory.fusion import Fusion, speakers_named
from huichat.memory.kernel import MemoryKernel
from huichat.memory.results import SearchRequest
from huichat.memory.turns import Message, Turn, TurnDraft
from tests.conftest import NOW, open_kernel

_FILLER = [
    "kettle",
    "lantern",
    "pebble",
    "violet",
    "harbor",
    "cedar",
    "biscuit",
    "meadow",
    "quartz",
    "saddle",
    "tulip",
    "anchor",
    "marble",
    "willow",
    "copper",
    "basket",
    "ribbon",
    "garnet",
    "orchard",
    "pillow",
    "falcon",
    "canyon",
    "velvet",
    "thimble",
    "juniper",
    "saffron",
    "walnut",
    "glacier",
    "lagoon",
    "mosaic",
    "parsley",
    "trumpet",
    "sparrow",
    "zephyr",
]


def _said(kernel: MemoryKernel, days_ago: int, *lines: tuple[str, str]) -> list[Turn]:
    """One session ``days_ago``, one turn per (speaker, text)."""
    started = NOW - timedelta(days=days_ago)
    session = kernel.new_session(started)
    drafts = [
        TurnDraft((Message("user", text, speaker),), started + timedelta(minutes=i))
        for i, (speaker, text) in enumerate(lines)
    ]
    return kernel.append_turns(session, drafts)


def _ranked(kernel: MemoryKernel, query: str, fusion: Fusion, top_k: int) -> list[str]:
    kernel.retriever.fusion = fusion
    return [h.turn.id for h in kernel.search(SearchRequest(query, NOW, top_k, record_access=False)).hits]


def test_a_session_reachable_only_through_the_first_answer_is_found_by_the_second_hop(tmp_path: Path) -> None:
    """ "Where has Nora camped?": one session says "camped" and names Wakatipu's glowworm cove; an
    older one names the cove again but not camping. Every other turn holds the query's words as
    much as it does (Nora says them all); only the first answer's words lead to it."""
    kernel = open_kernel(tmp_path, HashEmbedder(1024))
    try:
        draw = random.Random(7)
        for day in range(40):
            _said(kernel, 200 - day, ("Nora", " ".join(draw.sample(_FILLER, 5))))
        (first,) = _said(kernel, 60, ("Nora", "we camped by Lake Wakatipu glowworm cove under the stars"))
        (second,) = _said(kernel, 300, ("Nora", "Wakatipu glowworm cove returning joyfully"))
        kernel.maintain(force=True)
        question = "Where has Nora camped?"
        without = _ranked(kernel, question, replace(Fusion(), hop_weight=0.0), 10)
        assert without[0] == first.id and second.id not in without
        assert _ranked(kernel, question, Fusion(), 3)[:2] == [first.id, second.id]
    finally:
        kernel.close()


def test_what_the_named_person_said_ranks_before_what_others_said_about_them(tmp_path: Path) -> None:
    kernel = open_kernel(tmp_path, HashEmbedder(256))
    try:
        (about,) = _said(kernel, 10, ("Sam", "Ivy, I painted a sunset over the harbour for you"))
        (own,) = _said(kernel, 9, ("Ivy", "I painted the old barn by the river"))
        _said(kernel, 8, ("Sam", "the bakery on the corner closed early today"))
        kernel.maintain(force=True)
        question = "What has Ivy painted?"
        assert _ranked(kernel, question, replace(Fusion(), speaker_share=0.0), 2)[0] == about.id
        assert _ranked(kernel, question, Fusion(), 2)[0] == own.id
    finally:
        kernel.close()


def _turn(*speakers: str) -> Turn:
    return Turn(
        "abc123",
        "s1",
        "s1.jsonl",
        0,
        NOW,
        tuple(Message("user" if i == 0 else "assistant", "hi", who) for i, who in enumerate(speakers)),
    )


def test_a_speaker_is_named_by_a_whole_word_or_inside_chinese_and_roles_are_no_names() -> None:
    turns = [_turn("Ivy", ""), _turn("小明", "assistant"), _turn("Al", "Bo")]
    assert speakers_named("What has Ivy painted?", turns) == {"Ivy"}
    assert speakers_named("trip to Ivybridge", turns) == frozenset()
    assert speakers_named("小明上周去哪了", turns) == {"小明"}
    assert speakers_named("what did the assistant say", turns) == frozenset()
    assert speakers_named("al and bo", turns) == {"Al", "Bo"}

"""Before a memory-first reply: the model's own yes or no on each memory found for the message.

A small model shown a neighbour's fact answers with it: Qwen2.5-Coder-1.5B gave the staging
server's port for "Which port does the production server run on?", the daughter's piano lesson
for the son's swimming lesson, whatever the rules or a note after the question said (a note strong
enough to stop it also made it refuse facts that were there). Asked alone whether that memory
answers that question, the same model said no to each neighbour and yes to each fact (`bench
loop`'s pairs, temperature 0). So each hit is put to it first, in one short request; a hit it says
no to is left out of the block and the memory panel. A check that fails or says neither keeps the
hit: the reply goes on as it would without the check.

Not every model can be asked: Qwen2.5-Coder-0.5B said 否 to 8 of the 10 Chinese facts that answered
their questions in `bench loop` (the VPN's protocol and port for "which protocol and port does my
VPN use") and no to 2 of 9 English ones, and a fact left out is worse than a neighbour kept. So
before its first check a model is tried on ``TRIAL`` (``check_trusted``); the verdict is kept with
the model's mode (``ModeBook``) and tried again after ``doctor --ping``.
"""

from __future__ import annotations

import logging
import re
from dataclasses import replace

from huichat.app.memory_modes import ModeBook
from huichat.app.prompts import language_of_message, turn_text
from huichat.memory.results import SearchResults
from huichat.providers.errors import ProviderError
from huichat.providers.llm import LLMClient

_ASK = {
    "zh": "记忆：{memory}\n问题：{question}\n这条记忆能回答这个问题吗（说的是同一个人、同一件事）？只回答“是”或“否”。",
    "en": "Memory: {memory}\nQuestion: {question}\n"
    "Does this memory answer the question (the same person, the same thing)? Reply only yes or no.",
}
_NO = re.compile(r"^\W*(?:no\b|否|不)", re.IGNORECASE)
"""A reply that says no (in either language); anything else keeps the hit."""
_log = logging.getLogger(__name__)

TRIAL: tuple[tuple[str, str, bool], ...] = (
    ("我妈妈对青霉素过敏。 / 记住了，你妈妈对青霉素过敏。", "我妈妈对什么药过敏？", True),
    (
        "We moved the weekly planning meeting to Thursday at 3 pm. / OK, Thursdays at 3 pm.",
        "When is the weekly planning meeting?",
        True,
    ),
    ("我们的新办公室在浦东张江，五楼。 / 好的，浦东张江五楼。", "新办公室在哪里？", True),
    ("My brother lives in Toronto and works as a nurse. / Noted: Toronto, nurse.", "Where does my brother live?", True),
    ("我妈妈对青霉素过敏。 / 记住了，你妈妈对青霉素过敏。", "我爸爸对什么药过敏？", False),
    ("My brother lives in Toronto and works as a nurse. / Noted: Toronto, nurse.", "Where does my mother live?", False),
)
"""(memory, question, whether the memory answers it): what a model's check is tried on, facts first,
then neighbours, in both languages. A model that says no to a fact is not asked (a fact left out is
the harm); one that then says no to a neighbour is; one that says no to none is not (asking it only
costs time). Qwen2.5-Coder-1.5B said yes to the four facts and to the father's allergy, and no to
the mother's home: a check that catches some neighbours is worth its requests."""


def check_messages(question: str, memory: str) -> list[dict[str, str]]:
    """The request that asks whether ``memory`` answers ``question``, in the question's language."""
    ask = _ASK[language_of_message(question)]
    return [{"role": "user", "content": ask.format(memory=memory, question=question.strip())}]


async def check_trusted(llm: LLMClient, provider: str | None, book: ModeBook) -> bool:
    """Whether the model of ``provider`` answers the check rightly: what ``book`` knows, or else its
    answers on ``TRIAL`` (kept in ``book``; a trial that fails to get an answer is tried again next time)."""
    config = llm.provider(provider)
    known = book.verdict(config).checks_hits
    if known is not None:
        return known
    trusted = False
    for memory, question, answers in TRIAL:
        try:
            said = await llm.short_answer(provider, check_messages(question, memory), max_tokens=3, temperature=0.0)
        except ProviderError as exc:
            _log.info("the memory check was not tried on the model: %s", exc)
            return False
        if _NO.match(said):  # a fact refused: never trusted; a neighbour refused: trusted
            trusted = not answers
            break
    if not trusted:
        _log.info("on trial the model refused a fact or never said no: its memory-first hits go unchecked")
    book.record_check(config, trusted)
    return trusted


async def answering_hits(
    llm: LLMClient, provider: str | None, question: str, results: SearchResults, book: ModeBook
) -> SearchResults:
    """``results`` without the hits the model of ``provider`` says do not answer ``question`` (all of them
    when the model's checks cannot be trusted, ``check_trusted``).

    One request a hit, one after another (a local server answers one client at a time)."""
    if not await check_trusted(llm, provider, book):
        return results
    dropped: set[str] = set()
    for hit in results.hits:
        try:
            said = await llm.short_answer(
                provider, check_messages(question, turn_text(hit.turn)), max_tokens=3, temperature=0.0
            )
        except ProviderError as exc:  # the check is a help, not a gate: the hit stays
            _log.info("a memory was not checked against the question: %s", exc)
            continue
        if _NO.match(said):
            dropped.add(hit.turn.id)
    if not dropped:
        return results
    return replace(results, results=tuple(r for r in results.results if r.turn.id not in dropped))

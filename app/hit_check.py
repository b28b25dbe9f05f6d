"""Before a memory-first reply: the model's own yes or no on each memory found for the message.

A small model shown a neighbour's fact answers with it: Qwen2.5-Coder-1.5B gave the staging
server's port for "Which port does the production server run on?", the daughter's piano lesson
for the son's swimming lesson, whatever the rules or a note after the question said (a note strong
enough to stop it also made it refuse facts that were there). Asked alone whether that memory
answers that question, the same model said no to each neighbour and yes to each fact (`bench
loop`'s pairs, temperature 0). So each hit is put to it first, in one short request; a hit it says
no to is left out of the block and the memory panel. A check that fails or says neither keeps the
hit: the reply goes on as it would without the check.
"""

from __future__ import annotations

import logging
import re
from dataclasses import replace

from huichat.app.prompts import turn_text, uses_chinese
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


def check_messages(question: str, memory: str) -> list[dict[str, str]]:
    """The request that asks whether ``memory`` answers ``question``, in the question's language."""
    ask = _ASK["zh" if uses_chinese(question) else "en"]
    return [{"role": "user", "content": ask.format(memory=memory, question=question.strip())}]


async def answering_hits(llm: LLMClient, provider: str | None, question: str, results: SearchResults) -> SearchResults:
    """``results`` without the hits the model of ``provider`` says do not answer ``question``.

    One request a hit, one after another (a local server answers one client at a time)."""
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

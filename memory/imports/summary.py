"""What an import would bring in (``--dry-run``), counted over the stream without keeping it."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime

from huichat.memory.imports.grouping import group_turns
from huichat.memory.imports.model import ImportedConversation, PartKind

_SAMPLE = 20_000  # characters looked at per conversation to tell its language


_HAN = re.compile("[\u4e00-\u9fff\u3400-\u4dbf\U00020000-\U0002ffff]")
_ASCII_LETTER = re.compile("[A-Za-z]")
_LETTER = re.compile(r"[^\W\d_]")
_KANA_HANGUL = re.compile(r"(?![\W\d_])[\u3040-\u30ff\uac00-\ud7af]")


def language_of(text: str) -> str:
    """``zh``, ``en`` or ``other`` by a cheap count of characters; ``""`` when there are none.

    A Han character says about as much as three Latin letters, so Han counts three times;
    kana, Hangul, Cyrillic and other scripts count as other. The largest share wins.
    """
    # counted by the regex engine: a loop over characters in Python was a tenth of an import
    sample = text[:_SAMPLE]
    han = len(_HAN.findall(sample))
    ascii_letters = len(_ASCII_LETTER.findall(sample))
    kana_hangul = len(_KANA_HANGUL.findall(sample))
    other = len(_LETTER.findall(sample)) - han - ascii_letters - kana_hangul + 3 * kana_hangul
    scores = {"zh": han * 3, "en": ascii_letters, "other": other}
    best = max(scores, key=lambda k: scores[k])
    return best if scores[best] else ""


@dataclass(frozen=True)
class ImportSummary:
    """Counts for the dry-run table."""

    conversations: int
    empty_conversations: int
    messages: int
    """Messages on visible branches."""
    turns: int
    alternative_branches: int
    alternative_messages: int
    skipped: tuple[tuple[str, int], ...]
    """Skipped nodes by reason."""
    first: datetime | None
    last: datetime | None
    languages: tuple[tuple[str, int], ...]
    """Conversations by language (zh, en, other)."""
    times_estimated: int
    unknown_parts: int
    guessed_branches: int
    notes: tuple[tuple[str, int], ...]
    """Notes by kind."""
    formats: tuple[tuple[str, int], ...]
    """Conversations by source format."""


@dataclass
class SummaryBuilder:
    """Adds conversations one by one; ``build`` gives the summary."""

    conversations: int = 0
    empty: int = 0
    """Conversations without a visible message."""
    messages: int = 0
    turns: int = 0
    branches: int = 0
    """Branches beside the current one."""
    branch_messages: int = 0
    estimated: int = 0
    """Messages whose time is estimated."""
    unknown: int = 0
    """Parts of a kind the reader does not know."""
    guessed: int = 0
    """Conversations whose current branch was guessed."""
    first: datetime | None = None
    last: datetime | None = None
    skipped: Counter[str] = field(default_factory=Counter)
    languages: Counter[str] = field(default_factory=Counter)
    notes: Counter[str] = field(default_factory=Counter)
    formats: Counter[str] = field(default_factory=Counter)

    def add(self, conversation: ImportedConversation) -> None:
        """Count one conversation."""
        self.conversations += 1
        self.formats[conversation.source.value] += 1
        self.empty += not conversation.messages
        self.messages += len(conversation.messages)
        self.turns += len(group_turns(conversation.messages))
        self.branches += len(conversation.alternatives)
        self.guessed += conversation.branch_heuristic
        everything = [*conversation.messages, *(m for b in conversation.alternatives for m in b.messages)]
        self.branch_messages += len(everything) - len(conversation.messages)
        for message in everything:
            self.estimated += message.time.estimated
            self.unknown += sum(1 for p in message.parts if p.kind is PartKind.UNKNOWN)
            moment = message.time.instant
            self.first = moment if self.first is None else min(self.first, moment)
            self.last = moment if self.last is None else max(self.last, moment)
        self.skipped.update(node.reason.value for node in conversation.skipped)
        self.notes.update(note.kind.value for note in conversation.notes)
        sample, size = [], 0
        for message in conversation.messages:
            if size > _SAMPLE:
                break
            sample.append(message.text)
            size += len(sample[-1])
        language = language_of("\n".join(sample))
        if language:
            self.languages[language] += 1

    def build(self) -> ImportSummary:
        """The counts so far."""
        return ImportSummary(
            conversations=self.conversations,
            empty_conversations=self.empty,
            messages=self.messages,
            turns=self.turns,
            alternative_branches=self.branches,
            alternative_messages=self.branch_messages,
            skipped=tuple(sorted(self.skipped.items())),
            first=self.first,
            last=self.last,
            languages=tuple(sorted(self.languages.items())),
            times_estimated=self.estimated,
            unknown_parts=self.unknown,
            guessed_branches=self.guessed,
            notes=tuple(sorted(self.notes.items())),
            formats=tuple(sorted(self.formats.items())),
        )


def summarise(conversations: Iterable[ImportedConversation]) -> ImportSummary:
    """The summary of a whole stream (it is consumed, one conversation at a time)."""
    builder = SummaryBuilder()
    for conversation in conversations:
        builder.add(conversation)
    return builder.build()

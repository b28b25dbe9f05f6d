"""How ``huichat bench loop`` judges one reply, automatically, in the issue's columns.

- **right fact**: a question whose answer is in memory, answered with every key of its fact
  (``Fact.keys``: each one of its alternatives, without case);
- **invented**: an id in the answer that is no turn of the store, or an id cited for a question
  whose answer is in no memory;
- **said "no memory"** while the answer was there (and the fact is not in the answer);
- **pretended**: a question whose answer is in no memory, answered without saying so;
- **markup**: call markup in the answer; **echo**: a copied tool result.

An id is a word shaped like an anchor id: six lowercase letters or digits with a digit and a
letter among them, or a word of 4–12 letters or digits after "id:" (``[id:…]``, ``"id": …``), or
one with a digit after "id " ("id 123456"; not "the id that").
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

MARKUP = re.compile(r"<tool_call>|</?tools>|<function=|<tool_response>|\"arguments\"\s*:|\"name\"\s*:\s*\"recall_")
ECHO = re.compile(r"\| prev: |📁 |相似度: \d")
NO_MEMORY = re.compile(
    r"没有找到|没找到|找不到|没有(?:相关|关于|这|你|提到|记录|提供|告诉|说过)|不知道|不清楚|不记得|记不得|想不起|无法(?:确定|回答|找到|得知)|未(?:找到|提到|提及)"
    r"|记忆中没有|没有.{0,12}(?:记忆|信息|记录)"
    r"|no (?:relevant )?(?:memory|memories|record|information|mention)|not (?:in|found)|(?:couldn't|could not|can't|cannot|didn't|did not) find"
    r"|(?:don't|do not) (?:have|know|remember|recall)|haven't (?:told|mentioned|said)|(?:didn't|did not|never) (?:tell|mention|say)"
    r"|not sure|no idea|unknown",
    re.IGNORECASE,
)
"""How answers say that memory holds nothing on the question (Chinese and English)."""
_AFTER_ID = re.compile(r"\bid[\"'`]?\s*(?:[:：=#]\s*[\"'`]?|\s(?=[A-Za-z]*[0-9]))([A-Za-z0-9]{4,12})\b", re.IGNORECASE)
_WORD6 = re.compile(r"(?<![a-z0-9])([a-z0-9]{6})(?![a-z0-9])")
_ID_SHAPED = re.compile(r"(?<![A-Za-z0-9_-])(?=[a-z]*[0-9])(?=[0-9]*[a-z])([a-z0-9]{6})(?![A-Za-z0-9_-])")


def ids_in(answer: str) -> set[str]:
    """The words of ``answer`` that stand for turn ids (see the module's docstring)."""
    return {found.lower() for found in _AFTER_ID.findall(answer)} | set(_ID_SHAPED.findall(answer))


def has_keys(answer: str, keys: tuple[str, ...]) -> bool:
    """Whether ``answer`` says every key (one of its ``|`` alternatives), without case."""
    lowered = answer.lower()
    return bool(keys) and all(any(a.lower() in lowered for a in key.split("|")) for key in keys)


@dataclass
class Asked:
    """One question through one mode: what was called and answered, and how it is judged."""

    mode: str
    question: str
    gold: str
    """The fact's turn id ('' for a question whose answer is in no memory)."""
    keys: tuple[str, ...] = ()
    answer: str = ""
    status: str = "ok"
    rounds: int = 0
    calls: list[str] = field(default_factory=list)
    gold_in_top5: bool = False
    gold_as_neighbour: bool = False
    cited: list[str] = field(default_factory=list)
    shown_ids: set[str] = field(default_factory=set)
    """Every turn id a tool result or the memory block showed the model."""
    invented_ids: list[str] = field(default_factory=list)
    """Ids in the answer that are no turn of the store."""
    memory_mode: str = ""
    seconds: float = 0.0

    @property
    def absent(self) -> bool:
        return not self.gold

    @property
    def cite_correct(self) -> bool:
        return self.gold in self.cited and self.gold_in_top5

    @property
    def right_fact(self) -> bool:
        return not self.absent and self.status == "ok" and has_keys(self.answer, self.keys)

    @property
    def says_no_memory(self) -> bool:
        return self.status == "ok" and bool(NO_MEMORY.search(self.answer))

    @property
    def invented(self) -> bool:
        return bool(self.invented_ids) or (self.absent and bool(self.cited))

    @property
    def missed(self) -> bool:
        """Said there was no memory of it while the answer was there."""
        return not self.absent and self.says_no_memory and not self.right_fact

    @property
    def pretended(self) -> bool:
        """Answered as if from memory a question whose answer is in no memory."""
        return self.absent and self.status == "ok" and (not self.says_no_memory or bool(self.cited))

    @property
    def markup(self) -> bool:
        return bool(MARKUP.search(self.answer))

    @property
    def echo(self) -> bool:
        return bool(ECHO.search(self.answer))

    def judge(self, known_ids: set[str]) -> None:
        """Read the ids in the answer: those shown to the model are citations, the others unknown ones."""
        words = set(_WORD6.findall(self.answer))  # a citation may be any id shown, letters only too
        self.cited = sorted(words & self.shown_ids)
        self.invented_ids = sorted(ids_in(self.answer) - known_ids)

    def verdict(self) -> str:
        """One word for the question-by-question table."""
        if self.status != "ok":
            return "no answer"
        if self.absent:
            return "pretended" if self.pretended else "said no memory ✔"
        if self.right_fact:
            return "right fact ✔"
        return "said no memory" if self.missed else "wrong"


def summarise(rows: list[Asked]) -> dict[str, float | int]:
    """The figures of one mode (or all)."""
    present = [r for r in rows if not r.absent]
    with_gold = [r for r in present if r.gold_in_top5]
    n = max(len(rows), 1)
    return {
        "replies": len(rows),
        "gold_in_top5": round(len(with_gold) / max(len(present), 1), 3),
        "cite_correct": round(sum(r.cite_correct for r in with_gold) / max(len(with_gold), 1), 3),
        "right_fact": sum(r.right_fact for r in present),
        "invented": sum(r.invented for r in rows),
        "missed": sum(r.missed for r in present),
        "absent_honest": sum(not r.pretended and r.status == "ok" for r in rows if r.absent),
        "pretended": sum(r.pretended for r in rows),
        "mean_rounds": round(sum(r.rounds for r in rows) / n, 2),
        "markup": sum(r.markup for r in rows),
        "echoes": sum(r.echo for r in rows),
        "no_answer": sum(r.status != "ok" for r in rows),
        "mean_seconds": round(sum(r.seconds for r in rows) / n, 2),
    }

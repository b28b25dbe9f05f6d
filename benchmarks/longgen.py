"""Long chat-assistant answers with facts deep inside: what a cap on embedded tokens would lose.

Each haystack is a user's sessions with an assistant about their projects (English and
Chinese): a request naming the project, then an answer of 500–3,000 characters — headings,
explanations, code blocks — with one fact about the project (a port, a backup time, an owner)
placed at a chosen depth. Every project has several such answers, each with a different kind
of fact, and every kind of fact occurs for many projects, so only the fact sentence tells the
right answer from its look-alikes. Questions ask for the fact in other words; ``category`` is
the language and where the fact sits: ``en-head`` (in the first 500 characters), ``en-middle``
(500–1,500), ``en-deep`` (beyond 1,500), the same for ``zh``.

Output is the ``shared/bench/FORMAT.md`` layout, so ``huichat bench recall --data DIR`` runs it::

    python -m benchmarks.longgen --out DIR --seed 5 --haystacks 2
"""

from __future__ import annotations

import argparse
import json
import random
import zlib
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from benchmarks import longvocab as v

FIRST_DAY = datetime(2025, 1, 6, 9, 0)
DEPTHS = ("head", "middle", "deep")
_DEPTH_AT = {"head": (0, 350), "middle": (600, 1300), "deep": (1600, 2600)}
"""Where (characters into the answer) the fact is put for each depth."""
_VALUE_OF = {
    "backup": "time", "port": "port", "retry": "n", "database": "db",
    "owner": "person", "region": "region", "cache": "n", "pin": "ver",
}  # fmt: skip
"""The value a question about each kind of fact asks for."""


def depth_of(offset: int) -> str:
    """The category's depth for a fact starting ``offset`` characters into its answer."""
    return "head" if offset < 500 else "middle" if offset < 1500 else "deep"


@dataclass(frozen=True)
class Answer:
    """A generated answer and the fact inside it."""

    text: str
    question: str
    value: str
    offset: int


def _values(rng: random.Random, lang: str) -> dict[str, str]:
    people = v.PEOPLE_EN if lang == "en" else v.PEOPLE_ZH
    regions = v.REGIONS if lang == "en" else v.REGIONS_ZH
    return {
        "time": f"{rng.randint(0, 5):02d}:{rng.choice((0, 10, 15, 20, 30, 40, 45, 50)):02d}",
        "n": str(rng.randint(3, 30)),
        "s": str(rng.choice((5, 10, 15, 20, 30, 45, 60, 90))),
        "port": str(rng.randint(1025, 9999)),
        "db": rng.choice(v.DATABASES),
        "person": rng.choice(people),
        "region": rng.choice(regions),
        "lib": rng.choice(v.LIBRARIES),
        "ver": f"{rng.randint(0, 4)}.{rng.randint(0, 30)}.{rng.randint(0, 9)}",
    }


def _blocks(rng: random.Random, lang: str, project: str, size: int) -> list[str]:
    """Paragraphs, headings and code of an answer about ``project``, about ``size`` characters."""
    glue = " " if lang == "en" else ""
    slug = f"svc{zlib.crc32(project.encode()) % 1000:03d}"
    intro = (
        f"Here is how I would approach {project}, step by step."
        if lang == "en"
        else f"下面是我对{project}的建议，一步一步来。"
    )
    blocks = [intro]
    headings = list(v.HEADINGS[lang])
    rng.shuffle(headings)
    total = len(intro)
    while total < size:
        if headings and len(blocks) > 1 and rng.random() < 0.5:
            blocks.append(headings.pop())
        blocks.append(glue.join(rng.sample(v.FILLER[lang], rng.randint(3, 5))))
        if rng.random() < 0.25:
            blocks.append(rng.choice(v.CODE).format(slug=slug))
        total = sum(len(b) + 2 for b in blocks)
    blocks.append(rng.choice(v.CLOSINGS[lang]))
    return blocks


def answer(rng: random.Random, lang: str, project: str, kind: str, depth: str) -> Answer:
    """One answer with the fact of ``kind`` about ``project`` near the depth asked for."""
    low, high = _DEPTH_AT[depth]
    at = rng.randint(low, high)
    blocks = _blocks(rng, lang, project, max(500, at + rng.randint(200, 700)))
    values = _values(rng, lang)
    sentence, question = v.FACTS[kind][lang]
    fact = sentence.format(p=project, **values)
    offset = 0
    for index, block in enumerate(blocks[1:-1], start=1):  # the first paragraph that reaches the depth
        offset += len(block) + 2
        if offset >= at and not block.startswith(("#", "```")):
            blocks[index] = f"{block}{' ' if lang == 'en' else ''}{fact}"
            break
    else:
        blocks.insert(len(blocks) - 1, fact)
    text = "\n\n".join(blocks)
    return Answer(text, question.format(p=project, **values), values[_VALUE_OF[kind]], text.index(fact))


def haystack(
    rng: random.Random, name: str, sessions_per_project: int
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The utterances and questions of one user's memory."""
    utterances: list[dict[str, Any]] = []
    questions: list[dict[str, Any]] = []
    projects = [("en", p) for p in v.PROJECTS_EN] + [("zh", p) for p in v.PROJECTS_ZH]
    plan = [(lang, p, s) for lang, p in projects for s in range(sessions_per_project)]
    rng.shuffle(plan)
    kinds_left = {p: rng.sample(list(v.FACTS), len(v.FACTS)) for _, p in projects}
    for index, (lang, project, _) in enumerate(plan):
        start = FIRST_DAY + timedelta(days=index * 60 / len(plan), minutes=rng.randint(0, 600))
        session = f"s{index:04d}"
        moment = start
        for exchange in range(rng.randint(1, 2)):
            kind = kinds_left[project].pop()
            depth = DEPTHS[(index + exchange) % len(DEPTHS)]
            made = answer(rng, lang, project, kind, depth)
            asked = rng.choice(v.ASKS[lang]).format(p=project)
            for speaker, text in (("user", asked), ("assistant", made.text)):
                turn_id = f"{session}:{len(utterances)}"
                utterances.append(
                    {
                        "conversation_id": name,
                        "session_id": session,
                        "session_datetime": start.isoformat(),
                        "turn_id": turn_id,
                        "turn_index": sum(1 for u in utterances if u["session_id"] == session),
                        "speaker": speaker,
                        "text": text,
                        "turn_datetime": moment.isoformat(),
                        "extra": {},
                    }
                )
                moment += timedelta(minutes=rng.randint(1, 4))
            questions.append(
                {
                    "question_id": f"{name}-q{len(questions):04d}",
                    "conversation_id": name,
                    "question": made.question,
                    "category": f"{lang}-{depth_of(made.offset)}",
                    "question_datetime": None,
                    "evidence_turn_ids": [utterances[-1]["turn_id"]],
                    "answer": made.value,
                }
            )
    return utterances, questions


def write(out: Path, seed: int, haystacks: int, sessions_per_project: int) -> tuple[int, int]:
    """Write ``conversations.jsonl`` and ``questions.jsonl``; returns (utterances, questions)."""
    rng = random.Random(seed)
    out.mkdir(parents=True, exist_ok=True)
    counts = [0, 0]
    with (
        (out / "conversations.jsonl").open("w", encoding="utf-8") as conversations,
        (out / "questions.jsonl").open("w", encoding="utf-8") as asked,
    ):
        for h in range(haystacks):
            utterances, questions = haystack(rng, f"long-{h}", sessions_per_project)
            for row in utterances:
                conversations.write(json.dumps(row, ensure_ascii=False) + "\n")
            for row in questions:
                asked.write(json.dumps(row, ensure_ascii=False) + "\n")
            counts[0] += len(utterances)
            counts[1] += len(questions)
    return counts[0], counts[1]


def main(argv: list[str] | None = None) -> int:
    """Command line: ``python -m benchmarks.longgen --out DIR``."""
    parser = argparse.ArgumentParser(prog="python -m benchmarks.longgen", description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, required=True, help="folder to write")
    parser.add_argument("--seed", type=int, default=5)
    parser.add_argument("--haystacks", type=int, default=2, help="separate memories (default 2)")
    parser.add_argument("--sessions", type=int, default=4, help="sessions per project (default 4)")
    args = parser.parse_args(argv)
    utterances, questions = write(args.out, args.seed, args.haystacks, args.sessions)
    print(f"wrote {utterances} messages and {questions} questions to {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

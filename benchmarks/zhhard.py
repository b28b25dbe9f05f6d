"""The hard Chinese benchmark: questions that paraphrase, people named by what others said.

``zhgen``'s questions name the person and the kind of fact, which a ranker can steer by;
on an outside set (MemDaily) recall is half of what ``zhgen`` shows. Here a haystack pools
~100 days of 20 users (one session per user and day, ~800 messages) where names (surname ×
given name), relations, places and events recur across users. Categories:

- ``simple``: one fact, asked in words that share no content character with any message of
  its kind (``zhhardvocab``); the person by name, or relation and name.
- ``described``: the person named only by what another message said about them
  (我那个搞设计的朋友, 在腾讯上班的那个同学): both messages are the evidence.
- ``aggregative``: every plan with a person, or everything about what they eat — 3 to 5
  messages, each on another day (another session).

Each user's people are also mentioned in noise messages about the same kinds of things
without the fact (上次跟王芳吃饭还是去年的事). ``--split tune`` and ``--split heldout`` use
disjoint question templates and different seeds: tune on ``tune`` only, report ``heldout``.
A (relation, name) pair and a (relation, descriptor) pair belong to one person of the
haystack, and a name alone is used only where it is unique: every question has one answer.

    python -m benchmarks.zhhard --out DIR --split heldout
"""

from __future__ import annotations

import argparse
import random
from collections import Counter
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta
from pathlib import Path
from typing import Any

from benchmarks.zhgen import asked_after, balanced, question_row, write_dataset
from benchmarks.zhhardvocab import AGGREGATES, DESCRIPTORS, GIVEN, KINDS, RELATIONS, SPLITS, SURNAMES, Descriptor, Kind
from benchmarks.zhvocab import CHATTER, CHATTER_ABOUT, DAYS, FEMALE_ONLY, MALE_ONLY
from benchmarks.zhvocab import RELATIONS as RELATION_FORMS
from benchmarks.zhworld import Person, named

CATEGORIES = ("simple", "described", "aggregative")
SEEDS = {"tune": 17, "heldout": 71}
"""Default seed per split (each split's haystacks are drawn from their own random stream too)."""
FIRST_DAY = date(2025, 3, 3)
WEEKS = 8
_PLANS = [k for k in KINDS if k.group == "plans"]
_FOOD = [k for k in KINDS if k.group == "food"]
_LOOSE = [k for k in KINDS if not k.group]

Asked = tuple[str, list[str], str, str, dict[str, Any]]
"""Text, gold turn ids, answer, form (for balancing), and how the question identifies its person."""


@dataclass
class Line:
    """A message before scheduling: what it says, on which of its user's days, and its turn id once written."""

    text: str
    day: int
    turn: str = ""


@dataclass
class Known:
    """One person of one user and what the haystack states about them."""

    user: int
    person: Person
    descriptor: tuple[Descriptor, str, str, Line] | None = None
    """(kind, value as said, value as a question refers to it, the message saying it)."""
    facts: dict[str, tuple[str, Line]] = field(default_factory=dict)
    """Kind name → (value, the message stating it)."""


class World:
    """One haystack's users, people and messages."""

    def __init__(self, rng: random.Random, users: int) -> None:
        self.rng = rng
        self.people: list[Known] = []
        self.taken: set[tuple[str, ...]] = set()
        self.users: list[tuple[list[date], list[Line]]] = [self._user(u) for u in range(users)]
        self.names = Counter(k.person.name for k in self.people)

    def _person(self, user: int) -> Known:
        rng = self.rng
        while True:
            relation = rng.choice(RELATIONS)
            female = relation in FEMALE_ONLY or (relation not in MALE_ONLY and rng.random() < 0.5)
            name = rng.choice(SURNAMES) + rng.choice(GIVEN[female])
            if ("person", relation, name) not in self.taken:
                self.taken.add(("person", relation, name))
                known = Known(user, Person(relation, name, female))
                self.people.append(known)
                return known

    def _said(self, known: Known) -> str:
        form = self.rng.choice(RELATION_FORMS[known.person.relation])
        return named(self.rng, form, known.person.name, 0.4)

    def _describe(self, known: Known, days: int) -> Line | None:
        """Say one thing about ``known`` that no other person of this relation shares in the haystack."""
        options = [(d, said, referred) for d in DESCRIPTORS for said, referred in d.values]
        self.rng.shuffle(options)
        for descriptor, said, referred in options:
            key = ("descriptor", known.person.relation, descriptor.name, said)
            if key not in self.taken:
                self.taken.add(key)
                text = self.rng.choice(descriptor.says).format(P=self._said(known), X=said)
                line = Line(text, self.rng.randrange(days))
                known.descriptor = (descriptor, said, referred, line)
                return line
        return None

    def _state(self, known: Known, kinds: list[Kind], days: list[int]) -> list[Line]:
        lines = []
        for kind, day in zip(kinds, days, strict=True):
            value = self.rng.choice(kind.values)
            text = self.rng.choice(kind.says).format(P=self._said(known), X=value, D=self.rng.choice(DAYS[self._day()]))
            known.facts[kind.name] = (value, Line(text, day))
            lines.append(known.facts[kind.name][1])
        return lines

    def _day(self) -> str:
        return self.rng.choice(list(DAYS))

    def _noise(self, known: Known, days: int) -> Line:
        """The person and a kind of fact, without the fact (another value of the kind, or none);
        mostly a kind the person has a fact of, so that the person and the topic alone do not find it."""
        own_kinds = [k for k in KINDS if k.name in known.facts]
        kind = self.rng.choice(own_kinds if own_kinds and self.rng.random() < 0.6 else KINDS)
        own = known.facts.get(kind.name, ("", None))[0]
        value = self.rng.choice([v for v in kind.values if v != own])
        return Line(self.rng.choice(kind.noise).format(P=self._said(known), X=value), self.rng.randrange(days))

    def _user(self, user: int) -> tuple[list[date], list[Line]]:
        """A user's days and messages: one person with 3–5 plans and one with 3–4 food facts (each
        fact on another day), the others with one or two facts, descriptors, chit-chat, and noise:
        a person is named in about twice as many messages as state a fact about them, so that
        the ten messages holding a name are not simply all of that person's facts."""
        rng = self.rng
        count = rng.randint(4, 6)
        days = [FIRST_DAY + timedelta(days=d) for d in sorted(rng.sample(range(WEEKS * 7), count))]
        people = [self._person(user) for _ in range(rng.randint(4, 5))]
        lines: list[Line] = []
        for known, group, most in ((people[0], _PLANS, 5), (people[1], _FOOD, 4)):
            many = rng.randint(3, min(most, count))
            lines += self._state(known, rng.sample(group, many), rng.sample(range(count), many))
            extra = rng.sample(_LOOSE, rng.randint(0, 1))
            lines += self._state(known, extra, [rng.randrange(count) for _ in extra])
        for known in people[2:]:
            kinds = rng.sample(KINDS, rng.randint(1, 2))
            lines += self._state(known, kinds, [rng.randrange(count) for _ in kinds])
        for known in people:
            if rng.random() < 0.8 and (line := self._describe(known, count)) is not None:
                lines.append(line)
            lines += [self._noise(known, count) for _ in range(rng.randint(2, 3) + len(known.facts))]
        for day in range(count):
            for _ in range(max(0, rng.randint(6, 10) - sum(line.day == day for line in lines))):
                about = rng.random() < 0.25
                text = (
                    rng.choice(CHATTER_ABOUT).format(P=self._said(rng.choice(people))) if about else rng.choice(CHATTER)
                )
                lines.append(Line(text, day))
        return days, lines

    def sessions(self, conversation_id: str) -> list[dict[str, Any]]:
        """FORMAT.md rows: one session per user and day, messages minutes to an hour apart, in time order."""
        rng = self.rng
        sessions = []
        for user, (days, lines) in enumerate(self.users):
            for index, day in enumerate(days):
                said = [line for line in lines if line.day == index]
                rng.shuffle(said)
                start = datetime.combine(day, datetime.min.time()) + timedelta(minutes=rng.randint(450, 570))
                gap = min(80, (23 * 60 - start.hour * 60 - start.minute) // max(1, len(said)))
                timed = []
                moment = start
                for line in said:
                    timed.append((moment, line))
                    moment += timedelta(minutes=rng.randint(max(2, gap // 3), gap))
                sessions.append((start, user, timed))
        rows: list[dict[str, Any]] = []
        for start, user, timed in sorted(sessions, key=lambda s: (s[0], s[1])):
            for index, (moment, line) in enumerate(timed):
                line.turn = f"{conversation_id}-{len(rows) + 1:04d}"
                rows.append(
                    {
                        "conversation_id": conversation_id,
                        "session_id": f"u{user:03d}-{start:%m%d}",
                        "session_datetime": start.isoformat(),
                        "turn_id": line.turn,
                        "turn_index": index,
                        "speaker": "user",
                        "text": line.text,
                        "turn_datetime": moment.isoformat(),
                        "extra": {},
                    }
                )
        return rows


def candidates(world: World, split: str) -> dict[str, list[Asked]]:
    """Every question the haystack supports, by category, in ``split``'s templates (after ``sessions``)."""
    rng = world.rng
    kinds = {k.name: k for k in KINDS}
    found: dict[str, list[Asked]] = {c: [] for c in CATEGORIES}

    def by_name(known: Known) -> tuple[str, dict[str, Any]]:
        person = known.person
        if world.names[person.name] == 1 and rng.random() < 0.5:
            return person.name, {"name": person.name}
        return named(rng, person.relation, person.name, 0.5), {"relation": person.relation, "name": person.name}

    for known in world.people:
        for name, (value, line) in known.facts.items():
            who, ask = by_name(known)
            text = rng.choice(kinds[name].asks[split]).format(Q=who)
            found["simple"].append((text, [line.turn], value, name, {**ask, "kind": name}))
            if known.descriptor is not None:
                descriptor, said, referred, told = known.descriptor
                who = rng.choice(descriptor.refers[split]).format(Y=referred, R=known.person.relation)
                text = rng.choice(kinds[name].asks[split]).format(Q=who)
                ask = {"relation": known.person.relation, "descriptor": [descriptor.name, said], "kind": name}
                found["described"].append((text, [told.turn, line.turn], value, name, ask))
        for group, templates in AGGREGATES.items():
            facts = [(n, v, line) for n, (v, line) in known.facts.items() if kinds[n].group == group]
            if len(facts) >= 3:
                who, ask = by_name(known)
                text = rng.choice(templates[split]).format(Q=who)
                answer = "、".join(f"{n}:{v}" for n, v, _ in facts)
                found["aggregative"].append(
                    (text, [line.turn for *_, line in facts], answer, group, {**ask, "group": group})
                )
    return found


def haystack(
    rng: random.Random, conversation_id: str, split: str, users: int, per_type: int
) -> tuple[World, list[dict[str, Any]], list[dict[str, Any]]]:
    """One haystack: its world (for tests), its utterances and its questions (FORMAT.md rows)."""
    world = World(rng, users)
    rows = world.sessions(conversation_id)
    asked = asked_after(rows)
    questions: list[dict[str, Any]] = []
    for category, found in candidates(world, split).items():
        for text, gold, answer, _form, ask in balanced(rng, found, per_type):
            extra = {"split": split, "asks": ask}
            questions.append(
                question_row(conversation_id, len(questions) + 1, category, asked, text, gold, answer, extra)
            )
    return world, rows, questions


def generate(
    out: Path, split: str, seed: int | None = None, haystacks: int = 8, *, users: int = 20, per_type: int = 15
) -> tuple[int, int]:
    """Write one split's ``conversations.jsonl`` and ``questions.jsonl`` under ``out``."""
    seed = SEEDS[split] if seed is None else seed
    rows: list[dict[str, Any]] = []
    questions: list[dict[str, Any]] = []
    for n in range(1, haystacks + 1):
        rng = random.Random(f"zhhard-{split}-{seed}-{n}")
        _world, more_rows, more_questions = haystack(rng, f"hard-{split}-{n:02d}", split, users, per_type)
        rows += more_rows
        questions += more_questions
    return write_dataset(out, rows, questions)


def main(argv: list[str] | None = None) -> int:
    """``python -m benchmarks.zhhard --out DIR --split tune|heldout [--seed N] [--haystacks K]``."""
    parser = argparse.ArgumentParser(prog="python -m benchmarks.zhhard", description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, required=True, help="folder to write the dataset to")
    parser.add_argument("--split", choices=SPLITS, default="tune", help="question templates: tune or heldout")
    parser.add_argument("--seed", type=int, help="random seed (default 17 for tune, 71 for heldout)")
    parser.add_argument("--haystacks", type=int, default=8, help="haystacks (conversations) to generate (default 8)")
    parser.add_argument("--users", type=int, default=20, help="users pooled into each haystack (default 20)")
    parser.add_argument("--per-type", type=int, default=15, help="questions per category and haystack (default 15)")
    args = parser.parse_args(argv)
    if min(args.haystacks, args.users, args.per_type) < 1:
        parser.error("--haystacks, --users and --per-type must be at least 1")
    utterances, asked = generate(
        args.out, args.split, args.seed, args.haystacks, users=args.users, per_type=args.per_type
    )
    print(f"wrote {utterances} messages and {asked} questions ({args.split}) to {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

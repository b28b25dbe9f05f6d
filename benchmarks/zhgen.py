"""A Chinese personal-assistant retrieval benchmark, generated from our own templates.

Haystacks of ~1,500 short first-person messages pooled from many users' days (one
session per user and day), full of look-alikes: the same name under another relation
(同事张伟 / 朋友张伟), the same event with another person, day or city (下周六/下周日,
北京/上海). Questions are what a user would ask their assistant, in other words than the
message used; each has the ids of the messages that answer it. Question types
(``category``): simple, conditional, comparative, aggregative (several evidence
messages), post-processing (needs a small inference) and noisy (the fact sits in
chit-chat). ``--mixed`` writes the code-switching variant (我把 VPN 的 password 改了).

Output is the ``shared/bench/FORMAT.md`` layout, so ``huichat bench recall --data DIR``
runs it::

    python -m benchmarks.zhgen --out DIR --seed 17 --haystacks 6
    python -m benchmarks.zhgen --out DIR --mixed --haystacks 2
"""

from __future__ import annotations

import argparse
import itertools
import json
import random
from collections import defaultdict
from collections.abc import Callable
from datetime import date, datetime, timedelta
from pathlib import Path
from typing import Any, TypeVar

from benchmarks.zhworld import Fact, Person, UserBuilder, Vocab, named, schedule

CATEGORIES = ("simple", "conditional", "comparative", "aggregative", "post-processing", "noisy")
FIRST_DAY = date(2025, 3, 3)
WEEKS = 8
_WEEKDAY_NAMES = "一二三四五六日"

Question = tuple[str, list[str], str, str]
"""A question's text, its gold message ids, the reference answer and its form (what it asks)."""


class Asker:
    """Writes the questions of one haystack."""

    def __init__(self, vocab: Vocab, rng: random.Random, facts: list[Fact]) -> None:
        self.vocab = vocab
        self.rng = rng
        self.facts = facts
        self.cues: dict[tuple[str, str, str], int] = defaultdict(int)
        for fact in facts:
            self.cues[self.cue(fact)] += 1

    @staticmethod
    def cue(fact: Fact) -> tuple[str, str, str]:
        """What a "who" question gives away: the kind and the place or item."""
        if fact.kind == "event":
            return ("event", fact.values["event"].name, fact.values["place"])
        return (fact.kind, "", str(fact.values.get("item", "")))

    def whose(self, fact: Fact) -> str:
        return f"{fact.person.relation}{fact.person.name}"

    def who(self, person: Person) -> dict[str, str]:
        """The person as a question names them, in Chinese (``Q``) and English (``Qe``)."""
        form = self.rng.choice(self.vocab.relations[person.relation])
        english = self.vocab.relations_en.get(person.relation, ("my " + person.relation,))
        return {"Q": named(self.rng, form, person.name, 0.5), "Qe": f"{self.rng.choice(english)} {person.name}"}

    def ask(self, templates: tuple[str, ...], person: Person, **slots: Any) -> str:
        return self.rng.choice(templates).format(**self.who(person), **slots)

    # ------------------------------------------------------------------ kinds

    def simple(self, fact: Fact) -> list[Question]:
        """One attribute of one fact, asked with the person and the kind."""
        v, values, gold = self.vocab, fact.values, fact.turns[:1]
        p = fact.person
        if fact.kind == "event":
            kind = values["event"]
            out = [
                (self.ask(kind.ask_place, p), gold, values["place"], "event-place"),
                (self.ask(kind.ask_when, p, X=values["place"]), gold, f"{fact.when}", "event-day"),
            ]
            if "time" in values:
                out.append((self.ask(v.ask_time, p, V=kind.verb), fact.turns, values["time"], "event-time"))
            if kind.ask_who and self.cues[self.cue(fact)] == 1:
                out.append(
                    (self.rng.choice(kind.ask_who).format(X=values["place"]), gold, self.whose(fact), "event-who")
                )
            return out
        if fact.kind == "trait":
            kind = values["trait"]
            out = [(self.ask(kind.asks, p), gold, values["value"], "trait")]
            if kind.asks_back:
                back = self.rng.choice(kind.asks_back).format(X=values["value"])
                out.append((back, gold, self.whose(fact), "trait-who"))
            return out
        if fact.kind == "store":
            item = self.rng.choice(values["item"].split("|"))
            return [(self.ask(v.store_asks, p, I=item), gold, values["place"], "store")]
        if fact.kind == "lend":
            out = [(self.ask(v.lend_asks, p), gold, values["item"].split("|")[0], "lend")]
            if self.cues[self.cue(fact)] == 1:
                item = self.rng.choice(values["item"].split("|"))
                out.append((self.rng.choice(v.lend_who).format(I=item), gold, self.whose(fact), "lend-who"))
            return out
        if fact.kind == "buy":
            return [(self.ask(v.buy_asks, p), gold, f"{values['price']}", "buy")]
        return []

    def conditional(self, fact: Fact) -> list[Question]:
        if fact.kind != "condition":
            return []
        condition = self.rng.choice(fact.values["asks"])
        asked = self.ask(self.vocab.condition_asks, fact.person, C2=condition)
        return [(asked, fact.turns[:1], fact.values["plan"], "condition")]

    def post_processing(self, fact: Fact) -> list[Question]:
        v, values, p, gold = self.vocab, fact.values, fact.person, fact.turns[:1]
        if fact.kind == "event" and fact.when is not None:
            if "stay" in values:
                back = fact.when + timedelta(days=values["stay"])
                return [(self.ask(v.duration_asks, p), gold, f"{back}", "return-day")]
            weekday = _WEEKDAY_NAMES[fact.when.weekday()]
            return [(self.ask(v.weekday_asks, p, V=values["event"].verb), gold, f"星期{weekday}", "weekday")]
        if fact.kind == "age":
            return [(self.ask(v.age_asks, p), gold, f"{FIRST_DAY.year - values['years']}", "birth-year")]
        if fact.kind == "count":
            return [(self.ask(v.count_asks, p), gold, f"{values['boxes'] * values['each']}", "count")]
        if fact.kind == "discount":
            return [(self.ask(v.discount_asks, p), gold, f"{values['price'] * values['off'] / 10:g}", "discount")]
        if fact.kind == "trait" and values["trait"].name == "过敏" and values["value"] in v.allergy_gifts:
            gift = self.rng.choice(v.allergy_gifts[values["value"]])
            return [
                (self.ask(v.allergy_asks, p, X=gift), gold, f"不合适，{p.pronoun}对{values['value']}过敏", "allergy")
            ]
        return []

    def comparative(self) -> list[Question]:
        """Pairs of one user's facts: which event comes first, which gift cost more."""
        out: list[Question] = []
        by_user: dict[int, list[Fact]] = defaultdict(list)
        for fact in self.facts:
            by_user[fact.user].append(fact)
        for facts in by_user.values():
            events = [f for f in facts if f.kind == "event" and f.when is not None]
            self.rng.shuffle(events)
            for a, b in itertools.pairwise(events):
                if a.when == b.when:
                    continue
                first = a if a.when < b.when else b  # type: ignore[operator]
                va, vb = a.values["event"].verb, b.values["event"].verb
                if a.person == b.person:
                    text = self.ask(self.vocab.compare_self, a.person, V=va, W=vb)
                else:
                    other = self.who(b.person)
                    text = self.ask(self.vocab.compare_when, a.person, V=va, R=other["Q"], Re=other["Qe"], W=vb)
                answer = f"{first.person.name}{first.values['event'].verb}在前"
                out.append(
                    (text, [a.turns[0], b.turns[0]], answer, "same-person" if a.person == b.person else "two-people")
                )
            bought = [f for f in facts if f.kind in ("buy", "discount")]
            if len(bought) == 2 and bought[0].person != bought[1].person:
                a, b = bought
                cost = {id(f): f.values["price"] * f.values.get("off", 10) / 10 for f in bought}
                if cost[id(a)] != cost[id(b)]:
                    dearer = a if cost[id(a)] > cost[id(b)] else b
                    other = self.who(b.person)
                    text = self.ask(self.vocab.buy_compare, a.person, R=other["Q"], Re=other["Qe"])
                    out.append((text, [a.turns[0], b.turns[0]], f"给{dearer.person.name}的更贵", "price"))
        return out

    def aggregative(self) -> list[Question]:
        """Everything planned with one person, or everything about what they eat and drink."""
        out: list[Question] = []
        by_person: dict[Person, list[Fact]] = defaultdict(list)
        for fact in self.facts:
            by_person[fact.person].append(fact)
        for person, facts in by_person.items():
            events = [f for f in facts if f.kind == "event"]
            if len(events) >= 3:
                answer = "、".join(f.values["event"].verb for f in events)
                asked = self.ask(self.vocab.aggregate_events, person)
                out.append((asked, [f.turns[0] for f in events], answer, "plans"))
            food = [f for f in facts if f.kind == "trait" and f.values["trait"].name in self.vocab.food_traits]
            if len(food) >= 2:
                answer = "、".join(f"{f.values['trait'].name}:{f.values['value']}" for f in food)
                asked = self.ask(self.vocab.aggregate_traits, person)
                out.append((asked, [f.turns[0] for f in food], answer, "food"))
        return out

    def all(self) -> dict[str, list[Question]]:
        """Every question this haystack supports, by category."""
        per_fact: dict[str, Callable[[Fact], list[Question]]] = {
            "conditional": self.conditional,
            "post-processing": self.post_processing,
        }
        found: dict[str, list[Question]] = {c: [] for c in CATEGORIES}
        for fact in self.facts:
            asked = self.simple(fact)
            if fact.noisy:
                found["noisy"].extend(
                    (self.rng.choice(self.vocab.noisy_question).format(S=q) if self.rng.random() < 0.5 else q, g, a, f)
                    for q, g, a, f in asked
                )
            else:
                found["simple"].extend(asked)
            for category, make in per_fact.items():
                found[category].extend(make(fact))
        found["comparative"] = self.comparative()
        found["aggregative"] = self.aggregative()
        return found


Asked = TypeVar("Asked", bound=tuple[Any, ...])
"""A question tuple whose fourth item is its form."""


def balanced(rng: random.Random, candidates: list[Asked], count: int) -> list[Asked]:
    """``count`` questions drawn round-robin over their forms, so rare forms ("who …?") are asked too."""
    by_form: dict[str, list[Asked]] = defaultdict(list)
    for question in candidates:
        by_form[question[3]].append(question)
    for pool in by_form.values():
        rng.shuffle(pool)
    chosen: list[Asked] = []
    forms = sorted(by_form)
    rng.shuffle(forms)
    while len(chosen) < count and any(by_form.values()):
        for form in forms:
            if by_form[form] and len(chosen) < count:
                chosen.append(by_form[form].pop())
    return chosen


def haystack(
    vocab: Vocab, rng: random.Random, conversation_id: str, users: int, per_user: int, per_type: int
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """One haystack's utterances and questions (FORMAT.md rows)."""
    taken: set[tuple[str, str]] = set()
    sessions = []
    facts: list[Fact] = []
    for user in range(users):
        builder = UserBuilder(vocab, rng, taken, user)
        builder.build(per_user + rng.randint(-8, 8))
        facts.extend(builder.facts)
        for started, timed in schedule(builder, rng, FIRST_DAY, WEEKS, rng.randint(6, 9)):
            sessions.append((started, user, timed))
    sessions.sort(key=lambda s: (s[0], s[1]))
    rows: list[dict[str, Any]] = []
    for started, user, timed in sessions:
        session_id = f"u{user:02d}-{started:%m%d}"
        for index, (moment, message) in enumerate(timed):
            turn_id = f"{conversation_id}-{len(rows) + 1:04d}"
            if message.fact is not None:
                message.fact.turns.append(turn_id)
            rows.append(
                {
                    "conversation_id": conversation_id,
                    "session_id": session_id,
                    "session_datetime": started.isoformat(),
                    "turn_id": turn_id,
                    "turn_index": index,
                    "speaker": "user",
                    "text": message.text,
                    "turn_datetime": moment.isoformat(),
                    "extra": {},
                }
            )
    asked = asked_after(rows)
    questions: list[dict[str, Any]] = []
    for category, candidates in Asker(vocab, rng, facts).all().items():
        for text, gold, answer, _form in balanced(rng, candidates, per_type):
            questions.append(question_row(conversation_id, len(questions) + 1, category, asked, text, gold, answer))
    return rows, questions


def asked_after(rows: list[dict[str, Any]]) -> datetime:
    """When a haystack's questions are asked: 20:00 the day after its last message."""
    last = max(datetime.fromisoformat(r["turn_datetime"]) for r in rows)
    return datetime.combine(last.date() + timedelta(days=1), datetime.min.time()) + timedelta(hours=20)


def question_row(
    conversation_id: str,
    number: int,
    category: str,
    asked: datetime,
    text: str,
    gold: list[str],
    answer: str,
    extra: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """One FORMAT.md question row (``extra`` only where a generator has some)."""
    row: dict[str, Any] = {
        "question_id": f"{conversation_id}-q{number:03d}",
        "conversation_id": conversation_id,
        "question": text,
        "category": category,
        "question_datetime": asked.isoformat(),
        "evidence_turn_ids": gold,
        "answer": answer,
    }
    if extra is not None:
        row["extra"] = extra
    return row


def generate(
    out: Path,
    seed: int,
    haystacks: int,
    *,
    mixed: bool = False,
    users: int = 30,
    per_user: int = 50,
    per_type: int = 12,
) -> tuple[int, int]:
    """Write ``conversations.jsonl`` and ``questions.jsonl`` under ``out``; returns (utterances, questions)."""
    if mixed:
        from benchmarks.mixvocab import MIXED as vocab
    else:
        from benchmarks.zhvocab import ZH as vocab
    prefix = "mix" if mixed else "zh"
    rows: list[dict[str, Any]] = []
    questions: list[dict[str, Any]] = []
    for n in range(1, haystacks + 1):
        rng = random.Random(f"{prefix}-{seed}-{n}")
        more_rows, more_questions = haystack(vocab, rng, f"{prefix}-{n:02d}", users, per_user, per_type)
        rows.extend(more_rows)
        questions.extend(more_questions)
    return write_dataset(out, rows, questions)


def write_dataset(out: Path, rows: list[dict[str, Any]], questions: list[dict[str, Any]]) -> tuple[int, int]:
    """Write the FORMAT.md files under ``out``; returns (utterances, questions)."""
    out.mkdir(parents=True, exist_ok=True)
    for name, items in (("conversations.jsonl", rows), ("questions.jsonl", questions)):
        with (out / name).open("w", encoding="utf-8") as handle:
            for item in items:
                handle.write(json.dumps(item, ensure_ascii=False) + "\n")
    return len(rows), len(questions)


def main(argv: list[str] | None = None) -> int:
    """``python -m benchmarks.zhgen --out DIR [--seed N] [--haystacks K] [--mixed]``."""
    parser = argparse.ArgumentParser(prog="python -m benchmarks.zhgen", description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, required=True, help="folder to write the dataset to")
    parser.add_argument("--seed", type=int, default=17, help="random seed (default 17)")
    parser.add_argument("--haystacks", type=int, default=6, help="haystacks (conversations) to generate (default 6)")
    parser.add_argument("--users", type=int, default=30, help="users pooled into each haystack (default 30)")
    parser.add_argument("--messages", type=int, default=50, help="messages per user, about (default 50)")
    parser.add_argument("--per-type", type=int, default=12, help="questions per type and haystack (default 12)")
    parser.add_argument("--mixed", action="store_true", help="the mixed Chinese/English (code-switching) variant")
    args = parser.parse_args(argv)
    if min(args.haystacks, args.users, args.messages, args.per_type) < 1:
        parser.error("--haystacks, --users, --messages and --per-type must be at least 1")
    utterances, asked = generate(
        args.out,
        args.seed,
        args.haystacks,
        mixed=args.mixed,
        users=args.users,
        per_user=args.messages,
        per_type=args.per_type,
    )
    print(f"wrote {utterances} messages and {asked} questions to {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

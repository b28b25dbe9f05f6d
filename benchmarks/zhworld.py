"""The world of the Chinese benchmark: users, the people in their lives, facts, and messages.

A haystack pools many users' days. Each user has a handful of people (a relation and a
name: 同事张伟); the same name recurs under other relations in other users' days, the same
event recurs with other people, days and places — the look-alikes. A (relation, name)
pair belongs to one user only, and a person has at most one fact of each kind, so a
question naming the person and the kind has exactly one answer in the whole haystack.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta
from typing import Any


@dataclass(frozen=True)
class EventKind:
    """Something planned with a person, at a day and a place (or object: a singer, a company)."""

    name: str
    places: tuple[str, ...]
    says: tuple[str, ...]
    ask_place: tuple[str, ...]
    ask_when: tuple[str, ...]
    verb: str
    """How a question names the event (出差, 吃饭)."""
    not_for: frozenset[str] = frozenset()
    """Relations this never happens to (children do not go on business trips)."""
    ask_who: tuple[str, ...] = ()
    """Questions that give the place and ask who (asked only where that place is unique)."""


@dataclass(frozen=True)
class TraitKind:
    """A lasting attribute of a person (job, allergy, car)."""

    name: str
    values: tuple[str, ...]
    says: tuple[str, ...]
    asks: tuple[str, ...]
    asks_back: tuple[str, ...] = ()
    """Questions that quote the value and ask whose it is (only for values unique in a haystack)."""
    adults_only: bool = False


@dataclass(frozen=True)
class Vocab:
    """Everything a language variant of the benchmark says; see ``zhvocab`` for the slots."""

    relations: dict[str, tuple[str, ...]]
    relations_en: dict[str, tuple[str, ...]]
    female_only: frozenset[str]
    male_only: frozenset[str]
    children: frozenset[str]
    names: tuple[tuple[str, ...], tuple[str, ...]]
    kids: tuple[tuple[str, ...], tuple[str, ...]]
    events: tuple[EventKind, ...]
    days: dict[str, tuple[str, ...]]
    times: tuple[str, ...]
    follow_ups: tuple[str, ...]
    ask_time: tuple[str, ...]
    traits: tuple[TraitKind, ...]
    items: tuple[str, ...]
    places: tuple[str, ...]
    store_says: tuple[str, ...]
    store_asks: tuple[str, ...]
    lendables: tuple[str, ...]
    lend_says: tuple[str, ...]
    lend_asks: tuple[str, ...]
    lend_who: tuple[str, ...]
    gifts: tuple[str, ...]
    buy_says: tuple[str, ...]
    buy_asks: tuple[str, ...]
    buy_compare: tuple[str, ...]
    discount_says: tuple[str, ...]
    discount_asks: tuple[str, ...]
    conditions: tuple[tuple[str, tuple[str, ...], tuple[str, ...], tuple[str, ...]], ...]
    """(name, how a message says it, how a question says it, plans for it)."""
    condition_says: tuple[str, ...]
    condition_asks: tuple[str, ...]
    compare_when: tuple[str, ...]
    compare_self: tuple[str, ...]
    aggregate_events: tuple[str, ...]
    aggregate_traits: tuple[str, ...]
    food_traits: frozenset[str]
    duration_says: tuple[str, ...]
    duration_asks: tuple[str, ...]
    age_says: tuple[str, ...]
    age_asks: tuple[str, ...]
    count_says: tuple[str, ...]
    count_asks: tuple[str, ...]
    allergy_gifts: dict[str, tuple[str, ...]]
    allergy_asks: tuple[str, ...]
    weekday_asks: tuple[str, ...]
    chatter: tuple[str, ...]
    chatter_about: tuple[str, ...]
    noise_before: tuple[str, ...]
    noise_after: tuple[str, ...]
    noisy_question: tuple[str, ...]


@dataclass(frozen=True)
class Person:
    """Someone in a user's life, as (relation, name)."""

    relation: str
    name: str
    female: bool

    @property
    def pronoun(self) -> str:
        return "她" if self.female else "他"


@dataclass
class Fact:
    """One thing a user told the assistant; ``turns`` are the messages that state it."""

    kind: str
    user: int
    person: Person
    values: dict[str, Any]
    noisy: bool = False
    turns: list[str] = field(default_factory=list)
    when: date | None = None
    """The event's own date (events only), from the day the message names."""


@dataclass
class Message:
    """A message before scheduling; a fact's follow-up stays right after it."""

    text: str
    fact: Fact | None = None
    follow_up: bool = False


def named(rng: random.Random, form: str, name: str, mine: float) -> str:
    """Relation word and name (``我同事张伟``, ``colleague Kevin``); Chinese forms sometimes take 我."""
    prefix = "我" if rng.random() < mine and not form.isascii() and not form.startswith("我") else ""
    gap = " " if form[-1:].isascii() and name[:1].isascii() else ""
    return prefix + form + gap + name


_WEEKDAYS = {"一": 0, "二": 1, "三": 2, "四": 3, "五": 4, "六": 5, "日": 6, "天": 6}


def day_offset(day: str, said: date) -> date:
    """The date a relative day word (明天, 下周六) names, said on ``said`` (weeks start on Monday)."""
    if day == "明天":
        return said + timedelta(days=1)
    if day == "后天":
        return said + timedelta(days=2)
    if day.startswith("下周"):
        monday = said + timedelta(days=7 - said.weekday())
        return monday + timedelta(days=_WEEKDAYS[day[-1]])
    raise ValueError(f"unknown day {day!r}")


class UserBuilder:
    """Makes one user's people, facts and messages."""

    def __init__(self, vocab: Vocab, rng: random.Random, taken: set[tuple[str, str]], user: int) -> None:
        self.vocab = vocab
        self.rng = rng
        self.taken = taken
        self.user = user
        self.facts: list[Fact] = []
        self.messages: list[list[Message]] = []

    # ------------------------------------------------------------------ people

    def person(self, relation: str) -> Person | None:
        """A new person with this relation whose (relation, name) no other user has."""
        v = self.vocab
        if relation in v.female_only:
            female = True
        elif relation in v.male_only:
            female = False
        else:
            female = self.rng.random() < 0.5
        pool = (v.kids if relation in v.children else v.names)[1 if female else 0]
        free = [n for n in pool if (relation, n) not in self.taken]
        if not free:
            return None
        name = self.rng.choice(free)
        self.taken.add((relation, name))
        return Person(relation, name, female)

    def people(self, count: int) -> list[Person]:
        relations = list(self.vocab.relations)
        self.rng.shuffle(relations)
        chosen: list[Person] = []
        spouse = False
        for relation in relations:
            if len(chosen) == count:
                break
            if relation in ("老婆", "老公"):
                if spouse:
                    continue
                spouse = True
            found = self.person(relation)
            if found is not None:
                chosen.append(found)
        return chosen

    # ------------------------------------------------------------------- words

    def said(self, person: Person) -> str:
        """The person as a message names them: relation word and name."""
        return named(self.rng, self.rng.choice(self.vocab.relations[person.relation]), person.name, 0.4)

    def surface(self, word: str) -> str:
        """One of a word's written forms (``VPN password|VPN 密码``)."""
        return self.rng.choice(word.split("|"))

    def fill(self, template: str, **slots: Any) -> str:
        return template.format(**slots)

    def add(self, fact: Fact, text: str, follow_up: str | None = None) -> None:
        """Record a fact stated by ``text`` (and a follow-up message right after it)."""
        if fact.noisy:
            text = self.rng.choice(self.vocab.noise_before) + text + self.rng.choice(self.vocab.noise_after)
        group = [Message(text, fact)]
        if follow_up is not None:
            group.append(Message(follow_up, fact, follow_up=True))
        self.facts.append(fact)
        self.messages.append(group)

    def fact(self, kind: str, person: Person, **values: Any) -> Fact:
        return Fact(kind, self.user, person, values, noisy=self.rng.random() < 0.18)

    # ------------------------------------------------------------------- facts

    def event(self, person: Person, kind: EventKind) -> None:
        v, rng = self.vocab, self.rng
        day = rng.choice(list(v.days))
        place = rng.choice(kind.places)
        fact = self.fact("event", person, event=kind, day=day, place=place)
        follow = None
        if rng.random() < 0.25:
            fact.values["time"] = rng.choice(v.times)
            follow = self.fill(rng.choice(v.follow_ups), H=person.pronoun, T=fact.values["time"])
        elif kind.name == "出差" and rng.random() < 0.5:
            fact.values["stay"] = rng.randint(2, 6)
            text = self.fill(
                rng.choice(v.duration_says),
                P=self.said(person),
                D=rng.choice(v.days[day]),
                X=place,
                N=fact.values["stay"],
            )
            self.add(fact, text)
            return
        text = self.fill(
            rng.choice(kind.says), P=self.said(person), D=rng.choice(v.days[day]), X=place, H=person.pronoun
        )
        self.add(fact, text, follow)

    def trait(self, person: Person, kind: TraitKind, value: str) -> None:
        if "{n}" in value:
            # identifiers (IPs, tickets) are numbered so that each is unique in the haystack
            numbered = value
            while (kind.name, value) in self.taken or value == numbered:
                value = numbered.format(n=self.rng.randint(10, 250))
            self.taken.add((kind.name, value))
        fact = self.fact("trait", person, trait=kind, value=value)
        self.add(fact, self.fill(self.rng.choice(kind.says), P=self.said(person), X=value))

    def store(self, person: Person) -> None:
        v, rng = self.vocab, self.rng
        fact = self.fact("store", person, item=rng.choice(v.items), place=rng.choice(v.places))
        text = self.fill(
            rng.choice(v.store_says), P=self.said(person), I=self.surface(fact.values["item"]), X=fact.values["place"]
        )
        self.add(fact, text)

    def lend(self, person: Person) -> None:
        v, rng = self.vocab, self.rng
        fact = self.fact("lend", person, item=rng.choice(v.lendables))
        self.add(fact, self.fill(rng.choice(v.lend_says), P=self.said(person), I=self.surface(fact.values["item"])))

    def buy(self, person: Person) -> None:
        v, rng = self.vocab, self.rng
        item, price = self.surface(rng.choice(v.gifts)), rng.randrange(99, 3000, 10)
        if rng.random() < 0.4:
            off = rng.choice((5, 6, 7, 8, 9))
            fact = self.fact("discount", person, item=item, price=price, off=off)
            text = self.fill(rng.choice(v.discount_says), P=self.said(person), I=item, N=price, M=off)
        else:
            fact = self.fact("buy", person, item=item, price=price)
            text = self.fill(rng.choice(v.buy_says), P=self.said(person), I=item, N=price)
        self.add(fact, text)

    def condition(self, person: Person) -> None:
        v, rng = self.vocab, self.rng
        name, says, asks, plans = rng.choice(v.conditions)
        fact = self.fact("condition", person, condition=name, asks=asks, plan=rng.choice(plans))
        self.add(
            fact,
            self.fill(rng.choice(v.condition_says), P=self.said(person), C=rng.choice(says), X=fact.values["plan"]),
        )

    def age(self, person: Person) -> None:
        years = self.rng.randint(3, 12) if person.relation in self.vocab.children else self.rng.randint(23, 62)
        fact = self.fact("age", person, years=years)
        self.add(fact, self.fill(self.rng.choice(self.vocab.age_says), P=self.said(person), N=years))

    def count(self, person: Person) -> None:
        boxes, each = self.rng.randint(2, 9), self.rng.choice((12, 15, 20, 24))
        fact = self.fact("count", person, boxes=boxes, each=each)
        self.add(fact, self.fill(self.rng.choice(self.vocab.count_says), P=self.said(person), N=boxes, M=each))

    def chatter(self, people: list[Person], count: int) -> None:
        rng = self.rng
        for _ in range(count):
            if people and rng.random() < 0.3:
                text = self.fill(rng.choice(self.vocab.chatter_about), P=self.said(rng.choice(people)))
            else:
                text = rng.choice(self.vocab.chatter)
            self.messages.append([Message(text)])

    def build(self, target: int) -> None:
        """People, then their facts, then chit-chat up to about ``target`` messages."""
        v, rng = self.vocab, self.rng
        people = self.people(rng.randint(4, 6))
        if not people:
            return
        busy = rng.sample(people, k=min(2, len(people)))
        for person in people:
            events = [e for e in v.events if person.relation not in e.not_for]
            kinds = rng.sample(events, k=rng.randint(3, 4) if person in busy else rng.randint(1, 2))
            for event in kinds:
                self.event(person, event)
            traits = [t for t in v.traits if not (t.adults_only and person.relation in v.children)]
            if person is busy[-1] and len(busy) > 1:
                chosen = [t for t in traits if t.name in v.food_traits]
            else:
                chosen = rng.sample(traits, k=rng.randint(0, 2))
            for trait in chosen:
                food = trait.name == "过敏" and person is busy[-1]
                self.trait(person, trait, rng.choice(list(v.allergy_gifts) if food else trait.values))
        for maker in (self.store, self.lend, self.buy, self.buy, self.condition, self.age, self.count):
            maker(rng.choice(people))  # one of each kind per person: a second draw for the same person is dropped
        self._drop_repeats()
        self.chatter(people, max(0, target - sum(len(g) for g in self.messages)))

    def _drop_repeats(self) -> None:
        """Keep one fact per (person, kind) so that every question has one answer."""
        seen: set[tuple[str, str, str]] = set()
        groups = []
        for group in self.messages:
            fact = group[0].fact
            assert fact is not None
            kind = fact.kind if fact.kind not in ("buy", "discount") else "purchase"
            if kind == "event":
                kind += ":" + fact.values["event"].name
            if kind == "trait":
                kind += ":" + fact.values["trait"].name
            key = (fact.person.relation, fact.person.name, kind)
            if key in seen:
                continue
            seen.add(key)
            groups.append(group)
        self.messages = groups
        self.facts = [g[0].fact for g in groups if g[0].fact is not None]


def schedule(
    builder: UserBuilder, rng: random.Random, first_day: date, weeks: int, days: int
) -> list[tuple[datetime, list[tuple[datetime, Message]]]]:
    """Spread a user's messages over ``days`` random days: one session per day, times within it."""
    chosen = sorted(rng.sample(range(weeks * 7), k=days))
    per_day: list[list[list[Message]]] = [[] for _ in chosen]
    for group in builder.messages:
        per_day[rng.randrange(len(chosen))].append(group)
    sessions = []
    for offset, groups in zip(chosen, per_day, strict=True):
        if not groups:
            continue
        rng.shuffle(groups)
        day = first_day + timedelta(days=offset)
        moment = datetime.combine(day, datetime.min.time()) + timedelta(minutes=rng.randint(450, 570))
        gap = max(8, min(150, (23 * 60 - (moment.hour * 60 + moment.minute)) // max(1, len(groups))))
        timed: list[tuple[datetime, Message]] = []
        for group in groups:
            for message in group:
                timed.append((moment, message))
                moment += timedelta(minutes=rng.randint(2, 10))
                if message.fact is not None and message.fact.kind == "event" and not message.follow_up:
                    message.fact.when = day_offset(message.fact.values["day"], day)
            moment += timedelta(minutes=rng.randint(gap // 2, gap))
        sessions.append((timed[0][0], timed))
    return sessions

"""The synthetic conversations of ``huichat bench timegen``: facts planted at known moments.

Synthetic users chat for months in Chinese and English. Facts are planted at known
moments, with look-alike distractors on the same topic at other times, so keywords alone
cannot pick the right turn: the time phrase has to. Each *category* plants the facts of
one kind of time phrase and asks about them:

- ``precise`` (上周三下午, "two weeks ago"…) and ``vague`` (前段时间, "a while ago") are the
  original benchmark, generated exactly as before so its figures stay comparable;
- ``holiday`` (中秋节, 国庆, "on Halloween"), ``clock`` (昨天下午三点, "yesterday at 3pm"),
  ``span`` (3月3日到3月10日, huichat's own ``2026-10-03 – 2026-10-08``) and ``window``
  (过去三天, "over the past week") each use topics of their own, so they add questions without
  changing the original ones' look-alikes;
- ``event``: facts said on one day about another (上周二…, "the day before yesterday…",
  下个月…, "next Friday…"), asked about by a phrase that covers the time they talk about and
  not the time they were said: only the turn's event time can place it.

Gold moments are computed here by hand, never by the resolver under test.
"""

from __future__ import annotations

import random
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass, replace
from datetime import date, datetime, timedelta, tzinfo
from typing import Any


@dataclass(frozen=True)
class Topic:
    """A subject users talk about, with fact templates in both languages."""

    zh: str
    en: str
    fact_zh: str
    fact_en: str


TOPICS = [
    Topic("部署问题", "the deployment", "部署又失败了：{x} 服务在 {n} 端口起不来，最后发现是 {y} 占用了端口。",
          "The deployment failed again: {x} would not start on port {n} because {y} was holding it."),
    Topic("VPN", "the VPN", "VPN 晚上老是断，我把 WireGuard 的 keepalive 改成了 {n} 秒，服务器换到了 {x}。",
          "The VPN kept dropping, so I set the WireGuard keepalive to {n} seconds and moved the server to {x}."),
    Topic("数据库迁移", "the database migration", "数据库迁移计划：先把 {x} 表导到 {y}，停机窗口 {n} 分钟。",
          "Database migration plan: copy the {x} table to {y} first, with a {n}-minute downtime window."),
    Topic("旅行计划", "the trip", "旅行计划定了：{n} 号出发去 {x}，住在 {y} 附近。",
          "The trip is settled: we leave on the {n}th for {x} and stay near {y}."),
    Topic("那本书", "the book", "最近在读一本书《{x}》，第 {n} 章讲 {y}，很有意思。",
          "I'm reading a book, '{x}'; chapter {n} is about {y} and it's fascinating."),
    Topic("健身计划", "my workout plan", "新的健身计划：每周 {n} 次，重点练 {x}，教练叫 {y}。",
          "New workout plan: {n} sessions a week focusing on {x}, with a coach called {y}."),
    Topic("预算", "the budget", "这个月预算超了 {n} 元，主要花在 {x} 和 {y} 上。",
          "This month's budget went over by {n} dollars, mostly on {x} and {y}."),
    Topic("面试", "the interview", "下周去 {x} 面试，岗位是 {y}，一共 {n} 轮。",
          "I have an interview at {x} for the {y} role, {n} rounds in total."),
]  # fmt: skip
WORDS_X = ["nginx", "Redis", "Kyoto", "Lisbon", "orders", "Postgres", "Atomic Habits", "Dune", "legs", "core",
           "rent", "coffee", "ByteDance", "Stripe", "Grafana", "Hangzhou", "Chengdu", "users", "Sapiens", "swimming"]  # fmt: skip
WORDS_Y = ["a stale container", "the old agent", "S3", "ClickHouse", "the river", "the station", "habits",
           "deserts", "Coach Li", "Anna", "books", "taxis", "backend engineer", "data analyst", "a zombie process"]  # fmt: skip
FILLER_ZH = ["今天天气不错，出去走了走。", "午饭吃了牛肉面。", "晚上看了一集纪录片。", "有点累，早点睡了。", "和朋友打了会儿羽毛球。",
             "最近工作有点忙。", "周末想去公园。", "新买的耳机音质还行。", "猫今天特别粘人。", "地铁上人好多。"]  # fmt: skip
FILLER_EN = ["Went for a short walk, nice weather.", "Had noodles for lunch.", "Watched a documentary tonight.",
             "A bit tired, going to bed early.", "Played badminton with a friend.", "Work has been busy lately.",
             "Thinking about the park this weekend.", "The new headphones sound fine.", "The cat is extra clingy today.",
             "The subway was packed."]  # fmt: skip


@dataclass(frozen=True)
class Phrase:
    """A precise time phrase and where, relative to ``now``, its moment lies."""

    zh: str
    en: str
    place: str


PRECISE = [
    Phrase("上周三下午", "last Wednesday afternoon", "last_wed_pm"),
    Phrase("昨天晚上", "yesterday evening", "yesterday_pm"),
    Phrase("三天前", "three days ago", "days_3"),
    Phrase("两周前", "two weeks ago", "weeks_2"),
    Phrase("上周末", "last weekend", "last_weekend"),
    Phrase("上个月", "last month", "last_month"),
]
VAGUE = [("前段时间", "a while ago"), ("前阵子", "some time ago")]


def _moment_for(place: str, now: datetime, rng: random.Random, zh: bool) -> datetime:
    today = now.date()
    monday = today - timedelta(days=today.weekday())
    if place == "last_wed_pm" and zh:  # 上周三: Wednesday of the previous calendar week
        day, hour = monday - timedelta(days=5), rng.randint(13, 16)
    elif place == "last_wed_pm":  # "last Wednesday": the most recent Wednesday before today
        back = (today.weekday() - 2) % 7 or 7
        day, hour = today - timedelta(days=back), rng.randint(13, 16)
    elif place == "yesterday_pm":
        day, hour = today - timedelta(days=1), rng.randint(19, 22)
    elif place == "days_3":
        day, hour = today - timedelta(days=3), rng.randint(9, 20)
    elif place == "weeks_2":
        day, hour = monday - timedelta(days=14 - rng.randint(0, 6)), rng.randint(9, 20)
    elif place == "last_weekend":
        day, hour = monday - timedelta(days=rng.choice([1, 2])), rng.randint(10, 20)
    else:  # last month
        first = today.replace(day=1)
        previous = (first - timedelta(days=1)).replace(day=1)
        day, hour = previous + timedelta(days=rng.randint(2, 25)), rng.randint(9, 20)
    return datetime(day.year, day.month, day.day, hour, rng.randint(0, 59), tzinfo=now.tzinfo)


def _fact(topic: Topic, zh: bool, rng: random.Random) -> str:
    template = topic.fact_zh if zh else topic.fact_en
    return template.format(x=rng.choice(WORDS_X), y=rng.choice(WORDS_Y), n=rng.randint(2, 9000))


def generate(
    users: int, seed: int, zone: tzinfo, categories: tuple[str, ...] = ()
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Conversations and questions in the FORMAT.md layout (plus ``extra.kind`` and ``extra.label``).

    ``categories`` adds the questions of those categories (of ``CATEGORIES``) to the
    original precise and vague ones.
    """
    rng = random.Random(seed)
    utterances: list[dict[str, Any]] = []
    questions: list[dict[str, Any]] = []
    for user in range(users):
        conversation = f"user-{user}"
        zh = user % 2 == 0
        now = datetime(2026, 11, 25, 15, 0, tzinfo=zone) + timedelta(days=rng.randint(0, 20), hours=rng.randint(0, 5))
        planted: list[tuple[datetime, str, dict[str, Any] | None]] = []
        topics = rng.sample(TOPICS, len(TOPICS))
        for index, phrase in enumerate(PRECISE):
            topic = topics[index % len(topics)]
            moment = _moment_for(phrase.place, now, rng, zh)
            turn_id = f"{conversation}-p{index}"
            question = (
                f"{phrase.zh}我们聊的那个{topic.zh}是什么？" if zh else f"what did I say about {topic.en} {phrase.en}?"
            )
            label = phrase.zh if zh else phrase.en
            planted.append(
                (
                    moment,
                    _fact(topic, zh, rng),
                    {"id": turn_id, "question": question, "kind": "precise", "label": label},
                )
            )
            for shift in (rng.randint(9, 12), rng.randint(33, 45)):  # look-alikes outside the range
                planted.append((moment - timedelta(days=shift), _fact(topic, zh, rng), None))
        for index, (phrase_zh, phrase_en) in enumerate(VAGUE * 2):
            topic = topics[(index + len(PRECISE)) % len(topics)]
            moment = now - timedelta(days=rng.randint(8, 34), hours=rng.randint(0, 8))
            turn_id = f"{conversation}-v{index}"
            question = (
                f"{phrase_zh}我们聊过的{topic.zh}是什么？"
                if zh
                else f"{phrase_en} we talked about {topic.en}, what was it?"
            )
            label = phrase_zh if zh else phrase_en
            planted.append(
                (moment, _fact(topic, zh, rng), {"id": turn_id, "question": question, "kind": "vague", "label": label})
            )
            planted.append((moment - timedelta(days=rng.randint(70, 100)), _fact(topic, zh, rng), None))
        planted += _plant_categories(conversation, now, random.Random(f"{seed}-{user}"), zh, categories)
        day = (now - timedelta(days=120)).date()
        filler: list[tuple[datetime, str, dict[str, Any] | None]] = []
        while day < now.date():
            for _ in range(rng.randint(1, 4)):
                moment = datetime(day.year, day.month, day.day, rng.randint(8, 22), rng.randint(0, 59), tzinfo=zone)
                filler.append((moment, rng.choice(FILLER_ZH if zh else FILLER_EN), None))
            day += timedelta(days=1)
        _emit(conversation, sorted(planted + filler, key=lambda item: item[0]), now, utterances, questions)
    return utterances, questions


def _emit(
    conversation: str,
    items: list[tuple[datetime, str, dict[str, Any] | None]],
    now: datetime,
    utterances: list[dict[str, Any]],
    questions: list[dict[str, Any]],
) -> None:
    by_day: dict[date, list[tuple[datetime, str, dict[str, Any] | None]]] = defaultdict(list)
    for item in items:
        by_day[item[0].date()].append(item)
    for number, (day, entries) in enumerate(sorted(by_day.items())):
        session = f"session_{number + 1}"
        for index, (moment, text, question) in enumerate(entries):
            turn_id = question["id"] if question else f"{conversation}-{number}-{index}"
            utterances.append(
                {
                    "conversation_id": conversation,
                    "session_id": session,
                    "session_datetime": entries[0][0].isoformat(),
                    "turn_id": turn_id,
                    "turn_index": index,
                    "speaker": "user",
                    "text": text,
                    "turn_datetime": moment.isoformat(),
                    "extra": {},
                }
            )
            if question:
                questions.append(
                    {
                        "question_id": f"{turn_id}-q",
                        "conversation_id": conversation,
                        "question": question["question"],
                        "category": question["kind"],
                        "question_datetime": now.isoformat(),
                        "evidence_turn_ids": [turn_id],
                        "answer": text,
                        "extra": {"kind": question["kind"], "label": question["label"], "day": str(day)},
                    }
                )


# ---------------------------------------------------------------- categories

NEW_TOPICS = [
    Topic("签证", "the visa", "签证材料交了：护照尾号 {n}，在 {x} 领事馆，预约在 {y} 附近。",
          "Visa papers are in: passport ending {n}, at the {x} consulate, appointment near {y}."),
    Topic("搬家", "the move", "搬家定了：{n} 个箱子，搬到 {x}，找了 {y} 帮忙。",
          "The move is set: {n} boxes, moving to {x}, and {y} is helping."),
    Topic("体检", "the checkup", "体检结果出来了：指标 {n}，医生在 {x}，建议多关注 {y}。",
          "Checkup results: reading {n}, the doctor is in {x} and wants me to watch {y}."),
    Topic("车险", "the car insurance", "车险续了：保费 {n} 元，保险公司在 {x}，经纪人推荐了 {y}。",
          "Car insurance renewed: premium {n} dollars, the insurer is in {x}, the broker suggested {y}."),
    Topic("装修", "the renovation", "装修进度：厨房花了 {n} 元，瓷砖从 {x} 订的，工头说要等 {y}。",
          "Renovation update: the kitchen cost {n} dollars, tiles ordered from {x}, the foreman is waiting on {y}."),
    Topic("年会", "the annual party", "年会安排：{n} 人，地点在 {x}，节目请了 {y}。",
          "Annual party plan: {n} people at {x}, with {y} on stage."),
    Topic("演唱会", "the concert", "演唱会门票买了：第 {n} 排，在 {x} 体育馆，和 {y} 一起去。",
          "Concert tickets bought: row {n} at the {x} arena, going with {y}."),
    Topic("咖啡店", "the coffee shop", "新开的咖啡店：在 {x} 旁边，手冲 {n} 元，老板喜欢 {y}。",
          "The new coffee shop: next to {x}, pour-over for {n}, the owner loves {y}."),
    Topic("租房", "the apartment", "看了一套房子：月租 {n} 元，在 {x} 附近，房东认识 {y}。",
          "Saw an apartment: rent {n} a month near {x}, the landlord knows {y}."),
    Topic("吉他课", "the guitar lessons", "吉他课报名了：一共 {n} 节，老师在 {x}，先练 {y}。",
          "Signed up for guitar lessons: {n} classes, the teacher is in {x}, starting with {y}."),
    Topic("牙医", "the dentist", "约了牙医：挂号费 {n} 元，诊所在 {x}，要处理 {y}。",
          "Booked the dentist: fee {n}, the clinic is in {x}, they will look at {y}."),
    Topic("婚礼", "the wedding", "婚礼请柬到了：{n} 桌，在 {x} 办，伴郎是 {y}。",
          "The wedding invitation came: {n} tables at {x}, the best man is {y}."),
    Topic("相机", "the camera", "新相机到手：快门 {n} 次，镜头是 {x}，想去拍 {y}。",
          "Got the new camera: {n} shutter clicks so far, a {x} lens, planning to shoot {y}."),
    Topic("报税", "the tax return", "报税弄完了：退税 {n} 元，材料寄到 {x}，会计提醒了 {y}。",
          "Tax return done: a refund of {n}, papers sent to {x}, the accountant mentioned {y}."),
    Topic("马拉松", "the marathon", "马拉松报名成功：号码 {n}，起点在 {x}，配速跟着 {y}。",
          "Marathon entry confirmed: bib {n}, the start is at {x}, pacing with {y}."),
    Topic("植物", "the plants", "阳台的植物：浇了 {n} 毫升水，新买的 {x}，邻居送了 {y}。",
          "The balcony plants: {n} ml of water, a new {x}, and the neighbour gave me {y}."),
]  # fmt: skip


@dataclass(frozen=True)
class Plant:
    """One question of a category: its time phrase, the gold moment, and look-alikes outside the phrase."""

    label: str
    phrase: str
    moment: datetime
    """When the fact is said."""
    decoys: tuple[datetime, ...]
    told: str = ""
    """A time phrase the fact itself opens with, relative to ``moment`` (``event``: the time it talks about)."""


Category = Callable[[datetime, random.Random, bool], list[Plant]]


def _at(day: date, minutes: int, zone: tzinfo | None) -> datetime:
    return datetime(day.year, day.month, day.day, tzinfo=zone) + timedelta(minutes=minutes)


def _far(moment: datetime, rng: random.Random) -> tuple[datetime, ...]:
    """The original benchmark's look-alikes: 9–12 and 33–45 days earlier."""
    return (moment - timedelta(days=rng.randint(9, 12)), moment - timedelta(days=rng.randint(33, 45)))


# (zh, en, first day, days) — in 2026, checked against published calendars, not computed by the resolver
HOLIDAYS_2026 = [
    ("七夕", "on Qixi", date(2026, 8, 19), 1),
    ("中秋节", "at the Mid-Autumn Festival", date(2026, 9, 25), 1),
    ("国庆", "during Golden Week", date(2026, 10, 1), 7),
    ("重阳节", "on the Double Ninth Festival", date(2026, 10, 18), 1),
    ("万圣节", "on Halloween", date(2026, 10, 31), 1),
    ("双十一", "on Singles' Day", date(2026, 11, 11), 1),
]


def holidays(now: datetime, rng: random.Random, zh: bool) -> list[Plant]:
    """Four holidays of the last four months, each planted on one of its days."""
    plants = []
    for name_zh, name_en, first, days in rng.sample(HOLIDAYS_2026, 4):
        day = first + timedelta(days=rng.randrange(days))
        moment = _at(day, rng.randint(10 * 60, 21 * 60), now.tzinfo)
        plants.append(Plant(name_zh if zh else name_en, name_zh if zh else name_en, moment, _far(moment, rng)))
    return plants


def clock_times(now: datetime, rng: random.Random, zh: bool) -> list[Plant]:
    """A clock time on a day; the look-alikes are the same day hours away and the same hour another day."""
    today = now.date()
    monday = today - timedelta(days=today.weekday())
    last_friday = monday - timedelta(days=3) if zh else today - timedelta(days=(today.weekday() - 4) % 7 or 7)
    cases = [
        ("昨天下午三点", "yesterday at 3pm", today - timedelta(days=1), 15 * 60, 40),
        ("前天中午十二点", "the day before yesterday at noon", today - timedelta(days=2), 12 * 60, 40),
        ("今天早上7:30", "this morning at 7:30", today, 7 * 60 + 30, 30),
        ("上周五晚上八点半", "last Friday at 8:30 in the evening", last_friday, 20 * 60 + 30, 40),
    ]
    plants = []
    for phrase_zh, phrase_en, day, minutes, spread in cases:
        moment = _at(day, minutes + rng.randint(0, spread), now.tzinfo)
        decoys = (moment + timedelta(hours=rng.choice([-5, -4, 4])), moment - timedelta(days=rng.choice([1, 7])))
        phrase = phrase_zh if zh else phrase_en
        plants.append(Plant(phrase, phrase, moment, decoys))
    return plants


_MONTHS_EN = ["January", "February", "March", "April", "May", "June", "July", "August", "September", "October",
              "November", "December"]  # fmt: skip


def spans(now: datetime, rng: random.Random, zh: bool) -> list[Plant]:
    """Spans written as dates (also huichat's own label), as weekdays, and from a date to now."""
    today = now.date()
    plants = []
    for label in ("dates", "label", "weekdays" if zh else "dates to", "since"):
        if label == "weekdays":  # 上周一到上周三
            first = today - timedelta(days=today.weekday() + 7)
            last = first + timedelta(days=2)
            phrase = "上周一到上周三"
        elif label == "since":
            first = today - timedelta(days=rng.randint(8, 20))
            last = today
            phrase = (
                f"从{first.month}月{first.day}日到现在" if zh else f"since {_MONTHS_EN[first.month - 1]} {first.day}"
            )
        else:
            first = today - timedelta(days=rng.randint(15, 45))
            last = first + timedelta(days=rng.randint(3, 5))
            if label == "label":
                phrase = f"{first:%Y-%m-%d} – {last:%Y-%m-%d}"
            elif zh:
                phrase = f"{first.month}月{first.day}日到{last.month}月{last.day}日"
            elif label == "dates":
                phrase = (
                    f"between {_MONTHS_EN[first.month - 1]} {first.day} and {_MONTHS_EN[last.month - 1]} {last.day}"
                )
            else:
                phrase = f"from {_MONTHS_EN[first.month - 1]} {first.day} to {_MONTHS_EN[last.month - 1]} {last.day}"
        latest = now - timedelta(hours=1)
        moment = min(
            _at(first + timedelta(days=rng.randint(0, (last - first).days)), rng.randint(9 * 60, 21 * 60), now.tzinfo),
            latest,
        )
        before = _at(first - timedelta(days=rng.randint(2, 5)), rng.randint(9 * 60, 21 * 60), now.tzinfo)
        after = _at(last + timedelta(days=rng.randint(2, 5)), rng.randint(9 * 60, 21 * 60), now.tzinfo)
        decoys = (before, after if after < latest else before - timedelta(days=rng.randint(6, 12)))
        plants.append(Plant(label, phrase, moment, decoys))
    return plants


def windows(now: datetime, rng: random.Random, zh: bool) -> list[Plant]:
    """Counted windows up to now; the look-alikes just before the window and a month or more back."""
    cases = [
        ("过去三天", "in the last three days", (3, 60), (5 * 24, 8 * 24)),
        ("最近一周", "over the past week", (24, 6 * 24), (9 * 24, 12 * 24)),
        ("这两天", "over the past two days", (2, 40), (4 * 24, 6 * 24)),
        ("近两个月", "in the past two months", (15 * 24, 50 * 24), (70 * 24, 100 * 24)),
    ]
    plants = []
    for phrase_zh, phrase_en, (low, high), (decoy_low, decoy_high) in cases:
        moment = now - timedelta(hours=rng.randint(low, high))
        decoys = (
            now - timedelta(hours=rng.randint(decoy_low, decoy_high)),
            now - timedelta(days=rng.randint(110, 150)),
        )
        phrase = phrase_zh if zh else phrase_en
        plants.append(Plant(phrase, phrase, moment, decoys))
    return plants


_WEEKDAYS_ZH = "一二三四五六日"
_WEEKDAYS_EN = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")


def events(now: datetime, rng: random.Random, zh: bool) -> list[Plant]:
    """Facts said on one day about another, asked about by the day they talk about.

    Four kinds: a day of the week before last told a week later (上周二 → asked 上上周);
    a day told two days later (前天 → asked by its date, a hint); next month told in the
    month before (下个月 → asked 这个月); next Friday told the week before (下周五 → asked
    上周五 / "last Friday"). Each is said outside the phrase asked with; the look-alikes are
    said two and five weeks before either day, telling no time.
    """
    zone, today = now.tzinfo, now.date()
    monday = today - timedelta(days=today.weekday())
    plants = []

    def said(day: date) -> datetime:
        return min(_at(day, rng.randint(9 * 60, 21 * 60), zone), now - timedelta(hours=1))

    # a day of the week before last, told a week later as 上周X / "last <weekday>"
    about = monday - timedelta(days=14 - rng.randrange(7))
    told = f"上周{_WEEKDAYS_ZH[about.weekday()]}" if zh else f"last {_WEEKDAYS_EN[about.weekday()]}"
    plants.append(
        Plant("week before last", "上上周" if zh else "the week before last", said(about + timedelta(days=7)), (), told)
    )
    # a day 3–6 days ago, told two days later, asked by its date
    about = today - timedelta(days=rng.randint(3, 6))
    phrase = f"{about.month}月{about.day}日" if zh else f"on {_MONTHS_EN[about.month - 1]} {about.day}"
    told = "前天" if zh else "the day before yesterday"
    plants.append(Plant("date, told 2 days later", phrase, said(about + timedelta(days=2)), (), told))
    # next month, told in the month before this one
    first = today.replace(day=1)
    before = first - timedelta(days=rng.randint(3, 20))
    plants.append(
        Plant("plan: this month", "这个月" if zh else "this month", said(before), (), "下个月" if zh else "next month")
    )
    # next Friday, told in the week before that Friday's week
    friday = monday - timedelta(days=3) if zh else today - timedelta(days=(today.weekday() - 4) % 7 or 7)
    day = friday - timedelta(days=7 + rng.randrange(5))
    plants.append(
        Plant("plan: last Friday", "上周五" if zh else "last Friday", said(day), (), "下周五" if zh else "next Friday")
    )
    return [
        replace(
            p, decoys=(p.moment - timedelta(days=rng.randint(14, 20)), p.moment - timedelta(days=rng.randint(33, 45)))
        )
        for p in plants
    ]


CATEGORIES: dict[str, Category] = {
    "holiday": holidays,
    "clock": clock_times,
    "span": spans,
    "window": windows,
    "event": events,
}
"""The categories beyond the original precise and vague questions."""


def _plant_categories(
    conversation: str, now: datetime, rng: random.Random, zh: bool, names: tuple[str, ...]
) -> list[tuple[datetime, str, dict[str, Any] | None]]:
    planted: list[tuple[datetime, str, dict[str, Any] | None]] = []
    topics = rng.sample(NEW_TOPICS, len(NEW_TOPICS))
    count = 0
    for name in names:
        for index, plant in enumerate(CATEGORIES[name](now, rng, zh)):
            topic = topics[count % len(topics)]
            count += 1
            question = (
                f"{plant.phrase}我们聊的那个{topic.zh}是什么？"
                if zh
                else f"what did I say about {topic.en} {plant.phrase}?"
            )
            meta = {"id": f"{conversation}-{name}{index}", "question": question, "kind": name, "label": plant.label}
            fact = _fact(topic, zh, rng)
            if plant.told:
                fact = f"{plant.told}，{fact}" if zh else f"{plant.told[0].upper()}{plant.told[1:]}, {fact}"
            planted.append((plant.moment, fact, meta))
            planted.extend((decoy, _fact(topic, zh, rng), None) for decoy in plant.decoys)
    return planted

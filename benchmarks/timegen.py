"""``huichat bench timegen``: a bilingual benchmark of time resolution + progressive scan.

Synthetic users chat for months in Chinese and English. Facts are planted at known
moments, with look-alike distractors on the same topic at other times, so keywords alone
cannot pick the right turn: the time phrase has to. Precise questions ("上周三下午我们聊的
那个部署问题是什么？", "what did I say about the VPN two weeks ago?") are scored by recall@5;
vague ones ("前段时间…", "a while ago…") by the scan round in which the gold turn appears.
The dataset is written in the ``shared/bench/FORMAT.md`` layout, so ``bench recall`` can
read it too.
"""

from __future__ import annotations

import argparse
import json
import random
import time
from collections import defaultdict
from dataclasses import dataclass
from datetime import date, datetime, timedelta, tzinfo
from typing import TYPE_CHECKING, Any

from rich.console import Console
from rich.progress import Progress
from rich.table import Table

from app.config import LoadedConfig
from benchmarks.common import bench_embedder, machine, scratch_kernel, write_json
from benchmarks.recall import ingest
from memory.results import SearchRequest

if TYPE_CHECKING:
    from app.runtime import Zone


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


def generate(users: int, seed: int, zone: tzinfo) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Conversations and questions in the FORMAT.md layout (plus ``extra.kind``)."""
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
            planted.append((moment, _fact(topic, zh, rng), {"id": turn_id, "question": question, "kind": "precise"}))
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
            planted.append((moment, _fact(topic, zh, rng), {"id": turn_id, "question": question, "kind": "vague"}))
            planted.append((moment - timedelta(days=rng.randint(70, 100)), _fact(topic, zh, rng), None))
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
                        "extra": {"kind": question["kind"], "day": str(day)},
                    }
                )


def run_time_bench(args: argparse.Namespace, loaded: LoadedConfig, zone: Zone) -> int:
    """Generate the dataset, ingest it, ask every question, report."""
    console = Console()
    utterances, questions = generate(args.users, args.seed, zone.tz)
    if args.out:
        args.out.mkdir(parents=True, exist_ok=True)
        for name, rows in (("conversations.jsonl", utterances), ("questions.jsonl", questions)):
            with (args.out / name).open("w", encoding="utf-8") as handle:
                handle.writelines(json.dumps(row, ensure_ascii=False) + "\n" for row in rows)
    embedder = bench_embedder(loaded, args.embedder)
    by_conversation: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for row in utterances:
        by_conversation[row["conversation_id"]].append(row)
    precise_found = precise_total = 0
    vague_rounds: list[int | None] = []
    per_phrase: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    latencies: list[float] = []
    with Progress(console=console, transient=True) as progress:
        task = progress.add_task("ingesting and asking", total=len(utterances))
        for conversation, rows in sorted(by_conversation.items()):
            with scratch_kernel(loaded, embedder, zone.tz) as kernel:
                mapping = ingest(kernel, rows, zone.tz)
                reverse = {v: k for k, v in mapping.items()}
                progress.update(task, advance=len(rows))
                for question in (q for q in questions if q["conversation_id"] == conversation):
                    now = datetime.fromisoformat(question["question_datetime"])
                    gold = reverse[question["evidence_turn_ids"][0]]
                    started = time.perf_counter()
                    results = kernel.search(SearchRequest(question["question"], now, 5, record_access=False))
                    latencies.append(time.perf_counter() - started)
                    if question["category"] == "precise":
                        hit = gold in [h.turn.id for h in results.hits]
                        precise_total += 1
                        precise_found += hit
                        phrase = results.time_range.phrase if results.time_range else "(none)"
                        per_phrase[phrase][0] += hit
                        per_phrase[phrase][1] += 1
                    else:
                        found_in = next(
                            (i + 1 for i, r in enumerate(results.rounds) if gold in {h.turn.id for h in r.found}), None
                        )
                        vague_rounds.append(found_in)
    within = sum(1 for r in vague_rounds if r is not None and r <= 4)
    report = {
        "users": args.users,
        "seed": args.seed,
        "embedder": embedder.name,
        "turns": len(utterances),
        "precise_questions": precise_total,
        "precise_recall@5": round(precise_found / max(precise_total, 1), 4),
        "per_phrase_recall@5": {p: round(v[0] / v[1], 4) for p, v in sorted(per_phrase.items())},
        "vague_questions": len(vague_rounds),
        "vague_found_within_4_rounds": round(within / max(len(vague_rounds), 1), 4),
        "vague_rounds": vague_rounds,
        "search_ms_p50": round(sorted(latencies)[len(latencies) // 2] * 1000, 1) if latencies else 0.0,
        "machine": machine(),
    }
    table = Table(title=f"time benchmark · {args.users} users · {len(utterances)} turns · {embedder.name}")
    table.add_column("measure")
    table.add_column("value", justify="right")
    table.add_row("precise phrases: recall@5", f"{report['precise_recall@5']:.3f} ({precise_found}/{precise_total})")
    for phrase, value in report["per_phrase_recall@5"].items():
        table.add_row(f"  {phrase}", f"{value:.3f}")
    table.add_row(
        "vague phrases: found within 4 scan rounds",
        f"{report['vague_found_within_4_rounds']:.3f} ({within}/{len(vague_rounds)})",
    )
    console.print(table)
    write_json(args.json, report)
    return 0

"""``huichat bench lifecycle``: a synthetic year of chat run through the daily jobs.

The year has ordinary bilingual chat, planted facts (each said once and then repeated
zero to four times within a few days, as people do) and access that varies (some facts
are asked about again and again, most never). Every month the jobs run at the month's end,
as the app would. Reported: job time per 10k turns, tier counts, duplicates among the top
10 before and after consolidation, recall@10 of the planted facts with the tier prior on
and off, and search latency while a job runs on a larger store against idle.

Turns are embedded by the hash embedder (64 dimensions) so that a year takes minutes: what
is measured here is the jobs and the ranking, not the model.
"""

from __future__ import annotations

import argparse
import random
import shutil
import statistics
import tempfile
import threading
import time
from collections import defaultdict
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rich.console import Console
from rich.progress import Progress
from rich.table import Table

from benchmarks.common import machine, percentile, write_json
from huichat.app.config import LoadedConfig
from huichat.memory.config import LifecycleConfig, TierPrior
from huichat.memory.consolidation import run_consolidation
from huichat.memory.embedding import HashEmbedder
from huichat.memory.joblog import JobLog
from huichat.memory.kernel import MemoryKernel
from huichat.memory.lifecycle import run_lifecycle
from huichat.memory.location import MemoryLocation
from huichat.memory.opening import open_kernel
from huichat.memory.results import SearchRequest
from huichat.memory.turns import Message, TurnDraft

if TYPE_CHECKING:
    from huichat.app.runtime import Zone

PLACES = ["gym locker", "office door", "bike lock", "storage unit", "garage", "wifi router", "server rack", "mailbox"]
PLACES_ZH = ["健身房柜子", "办公室门禁", "自行车锁", "储物间", "车库", "路由器", "机柜", "信箱"]
WORDS = ["dinner", "train", "late", "podcast", "weather", "cold", "film", "space", "sister", "call", "meeting", "long", "shoes", "run", "park", "coffee", "book", "music", "rain", "garden", "project", "deadline", "code", "review", "bug", "deploy", "server", "cat", "dog", "vet", "trip", "hotel", "flight", "budget", "rent", "friend", "party", "gift", "birthday", "movie", "song", "guitar", "piano", "lesson", "exam", "report", "slide", "chart", "plan", "idea", "walk", "bike", "lake", "river", "bread", "soup", "tea", "market", "price", "phone", "laptop", "screen", "battery", "cable", "window", "door", "key", "light", "lamp", "chair", "desk"]  # fmt: skip
CHARS_ZH = "今天晚上吃什么地铁晚点播客天气变冷电影太空姐姐电话会议跑鞋公园咖啡书音乐下雨花园项目代码部署服务器猫狗旅行酒店预算房租朋友生日礼物歌曲吉他钢琴考试报告计划散步自行车湖河面包汤茶市场手机电脑屏幕电池窗户钥匙灯椅子桌子"
NO_PRIOR = TierPrior(long_term=0.0, working=0.0, archive=0.0)


@dataclass
class Fact:
    """A planted fact: its words, the question that asks for it, and the turns that state it."""

    statement: str
    question: str
    said: datetime
    turn_ids: list[str]
    asked: int


def _facts(rng: random.Random, count: int, start: datetime) -> list[Fact]:
    facts = []
    for i in range(count):
        code = f"{rng.randint(1000, 9999)}-{i}"
        if i % 2:
            place = PLACES_ZH[i % len(PLACES_ZH)] + f"{i}号"
            statement, question = f"记一下：{place}的密码是 {code}", f"{place}的密码是多少"
        else:
            place = f"{PLACES[i % len(PLACES)]} number {i}"
            statement, question = f"note this: the code for the {place} is {code}", f"what is the code for the {place}"
        asked = int(rng.paretovariate(1.2)) - 1 if rng.random() < 0.4 else 0
        facts.append(Fact(statement, question, start + timedelta(days=rng.uniform(0, 350)), [], min(asked, 30)))
    return facts


def _year(
    rng: random.Random, turns: int, facts: list[Fact], start: datetime
) -> list[list[tuple[TurnDraft, Fact | None]]]:
    """Sessions in time order; each planted statement is repeated 0–4 times within six days."""
    planted: list[tuple[datetime, Fact]] = []
    for fact in facts:
        planted.append((fact.said, fact))
        for _ in range(rng.choice([0, 0, 1, 2, 3, 4])):
            planted.append((fact.said + timedelta(days=rng.uniform(0.2, 6)), fact))
    planted.sort(key=lambda p: p[0])
    sessions: list[list[tuple[TurnDraft, Fact | None]]] = []
    moment = start
    made = 0
    queue = list(planted)
    while made < turns:
        size = min(rng.randint(20, 80), turns - made)
        zh = rng.random() < 0.5
        session: list[tuple[TurnDraft, Fact | None]] = []
        for _ in range(size):
            due = queue.pop(0)[1] if queue and queue[0][0] <= moment else None
            if due is not None:
                text, about = due.statement, due
            elif zh:
                text, about = "".join(rng.choices(CHARS_ZH, k=rng.randint(8, 20))), None
            else:
                text, about = " ".join(rng.choices(WORDS, k=rng.randint(5, 12))), None
            reply = (
                "好的，记下了。"
                if about and zh
                else ("Noted." if about else rng.choice(["嗯。", "I see.", "哈哈", "Sure."]))
            )
            session.append((TurnDraft((Message("user", text), Message("assistant", reply)), moment), about))
            moment += timedelta(minutes=rng.randint(1, 6))
        sessions.append(session)
        made += size
        moment += timedelta(hours=365 * 24 * 0.9 * 60 / max(turns, 1))
    return sessions


def _kernel(root: Path, zone: Zone, loaded: LoadedConfig, importance: bool = True) -> MemoryKernel:
    lifecycle = LifecycleConfig.model_validate({"importance": {"enabled": importance}})
    return open_kernel(
        MemoryLocation.under(root), HashEmbedder(64), loaded.config.retriever, zone.tz,
        now=datetime.now(zone.tz), reconcile=False, lifecycle=lifecycle,
    )  # fmt: skip


def _ask(kernel: MemoryKernel, facts: list[Fact], now: datetime, prior: TierPrior) -> dict[str, float]:
    """Recall@10 of the planted facts, and duplicates (a second turn of the same fact) in the top 10."""
    kernel.retriever.prior = prior
    owner = {turn_id: i for i, f in enumerate(facts) for turn_id in f.turn_ids}
    found = found_folded = duplicates = 0
    for fact in facts:
        hits = kernel.search(SearchRequest(fact.question, now, 10, record_access=False, resolve_time=False)).hits
        shown = [h.turn.id for h in hits]
        folded = shown + [m.id for h in hits for m in h.similar]
        found += any(t in fact.turn_ids for t in shown)
        found_folded += any(t in fact.turn_ids for t in folded)
        seen: set[int] = set()
        for turn_id in shown:
            if turn_id in owner:
                duplicates += owner[turn_id] in seen
                seen.add(owner[turn_id])
    n = max(1, len(facts))
    return {
        "recall@10": round(found / n, 4),
        "recall@10_with_similar": round(found_folded / n, 4),
        "duplicates_per_query": round(duplicates / n, 3),
    }


def _simulate(
    args: argparse.Namespace, loaded: LoadedConfig, zone: Zone, root: Path, console: Console
) -> dict[str, Any]:
    rng = random.Random(args.seed)
    start = datetime(2025, 1, 1, 9, tzinfo=zone.tz)
    facts = _facts(rng, args.facts, start)
    sessions = _year(rng, args.turns, facts, start)
    kernel = _kernel(root, zone, loaded)
    log = JobLog(root)
    month_ends = [start + timedelta(days=30 * (m + 1)) for m in range(12)]
    job_seconds: list[tuple[int, float, float]] = []
    ingest = 0.0
    with Progress(console=console, transient=True) as progress:
        task = progress.add_task("a year of chat", total=args.turns)
        pending = list(sessions)
        month_ends.append(sessions[-1][-1][0].timestamp + timedelta(days=1))  # whatever the year spills over
        for month_end in month_ends:
            started = time.perf_counter()
            while pending and pending[0][0][0].timestamp < month_end:
                session = pending.pop(0)
                handle = kernel.new_session(session[0][0].timestamp)
                written = kernel.append_turns(handle, [draft for draft, _ in session])
                for turn, (_, about) in zip(written, session, strict=True):
                    if about is not None:
                        about.turn_ids.append(turn.id)
                if kernel.needs_maintenance():
                    kernel.maintain()
                progress.advance(task, len(session))
            ingest += time.perf_counter() - started
            # this month's questions: facts asked about again and again are retrieved (accessed)
            for fact in facts:
                if fact.turn_ids and fact.asked and fact.said < month_end:
                    kernel.note_access(fact.turn_ids[:1] * max(1, fact.asked // 3), month_end - timedelta(days=1))
            kernel.flush_access()
            began = time.perf_counter()
            run_lifecycle(kernel, month_end, log)
            job_seconds.append((kernel.count(), time.perf_counter() - began, 0.0))
    kernel.maintain(force=True)
    end = month_ends[-1]
    tiers: dict[str, int] = defaultdict(int)
    for state in kernel.store.states():
        tiers[state.tier] += 1
    before = {
        "prior_on": _ask(kernel, facts, end, LifecycleConfig().tier_prior),
        "prior_off": _ask(kernel, facts, end, NO_PRIOR),
    }
    began = time.perf_counter()
    grouped = run_consolidation(kernel, end, loaded.config.consolidation, log)
    consolidation_seconds = time.perf_counter() - began
    after = {
        "prior_on": _ask(kernel, facts, end, LifecycleConfig().tier_prior),
        "prior_off": _ask(kernel, facts, end, NO_PRIOR),
    }
    began = time.perf_counter()
    steady = run_lifecycle(kernel, end + timedelta(days=1), log)
    steady_seconds = time.perf_counter() - began
    total = kernel.count()
    kernel.close()
    per_10k = [seconds / count * 10_000 for count, seconds, _ in job_seconds if count]
    return {
        "turns": total,
        "facts": len(facts),
        "planted_turns": sum(len(f.turn_ids) for f in facts),
        "ingest_turns_per_s": round(total / ingest, 1) if ingest else 0.0,
        "monthly_job_s_per_10k_turns": {
            "median": round(statistics.median(per_10k), 2),
            "max": round(max(per_10k), 2),
        },
        "next_day_job_s_per_10k_turns": round(steady_seconds / total * 10_000, 2),
        "next_day_job": {"scored": steady.scored, "moved": len(steady.moves)},
        "consolidation_s_per_10k_turns": round(consolidation_seconds / total * 10_000, 2),
        "clusters": len(grouped.clusters),
        "turns_grouped": grouped.grouped,
        "tiers": dict(tiers),
        "before_consolidation": before,
        "after_consolidation": after,
    }


def _search_while_job(
    args: argparse.Namespace, loaded: LoadedConfig, zone: Zone, root: Path, console: Console
) -> dict[str, Any]:
    """Search latency on ``--search-turns`` turns, idle and while the first full job runs in a thread."""
    rng = random.Random(args.seed + 1)
    start = datetime(2025, 1, 1, 9, tzinfo=zone.tz)
    facts = _facts(rng, args.facts, start)
    kernel = _kernel(root, zone, loaded, importance=False)  # written unscored: the job scores every turn
    with Progress(console=console, transient=True) as progress:
        task = progress.add_task(f"writing {args.search_turns} turns", total=args.search_turns)
        for session in _year(rng, args.search_turns, facts, start):
            handle = kernel.new_session(session[0][0].timestamp)
            kernel.append_turns(handle, [draft for draft, _ in session])
            progress.advance(task, len(session))
    kernel.maintain(force=True)
    kernel.lifecycle = LifecycleConfig()
    end = start + timedelta(days=366)
    questions = [f.question for f in facts]

    def search(i: int) -> float:
        began = time.perf_counter()
        kernel.search(SearchRequest(questions[i % len(questions)], end, 10, record_access=False, resolve_time=False))
        return time.perf_counter() - began

    idle = [search(i) for i in range(args.queries)]
    job_time: list[float] = []

    def job() -> None:
        began = time.perf_counter()
        run_lifecycle(kernel, end, JobLog(root))
        run_consolidation(kernel, end, loaded.config.consolidation, JobLog(root))
        job_time.append(time.perf_counter() - began)

    worker = threading.Thread(target=job)
    worker.start()
    busy = []
    i = 0
    while worker.is_alive():
        busy.append(search(i))
        i += 1
    worker.join()
    total = kernel.count()
    kernel.close()
    idle_p95, busy_p95 = percentile(idle, 0.95), percentile(busy, 0.95)
    return {
        "turns": total,
        "idle_ms": {"p50": round(percentile(idle, 0.5) * 1e3, 1), "p95": round(idle_p95 * 1e3, 1)},
        "during_job_ms": {"p50": round(percentile(busy, 0.5) * 1e3, 1), "p95": round(busy_p95 * 1e3, 1)},
        "searches_during_job": len(busy),
        "p95_ratio": round(busy_p95 / idle_p95, 2) if idle_p95 else 0.0,
        "first_full_job_s": round(job_time[0], 1) if job_time else 0.0,
    }


def run_lifecycle_bench(args: argparse.Namespace, loaded: LoadedConfig, zone: Zone) -> int:
    """Simulate the year, then measure search beside a job; print and optionally write JSON."""
    console = Console()
    scratch = Path(args.keep) if args.keep else Path(tempfile.mkdtemp(prefix="huichat-lifecycle-"))
    try:
        report: dict[str, Any] = {"year": _simulate(args, loaded, zone, scratch / "year", console)}
        console.print(f"[bold]year[/]: {report['year']}")
        if args.search_turns:
            report["search_during_job"] = _search_while_job(args, loaded, zone, scratch / "search", console)
            console.print(f"[bold]search during a job[/]: {report['search_during_job']}")
        report["machine"] = machine()
    finally:
        if not args.keep:
            shutil.rmtree(scratch, ignore_errors=True)
    _print(console, report)
    write_json(args.json, report)
    return 0


def _print(console: Console, report: dict[str, Any]) -> None:
    year = report["year"]
    table = Table(title=f"lifecycle · {year['turns']} turns over a year · {year['facts']} planted facts")
    table.add_column("measure")
    table.add_column("value", justify="right")
    table.add_row(
        "monthly job, s per 10k turns (median / max)",
        f"{year['monthly_job_s_per_10k_turns']['median']} / {year['monthly_job_s_per_10k_turns']['max']}",
    )
    table.add_row("next-day job, s per 10k turns", str(year["next_day_job_s_per_10k_turns"]))
    table.add_row("consolidation, s per 10k turns", str(year["consolidation_s_per_10k_turns"]))
    table.add_row("tiers", ", ".join(f"{k} {v}" for k, v in year["tiers"].items()))
    table.add_row("clusters / turns grouped", f"{year['clusters']} / {year['turns_grouped']}")
    for stage in ("before_consolidation", "after_consolidation"):
        for prior in ("prior_on", "prior_off"):
            row = year[stage][prior]
            table.add_row(
                f"{stage.replace('_', ' ')}, {prior.replace('_', ' ')}",
                f"recall@10 {row['recall@10']} (with +similar {row['recall@10_with_similar']}) · duplicates/query {row['duplicates_per_query']}",
            )
    if "search_during_job" in report:
        during = report["search_during_job"]
        table.add_row(
            f"search p95 idle / during a job ({during['turns']} turns)",
            f"{during['idle_ms']['p95']} / {during['during_job_ms']['p95']} ms (×{during['p95_ratio']})",
        )
    console.print(table)

"""``huichat bench timegen --resolver``: how fast the time resolver reads a message.

Every phrase below is put inside a 200-character chat message (filler before and after) and
resolved as a query (``read_query``) and as a stored turn (``event_ranges``), several times
each. Reported: p50/p99/max over all runs in wall-clock time and in CPU time (which leaves
out the time a busy machine kept the process waiting), the p99 of each message's fastest run,
and the slowest of a set of hostile texts (up to 4,000 characters of dense time words,
digits, CJK).
"""

from __future__ import annotations

import argparse
import random
import time
from collections.abc import Callable
from datetime import datetime
from functools import partial
from typing import TYPE_CHECKING, Any

from rich.console import Console
from rich.table import Table

from benchmarks.common import machine, percentile, write_json
from huichat.memory.timeparse import TimeResolver

if TYPE_CHECKING:
    from huichat.app.runtime import Zone

PHRASES = [
    "上周三下午", "昨天晚上", "三天前", "两周前", "上周末", "上个月", "前段时间", "前阵子", "刚才", "很久以前",
    "下午三点", "晚上八点半", "早上7:30", "昨天下午三点左右", "上周五晚上八点半", "中秋节", "国庆", "去年春节",
    "清明", "端午", "除夕", "圣诞节", "3月3日到3月10日", "从周一到周三", "上周三到这周一", "12月1日-12月31日",
    "过去三天", "最近一周", "近两个月", "这两天", "两个月前", "半年前", "一年前", "去年这个时候", "上旬", "上个月中旬",
    "月底", "年初", "去年年底", "上个季度", "Q1", "大上周", "上上个周末", "这周一", "本周三", "上周日", "2025年之前",
    "last Wednesday afternoon", "yesterday evening", "three days ago", "two weeks ago", "last weekend",
    "last month", "a while ago", "some time ago", "just now", "ages ago", "at 3pm", "around 8 in the evening",
    "yesterday at 3pm", "on Halloween", "at the Mid-Autumn Festival", "last Christmas", "during Golden Week",
    "between March 3 and March 10", "from Monday to Wednesday", "2026-12-01 – 2026-12-31", "2026-12-01..2026-12-31",
    "in the last three days", "over the past week", "past month", "six months ago", "a year ago",
    "this time last year", "early February", "mid-March", "end of last month", "at the end of last year",
    "last quarter", "the day before yesterday", "a fortnight ago", "the other day", "before 2025",
]  # fmt: skip
FILLER = [
    "部署又失败了，服务在端口上起不来，最后发现是旧的容器占用了端口。",
    "我们聊了 VPN 的 keepalive 设置和数据库迁移的停机窗口。",
    "The deployment failed again because a stale container was holding the port.",
    "We talked about the VPN keepalive and the database migration window.",
    "猫今天特别粘人，地铁上人好多，午饭吃了牛肉面。",
    "Had noodles for lunch, the subway was packed, the cat is extra clingy.",
]
HOSTILE = [
    "上周三 3月5日 2026-03-05 下午三点 " * 200, "1234567890" * 400, "年月日周天前后" * 600,
    "last week on Monday at 3pm in March " * 120, "2026-12-01 – 2026-12-31 " * 180, "中秋节国庆春节前后" * 450,
    "at 8:30 in the morning " * 180, "上上上上上上周" * 600,
]  # fmt: skip
MESSAGE_LENGTH = 200


def _message(phrase: str, rng: random.Random) -> str:
    """``phrase`` inside filler, 200 characters in all."""
    before = "".join(rng.choice(FILLER) for _ in range(4))
    after = "".join(rng.choice(FILLER) for _ in range(4))
    room = MESSAGE_LENGTH - len(phrase)
    cut = rng.randint(0, room)
    return before[-cut:] + phrase + after[: room - cut] if cut else phrase + after[:room]


def _times(call: Callable[[], object], runs: int) -> tuple[list[float], list[float]]:
    """Wall-clock and CPU milliseconds of each run (CPU time leaves out time the process waited)."""
    wall, cpu = [], []
    for _ in range(runs):
        started, started_cpu = time.perf_counter(), time.thread_time()
        call()
        cpu.append((time.thread_time() - started_cpu) * 1000)
        wall.append((time.perf_counter() - started) * 1000)
    return wall, cpu


def _figures(values: list[float]) -> dict[str, float]:
    return {
        "p50": round(percentile(values, 0.5), 3),
        "p99": round(percentile(values, 0.99), 3),
        "max": round(max(values), 3),
    }


def run_resolver_bench(args: argparse.Namespace, zone: Zone) -> int:
    """Time the resolver on every phrase inside a 200-character message; print and optionally write JSON."""
    console = Console()
    rng = random.Random(args.seed)
    resolver = TimeResolver(zone.tz)
    now = datetime(2026, 11, 25, 15, 0, tzinfo=zone.tz)
    for phrase in PHRASES:  # warm up: lazy imports, the lunar calendar's caches
        resolver.read_query(phrase, now)
    runs = 7
    report: dict[str, Any] = {"phrases": len(PHRASES), "message_chars": MESSAGE_LENGTH, "runs": runs}
    table = Table(
        title=f"time resolver · {len(PHRASES)} phrases in {MESSAGE_LENGTH}-character messages · {runs} runs each"
    )
    for column in ("call", "p50 ms", "p99 ms", "max ms", "CPU p99 ms", "CPU max ms", "fastest-run p99 ms"):
        table.add_column(column, justify="right" if column != "call" else "left")
    messages = [_message(phrase, rng) for phrase in PHRASES]
    calls: list[tuple[str, Callable[[str], object]]] = [
        ("read_query", lambda text: resolver.read_query(text, now)),
        ("event_ranges", lambda text: resolver.event_ranges(text, now)),
    ]
    for name, call in calls:
        every: list[float] = []
        every_cpu: list[float] = []
        fastest: list[float] = []
        for message in messages:
            wall, cpu = _times(partial(call, message), runs)
            every.extend(wall)
            every_cpu.extend(cpu)
            fastest.append(min(wall))
        figures, cpu_figures, best = _figures(every), _figures(every_cpu), _figures(fastest)
        report[name] = {"wall": figures, "cpu": cpu_figures, "fastest_run": best}
        table.add_row(
            name,
            *(f"{figures[k]:.3f}" for k in ("p50", "p99", "max")),
            f"{cpu_figures['p99']:.3f}",
            f"{cpu_figures['max']:.3f}",
            f"{best['p99']:.3f}",
        )
    hostile = [min(_times(partial(call, text), 3)[0]) for _, call in calls for text in HOSTILE]
    report["hostile_max_ms"] = round(max(hostile), 3)
    report["machine"] = machine()
    console.print(table)
    console.print(f"slowest hostile text (up to 4,000 characters, fastest of 3 runs): {max(hostile):.1f} ms")
    write_json(args.json, report)
    return 0

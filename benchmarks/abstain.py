"""``huichat bench abstain``: does search say "no relevant memory" when there is none?

For each conversation of a benchmark folder (``shared/bench/FORMAT.md``), its haystack is
asked the questions of the *other* conversations (their answers are not in it; ``--foreign N``
takes a fixed sample of N from each, for a quicker run) and 100
generated garbage and off-topic strings, Chinese and English. Reported: the share of those
that return no hit at or above the threshold (``retriever.min_similarity`` or
``--threshold``), next to recall@10 on the conversation's own questions with and without
the threshold. One search per question serves both: the calibrated similarity does not
depend on the threshold, which only cuts the ranking's tail.

``--dump FILE`` writes every search's top candidates with their evidence (the inputs of
``memory.calibration``) for ``python -m benchmarks.calibrate FILE``, which refits the
calibration and the threshold by cross-validation over the conversations.
"""

from __future__ import annotations

import argparse
import json
import random
from collections import defaultdict
from dataclasses import asdict
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rich.console import Console
from rich.progress import Progress
from rich.table import Table

from benchmarks.common import bench_embedder, machine, scratch_kernel, write_json
from benchmarks.recall import ingest, moment, read_jsonl
from benchmarks.vectorcache import cached
from huichat.app.config import LoadedConfig
from huichat.memory.kernel import MemoryKernel
from huichat.memory.results import SearchRequest

if TYPE_CHECKING:
    from huichat.app.runtime import Zone

DEPTH = 10

_EN_OFF_TOPIC = (
    "How do I configure a VPN on Ubuntu 22.04?",
    "What is the boiling point of tungsten?",
    "Explain the difference between TCP and UDP.",
    "Which Kubernetes ingress controller handles gRPC best?",
    "What is the capital of Kazakhstan?",
    "How many moons does Neptune have?",
    "Write a haiku about database indexes.",
    "What year did the Byzantine empire fall?",
    "How do I reset the BIOS password on a ThinkPad?",
    "What is the derivative of x to the power of x?",
    "Compare the torque of diesel and petrol engines.",
    "Is the printer on floor 3 fixed yet?",
    "How do I rotate an SSH key on a bastion host?",
    "Translate 'quarterly earnings report' into German.",
    "What are the side effects of ibuprofen?",
    "Recommend a mechanical keyboard with brown switches.",
    "Why does my Rust borrow checker complain about lifetimes?",
    "What is the half-life of carbon-14?",
    "How does a Bloom filter work?",
    "Summarise the plot of Moby Dick in one line.",
    "What is the exchange rate between yen and rupees?",
    "How long should I boil a duck egg?",
    "What's the airspeed velocity of an unladen swallow?",
    "Steps to migrate Postgres 12 to 16 without downtime.",
    "Who won the 1974 Formula One championship?",
    "How do transformers use positional encodings?",
    "What is the best fertiliser for orchids?",
    "Convert 350 Fahrenheit to Kelvin.",
    "How do I file VAT returns as a freelancer?",
    "Which telescope is best for viewing Saturn's rings?",
)
_ZH_OFF_TOPIC = (
    "怎么在 Ubuntu 上配置 VPN？",
    "钨的熔点是多少度？",
    "TCP 和 UDP 有什么区别？",
    "哈萨克斯坦的首都是哪里？",
    "光合作用的化学方程式怎么写？",
    "海王星有几颗卫星？",
    "拜占庭帝国是哪一年灭亡的？",
    "怎么重置 ThinkPad 的 BIOS 密码？",
    "布隆过滤器的原理是什么？",
    "碳十四的半衰期是多久？",
    "布洛芬有哪些副作用？",
    "推荐一款茶轴机械键盘。",
    "Rust 的借用检查器为什么报生命周期错误？",
    "量子纠缠能用来超光速通信吗？",
    "Postgres 12 怎么不停机升级到 16？",
    "1974 年 F1 的总冠军是谁？",
    "兰花用什么肥料最好？",
    "自由职业者怎么申报增值税？",
    "哪种望远镜适合看土星环？",
    "三楼的打印机修好了吗？",
    "如何计算圆周率的前一百位？",
    "牛顿第三定律举个例子。",
    "唐朝的科举考试考什么？",
    "怎么给 Kubernetes 配置 ingress？",
    "北极熊的皮肤是什么颜色？",
    "鸭蛋要煮多久？",
    "日元兑卢比的汇率是多少？",
    "《白鲸记》讲了什么故事？",
    "变压器的工作原理是什么？",
    "华氏三百五十度是多少开尔文？",
)
_GARBAGE_PARTS = ("zxqv", "!!@@##$$", "🤖🤖", "///", "qwrtp", "asdfgh", "嗯嗯嗯", "啊啊", "？？？", "lorem", "ipsum")


def garbage_queries(count: int = 100, seed: int = 0) -> list[str]:
    """``count`` off-topic questions (English and Chinese) and keyboard noise, deterministically."""
    rng = random.Random(seed)
    off_topic = [*_EN_OFF_TOPIC, *_ZH_OFF_TOPIC]
    rng.shuffle(off_topic)
    noise_count = max(0, count - len(off_topic))
    noise = []
    for _ in range(noise_count):
        kind = rng.random()
        if kind < 0.4:
            noise.append(" ".join(rng.choice(_GARBAGE_PARTS) for _ in range(rng.randint(2, 5))))
        elif kind < 0.7:
            noise.append("".join(rng.choice("qwertyuiopasdfghjklzxcvbnm") for _ in range(rng.randint(4, 14))))
        else:
            noise.append("".join(chr(rng.randint(0x4E00, 0x9FA5)) for _ in range(rng.randint(2, 8))))
    return (off_topic + noise)[:count]


def _ask(kernel: MemoryKernel, question: str, now: Any) -> list[dict[str, Any]]:
    results = kernel.search(SearchRequest(question, now, DEPTH, record_access=False))
    return [
        {"id": h.turn.id, "similarity": h.similarity, "evidence": asdict(h.evidence) if h.evidence else None}
        for h in results.hits
    ]


def run_abstain_bench(args: argparse.Namespace, loaded: LoadedConfig, zone: Zone) -> int:
    """Ingest each conversation, ask its own, the others' and garbage questions; print and write the figures."""
    console = Console()
    data: Path = args.data
    rows = read_jsonl(data / "conversations.jsonl")
    questions = [q for q in read_jsonl(data / "questions.jsonl") if q.get("evidence_turn_ids")]
    by_conversation: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for row in rows:
        by_conversation[row["conversation_id"]].append(row)
    conversation_ids = sorted(by_conversation)[: args.limit] if args.limit else sorted(by_conversation)
    threshold = loaded.config.retriever.min_similarity if args.threshold is None else args.threshold
    garbage = garbage_queries(100)
    embedder = cached(bench_embedder(loaded, args.embedder), getattr(args, "vectors", None))
    searches: list[dict[str, Any]] = []
    if getattr(args, "resume", False) and args.dump is not None and args.dump.exists():
        kept = json.loads(args.dump.read_text(encoding="utf-8"))
        if kept.get("embedder") == embedder.name:  # the conversations a stopped run finished
            searches = [s for s in kept["searches"] if s["conversation"] in conversation_ids]
    done = {s["conversation"] for s in searches}
    with Progress(console=console, transient=True) as progress:
        task = progress.add_task("abstain", total=len(conversation_ids))
        for conversation_id in conversation_ids:
            if conversation_id in done:
                progress.advance(task)
                console.log(f"{conversation_id}: kept from {args.dump}")
                continue
            conversation = by_conversation[conversation_id]
            with scratch_kernel(loaded, embedder, zone.tz) as kernel:
                # every candidate of the top 10 is kept; the threshold is applied when scoring
                kernel.retriever.config = kernel.retriever.config.model_copy(update={"min_similarity": 0.0})
                mapping = ingest(kernel, conversation, zone.tz)
                latest = max(moment(r["session_datetime"], zone.tz) for r in conversation)
                asked = [(q, "own") for q in questions if q["conversation_id"] == conversation_id]
                asked += [(q, "foreign") for q in foreign_sample(questions, conversation_id, args.foreign)]
                asked += [({"question": g, "evidence_turn_ids": []}, "garbage") for g in garbage]
                ask = progress.add_task(f"asking {conversation_id}", total=len(asked))
                for question, kind in asked:
                    now = (
                        moment(question["question_datetime"], zone.tz) if question.get("question_datetime") else latest
                    )
                    hits = _ask(kernel, question["question"], now)
                    gold = set(question["evidence_turn_ids"]) if kind == "own" else set()
                    for hit in hits:
                        hit["gold"] = mapping.get(hit["id"], "") in gold
                    searches.append(
                        {
                            "conversation": conversation_id,
                            "kind": kind,
                            "question": question["question"],
                            "category": question.get("category", ""),
                            "gold": len(gold),
                            "hits": hits,
                        }
                    )
                    progress.advance(ask)
                progress.remove_task(ask)
            progress.advance(task)
            console.log(f"{conversation_id}: {len(asked)} searches")
            if args.dump is not None:  # after each conversation, so that a long run is never all lost
                write_json(args.dump, {"embedder": embedder.name, "searches": searches})
    report = {
        "data": str(data),
        "embedder": embedder.name,
        "threshold": threshold,
        "conversations": {
            c: score([s for s in searches if s["conversation"] == c], threshold) for c in conversation_ids
        },
        "overall": score(searches, threshold),
        "machine": machine(),
    }
    _print(console, report)
    write_json(args.json, report)
    return 0


def foreign_sample(
    questions: list[dict[str, Any]], conversation_id: str, per_conversation: int | None
) -> list[dict[str, Any]]:
    """The other conversations' questions: all of them, or ``per_conversation`` of each (a fixed sample)."""
    by_conversation: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for question in questions:
        if question["conversation_id"] != conversation_id:
            by_conversation[question["conversation_id"]].append(question)
    chosen: list[dict[str, Any]] = []
    for other in sorted(by_conversation):
        pool = by_conversation[other]
        if per_conversation is not None and per_conversation < len(pool):
            pool = random.Random(other).sample(pool, per_conversation)
        chosen.extend(pool)
    return chosen


def score(searches: list[dict[str, Any]], threshold: float) -> dict[str, float]:
    """Abstention (foreign questions, garbage, both) and own recall@10 with and without ``threshold``."""

    def abstains(search: dict[str, Any]) -> bool:
        return not any(h["similarity"] >= threshold for h in search["hits"])

    def recall(search: dict[str, Any], cut: float) -> float:
        found: int = sum(h["gold"] for h in search["hits"] if h["similarity"] >= cut)
        return found / int(search["gold"])

    own = [s for s in searches if s["kind"] == "own"]
    other = [s for s in searches if s["kind"] != "own"]
    foreign = [s for s in other if s["kind"] == "foreign"]
    garbage = [s for s in other if s["kind"] == "garbage"]

    def share(items: list[dict[str, Any]]) -> float:
        return round(sum(abstains(s) for s in items) / len(items), 4) if items else 0.0

    return {
        "own_questions": len(own),
        "recall@10": round(sum(recall(s, 0.0) for s in own) / len(own), 4) if own else 0.0,
        "recall@10_thresholded": round(sum(recall(s, threshold) for s in own) / len(own), 4) if own else 0.0,
        "own_with_no_hit": share(own),
        "abstain_foreign": share(foreign),
        "abstain_garbage": share(garbage),
        "abstain": share(other),
        "foreign_questions": len(foreign),
        "garbage_strings": len(garbage),
    }


def _print(console: Console, report: dict[str, Any]) -> None:
    table = Table(title=f"abstain · {report['data']} · {report['embedder']} · min_similarity {report['threshold']}")
    for column in ("conversation", "abstain", "foreign", "garbage", "recall@10", "thresholded", "own with no hit"):
        table.add_column(column, justify="left" if column == "conversation" else "right")
    for name, row in [*report["conversations"].items(), ("overall", report["overall"])]:
        table.add_row(
            name,
            f"{row['abstain']:.3f}",
            f"{row['abstain_foreign']:.3f}",
            f"{row['abstain_garbage']:.3f}",
            f"{row['recall@10']:.3f}",
            f"{row['recall@10_thresholded']:.3f}",
            f"{row['own_with_no_hit']:.3f}",
        )
    console.print(table)

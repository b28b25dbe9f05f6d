"""``huichat bench loop``: do tool loops end in answers that cite the right memory?

A throw-away store is seeded with facts (Chinese and English), each said in an earlier
session between two unrelated turns; then every question whose answer is one of those
facts goes through ``ChatSession.reply``, as in the app. The model is the scripted server
(``benchmarks/fakellm.py``) in each way models call tools — structured, printed as text in
every form, malformed, repeated, never stopping — or, with ``--base-url``, any real
OpenAI-compatible server. Reported per mode: the share of replies citing a *hit* that holds
the gold turn (among replies whose searches had it in the top 5), the mean tool rounds, and
replies with call markup or an echoed tool result in the answer.
"""

from __future__ import annotations

import argparse
import asyncio
import re
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any

from rich.console import Console
from rich.table import Table

from benchmarks.common import bench_embedder, machine, scratch_kernel, write_json
from benchmarks.fakellm import TEXT_FORMS, FakeLLM, Reply, ToolCall, print_call
from benchmarks.loopdata import ABSENT, FACTS, FILLER, Fact
from benchmarks.loopjudge import Asked, summarise
from huichat.app.cli.doctor import ping_all
from huichat.app.config import ChatConfig, LoadedConfig
from huichat.app.memory_modes import ModeBook
from huichat.app.session import ChatSession, RecallFinished, ReplyCompleted, ReplyFailed, SessionEvent, ToolCalled
from huichat.memory.kernel import MemoryKernel
from huichat.memory.turns import Message, TurnDraft
from huichat.providers.config import ProviderConfig, ProvidersConfig
from huichat.providers.llm import LLMClient

if TYPE_CHECKING:
    from huichat.app.runtime import Zone

SCRIPTED_MODES = ("structured", "unstreamed", *TEXT_FORMS, "observation", "malformed", "repeated", "endless")
"""How the scripted model calls tools; ``unstreamed`` is a server that needs ``tool_choice`` and
cannot stream tool rounds (llama-cpp-python's chatml-function-calling), ``observation`` gets its
results as a ``<tool_response>`` user message."""

_ID = re.compile(r"\[id:([a-z0-9]{6})")
_BAD_CALL = '<tool_call>{"name": "recall_memory", "arguments": {"query": "%s"]}</tool_call>'


def _results(message: dict[str, Any]) -> str:
    content = str(message.get("content") or "")
    return content if message["role"] == "tool" or "<tool_response>" in content else ""


_STOPWORDS = {"the", "what", "which", "who", "how", "does", "did", "you", "your", "and", "for", "with", "now", "are"}


def _bigrams(text: str) -> set[str]:
    """Latin words (no stop words) and Chinese character pairs: what a question shares with its answer."""
    lowered = text.lower()
    words = {w for w in re.findall(r"[a-z0-9]{3,}", lowered) if w not in _STOPWORDS}
    for run in re.findall(r"[\u3400-\u9fff]+", lowered):
        words.update(run[i : i + 2] for i in range(len(run) - 1))
    return words


def best_block(question: str, results: str) -> str | None:
    """The id of the result block whose text shares most with the question (first on ties): the
    judging a model does (retrieval only finds candidates), kept deterministic."""
    wanted = _bigrams(question)
    best, best_score = None, -1
    for block in re.split(r"(?=\[id:[a-z0-9]{6})", results):
        found = _ID.match(block)
        if found is None:
            continue
        text = block.split("\n\n", 2)[-1]
        score = len(wanted & _bigrams(text))
        if score > best_score:
            best, best_score = found.group(1), score
    return best


@dataclass(frozen=True)
class ScriptedModel:
    """A model that searches with the whole question, then cites the result that matches it best."""

    mode: str

    def __call__(self, body: dict[str, Any]) -> Reply:
        messages = body["messages"]
        question = next(m for m in reversed(messages) if m["role"] == "user" and str(m["content"]).startswith("["))
        query = str(question["content"]).split("\n", 1)[-1]
        results = "\n".join(_results(m) for m in messages[messages.index(question) :])
        call = ToolCall("recall_memory", {"query": query})
        tools = bool(body.get("tools"))
        if tools and self.mode == "endless":
            return self._call(call)
        if tools and self.mode == "malformed" and not results:
            return Reply(text=_BAD_CALL % query)
        if tools and self.mode == "repeated" and "(error)" not in results and "already" not in results:
            return self._call(call)
        if tools and not _ID.search(results) and "no matching" not in results:
            return self._call(call)  # nothing yet, or an error to correct
        cited = best_block(query, results)
        if cited is None:
            return Reply(text="我没有找到相关的记忆。(I found no memory of that.)")
        return Reply(text=f"根据记忆 {cited}：这就是你之前告诉我的。(From memory {cited}.)")

    def _call(self, call: ToolCall) -> Reply:
        if self.mode in TEXT_FORMS:
            return Reply(text=print_call(self.mode, [call]), chunk_chars=5)
        if self.mode == "observation":
            return Reply(text=print_call("tool_call", [call]), chunk_chars=5)
        return Reply(tool_calls=[call])


def seed(kernel: MemoryKernel, facts: Sequence[Fact], now: datetime, known: set[str] | None = None) -> list[str]:
    """Each fact in its own earlier session, between two unrelated turns; returns the fact turns'
    ids (and adds every seeded turn's id to ``known``)."""
    gold = []
    for index, fact in enumerate(facts):
        when = now - timedelta(days=index + 1, hours=index % 5)
        session = kernel.new_session(when)
        before, after = FILLER[(2 * index) % len(FILLER)], FILLER[(2 * index + 1) % len(FILLER)]
        drafts = [
            TurnDraft((Message("user", before[0]), Message("assistant", before[1])), when),
            TurnDraft((Message("user", fact.said), Message("assistant", fact.reply)), when + timedelta(minutes=2)),
            TurnDraft((Message("user", after[0]), Message("assistant", after[1])), when + timedelta(minutes=4)),
        ]
        turns = [kernel.append_turn(session, draft) for draft in drafts]
        gold.append(turns[1].id)
        if known is not None:
            known.update(turn.id for turn in turns)
    kernel.maintain(force=True)
    return gold


def _record(asked: Asked, event: SessionEvent) -> None:
    if isinstance(event, ToolCalled):
        asked.calls.append(f"{event.name}{'(repeat)' if event.repeated else ''} {event.arguments}")
    elif isinstance(event, RecallFinished) and event.results is not None:
        hits = [h.turn.id for h in event.results.hits]
        asked.shown_ids.update(r.turn.id for r in event.results)
        asked.gold_in_top5 |= asked.gold in hits[:5]
        asked.gold_as_neighbour |= any(r.turn.id == asked.gold and r.role != "hit" for r in event.results)
    elif isinstance(event, RecallFinished) and event.turn is not None:
        asked.gold_in_top5 |= event.turn.id == asked.gold
        asked.shown_ids.add(event.turn.id)
    elif isinstance(event, ReplyCompleted | ReplyFailed):
        asked.rounds = event.rounds
        if isinstance(event, ReplyCompleted):
            asked.answer = event.text
        else:
            asked.status = "failed"
            asked.answer = event.turn.messages[-1].text if event.turn and len(event.turn.messages) > 1 else ""


async def ask(session: ChatSession, asked: Asked, known: set[str]) -> Asked:
    """One question through the whole reply loop (``known``: every turn id of the store, kept up to date)."""
    started = time.perf_counter()
    async for event in session.reply(asked.question):
        _record(asked, event)
        if isinstance(event, ReplyCompleted | ReplyFailed) and event.turn is not None:
            known.add(event.turn.id)
    asked.seconds = time.perf_counter() - started
    asked.judge(known)
    return asked


def questions(args: argparse.Namespace, gold: list[str]) -> list[tuple[str, str, tuple[str, ...]]]:
    """(question, gold id, keys): the facts' questions, then those whose answer is in no memory."""
    present = [(fact.question, gold_id, fact.keys) for fact, gold_id in zip(FACTS, gold, strict=False)]
    return present + [(question, "", ()) for question in ABSENT[: args.absent]]


async def _run_mode(
    kernel: MemoryKernel, llm: LLMClient, args: argparse.Namespace, zone: Zone, mode: str, seeded: Seeded
) -> list[Asked]:
    now = datetime.now(zone.tz)
    chat = ChatConfig(max_tool_rounds=args.max_rounds, auto_recall=getattr(args, "auto_recall", False))
    rows = []
    book = seeded.book or ModeBook(
        None
    )  # one model through the run: what auto learns carries from question to question
    for question, gold_id, keys in questions(args, seeded.gold):
        session = ChatSession(
            kernel=kernel,
            llm=llm,
            config=chat,
            clock=lambda: now,
            zone=zone,
            context_window=args.context_window,
            modes=book,
        )
        asked = Asked(mode, question, gold_id, keys, memory_mode=session.memory_mode().label())
        await ask(session, asked, seeded.known)
        rows.append(asked)
        if args.verbose:
            Console().print(
                f"[dim]{mode} · {asked.memory_mode}[/] {asked.question} → {asked.calls} → {asked.answer[:120]!r}"
                f" ({asked.rounds} rounds, {asked.seconds:.1f} s, {asked.verdict()})"
            )
    return rows


@dataclass
class Seeded:
    """A seeded store's fact turn ids, every turn id it holds, and the mode book the run starts from."""

    gold: list[str]
    known: set[str] = field(default_factory=set)
    book: ModeBook | None = None
    probed: str = ""
    """What the capability probe said (``--probe``)."""


def _seed(kernel: MemoryKernel, args: argparse.Namespace, zone: Zone) -> Seeded:
    known: set[str] = set()
    gold = seed(kernel, FACTS[: args.questions], datetime.now(zone.tz), known)
    return Seeded(gold, known)


async def _run_scripted(args: argparse.Namespace, loaded: LoadedConfig, zone: Zone, mode: str) -> list[Asked]:
    unstreamed = mode == "unstreamed"
    embedder = bench_embedder(loaded, args.embedder)
    with (
        scratch_kernel(loaded, embedder, zone.tz) as kernel,
        FakeLLM(
            responder=ScriptedModel(mode), needs_tool_choice=unstreamed, stream_tools="fail" if unstreamed else "ok"
        ) as server,
    ):
        seeded = _seed(kernel, args, zone)
        provider = ProviderConfig(
            model="openai/scripted",
            api_base=server.base_url,
            tool_results="observation" if mode == "observation" else "tool",
            memory_mode="tools",  # the scripted model searches in every way models call tools
        )
        llm = LLMClient(ProvidersConfig(named={"scripted": provider}, max_retries=0), env={})
        return await _run_mode(kernel, llm, args, zone, mode, seeded)


async def _run(args: argparse.Namespace, loaded: LoadedConfig, zone: Zone) -> tuple[list[Asked], str]:
    """Every mode on its own fresh store (a reply is stored, and would be found by the next mode);
    with ``--base-url``, the server's replies (after the probe, with ``--probe``) and what the probe said."""
    if not args.base_url:
        return [row for mode in args.modes for row in await _run_scripted(args, loaded, zone, mode)], ""
    with scratch_kernel(loaded, bench_embedder(loaded, args.embedder), zone.tz) as kernel:
        seeded = _seed(kernel, args, zone)
        provider = ProviderConfig(
            model=f"openai/{args.model}",
            api_base=args.base_url,
            timeout=args.timeout,
            tool_results=args.tool_results,
            memory_mode=args.memory_mode,
        )
        providers = ProvidersConfig(named={"server": provider}, max_retries=0)
        seeded.book = ModeBook(None)
        probed = ""
        if args.probe:  # as `huichat doctor --ping` does it: its prompt, its deadline, into the run's book
            [(_, probed)] = await ping_all(providers, seeded.book, ["server"])
        llm = LLMClient(providers, env={})
        return await _run_mode(kernel, llm, args, zone, "server", seeded), probed


_COLUMNS = {
    "replies": "n",
    "gold_in_top5": "gold@5",
    "cite_correct": "cite",
    "right_fact": "right fact",
    "invented": "invented",
    "missed": "said none, was there",
    "absent_honest": "not there: said so",
    "pretended": "not there: pretended",
    "mean_rounds": "rounds",
    "markup": "markup",
    "echoes": "echo",
    "no_answer": "no ans",
    "mean_seconds": "s/reply",
}


def _question_table(rows: list[Asked]) -> Table:
    table = Table(title="question by question")
    for column in ("#", "question", "mode", "calls", "answer", "verdict", "s"):
        table.add_column(column, justify="right" if column in ("#", "s") else "left", overflow="fold")
    for number, row in enumerate(rows, 1):
        answer = " ".join(row.answer.split())
        verdict = row.verdict() + (f" · invented {', '.join(row.invented_ids)}" if row.invented_ids else "")
        table.add_row(
            str(number),
            row.question,
            row.memory_mode,
            str(len(row.calls)),
            answer[:100],
            verdict,
            f"{row.seconds:.1f}",
        )
    return table


def run_loop_bench(args: argparse.Namespace, loaded: LoadedConfig, zone: Zone) -> int:
    """Seed a scratch store, ask every question in every mode, print and save the figures."""
    console = Console()
    if args.absent is None:  # the scripted model cites whatever it is shown: only real models are asked these
        args.absent = len(ABSENT) if args.base_url else 0
    embedder_name = bench_embedder(loaded, args.embedder).name
    rows, probed = asyncio.run(_run(args, loaded, zone))
    modes = list(dict.fromkeys(r.mode for r in rows))
    if args.base_url:
        console.print(_question_table(rows))
    if probed:
        console.print(f"probe: {probed}")
    table = Table(title=f"bench loop · {len(rows)} replies · {embedder_name} · context ±{args.context_window}")
    for column in ("mode", *_COLUMNS.values()):
        table.add_column(column, justify="left" if column == "mode" else "right")
    summaries = {mode: summarise([r for r in rows if r.mode == mode]) for mode in modes}
    summaries["all"] = summarise(rows)
    for mode, figures in summaries.items():
        table.add_row(mode, *(str(figures[key]) for key in _COLUMNS))
    console.print(table)
    write_json(
        args.json,
        {
            "bench": "loop",
            "machine": machine(),
            "embedder": embedder_name,
            "base_url": args.base_url,
            "model": args.model,
            "context_window": args.context_window,
            "max_rounds": args.max_rounds,
            "auto_recall": getattr(args, "auto_recall", False),
            "memory_mode": getattr(args, "memory_mode", "auto") if args.base_url else "tools",
            "probe": probed,
            "summary": summaries,
            "replies": [
                {
                    **asdict(r),
                    "shown_ids": sorted(r.shown_ids),
                    **{name: getattr(r, name) for name in ("cite_correct", "right_fact", "invented", "missed")},
                    **{name: getattr(r, name) for name in ("pretended", "markup", "echo")},
                    "verdict": r.verdict(),
                }
                for r in rows
            ],
        },
    )
    return 0

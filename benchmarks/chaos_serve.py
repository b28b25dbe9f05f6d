"""``huichat serve`` under chaos (part of ``huichat bench chaos``).

- kills: bursts of streamed chats, the server killed (SIGKILL) at a random moment of each;
  every reply a client received whole must be stored once, by id and by content (no turn
  holds the same question and answer twice), none lost;
- hostile: a normal user's chat and search latency, idle and while four clients send 1 MB
  queries and bodies past the limit and sixteen send wrong secrets, each a process of its
  own at ``nice -n 19`` (``benchmarks.chaos_attacker``) (the p95 under
  load must stay within 1.5× of idle; gated at the full budget, reported at CI's, where
  the machine is shared), and every hostile request answered in the OpenAI error shape.
"""

from __future__ import annotations

import json
import os
import random
import signal
import socket
import subprocess
import sys
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from functools import partial
from pathlib import Path
from typing import Any

import httpx

from benchmarks.chaos import ROOT, Budget, Outcome, opened
from benchmarks.common import percentile
from benchmarks.fakellm import FakeLLM, Reply


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _echo(body: dict[str, Any]) -> Reply:
    """The model answers each question with itself, slowly enough to be killed mid-stream."""
    question = str(body["messages"][-1].get("content") or "")
    return Reply(text=f"answer to {question[-40:]}", chunk_chars=4, chunk_delay=0.02)


def _config(root: Path, llm: FakeLLM, port: int) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    path = root / "config.yaml"
    path.write_text(
        f"embedding:\n  model_path: hash\nstorage:\n  data_dir: {root / 'data'}\n  cache_dir: {root / 'cache'}\n"
        "retriever:\n  timezone: UTC\n  min_similarity: 0.0\n"
        f"providers:\n  max_retries: 0\n  named:\n    fake: {{model: openai/fake-model, api_base: '{llm.base_url}', memory_mode: tools}}\n"
        f"chat:\n  titles: local\nserve:\n  port: {port}\n  requests_per_minute: 100000\n",
        encoding="utf-8",
    )
    return path


@contextmanager
def _server(config: Path, port: int, log: Path) -> Iterator[subprocess.Popen[bytes]]:
    """``huichat serve`` as its own process; killed (not stopped) when the block ends."""
    process = subprocess.Popen(
        [sys.executable, "-m", "huichat", "--config", str(config), "serve", "--port", str(port)],
        cwd=ROOT,
        stdout=log.open("ab"),
        stderr=subprocess.STDOUT,
        env={**os.environ, "HF_HUB_OFFLINE": "1", "PYTHONPATH": str(ROOT)},
    )
    try:
        deadline = time.monotonic() + 300
        while time.monotonic() < deadline and process.poll() is None:
            try:
                if httpx.get(f"http://127.0.0.1:{port}/healthz", timeout=2).status_code == 200:
                    break
            except httpx.TransportError:
                time.sleep(0.3)
        else:
            raise RuntimeError(f"huichat serve did not start: {log.read_text(errors='replace')[-500:]}")
        yield process
    finally:
        if process.poll() is None:
            process.send_signal(signal.SIGKILL)
        process.wait(60)


@dataclass
class _Streamed:
    """One streamed chat as its client saw it."""

    question: str
    turn_id: str | None = None
    complete: bool = False


def _stream_chat(url: str, key: str, question: str) -> _Streamed:
    seen = _Streamed(question)
    body = {"model": "fake", "stream": True, "messages": [{"role": "user", "content": question}]}
    try:
        with httpx.stream(
            "POST", f"{url}/v1/chat/completions", json=body, headers={"Authorization": f"Bearer {key}"}, timeout=120
        ) as answer:
            for line in answer.iter_lines():
                if line == "data: [DONE]":
                    seen.complete = seen.turn_id is not None
                elif line.startswith("data: "):
                    extension = json.loads(line[6:]).get("huichat") or {}
                    seen.turn_id = extension.get("turn_id") or seen.turn_id
    except (httpx.TransportError, httpx.HTTPStatusError):
        pass  # the server was killed: this reply is not acknowledged
    return seen


def _collect(into: list[_Streamed], url: str, key: str, question: str) -> None:
    into.append(_stream_chat(url, key, question))


def run_kills(budget: Budget, root: Path) -> Outcome:
    """Bursts of streamed chats, SIGKILL mid-burst, then every acknowledged reply checked."""
    outcome = Outcome("serve", "kills during streamed bursts")
    rng = random.Random(budget.seed)
    with FakeLLM(responder=_echo) as llm:
        port = _free_port()
        config = _config(root, llm, port)
        from huichat.app.users.keys import KeyRing

        _, key = KeyRing(root / "data").create("default", datetime.now(UTC), admin=True)
        streamed: list[_Streamed] = []
        for burst in range(budget.serve_kills):
            with _server(config, port, root / "serve.log"):
                questions = [f"burst {burst} question {i} {rng.randrange(1 << 40):x}" for i in range(8)]
                results: list[_Streamed] = []
                url = f"http://127.0.0.1:{port}"
                threads = [threading.Thread(target=_collect, args=(results, url, key, q)) for q in questions]
                for thread in threads:
                    thread.start()
                time.sleep(rng.uniform(0.5, 6.0))  # early kills cut every reply, later ones only some
            for thread in threads:
                thread.join(120)
            streamed.extend(results)
            outcome.tried += 1
    _audit_serve(config, streamed, outcome)
    return outcome


def _audit_serve(config: Path, streamed: list[_Streamed], outcome: Outcome) -> None:
    """Every acknowledged reply stored once: by id, and by its question's content."""
    acknowledged = [s for s in streamed if s.complete]
    with opened(config) as kernel:
        ids = kernel.store.all_ids()
        outcome.duplicates += kernel.count() - len(ids)
        by_question: Counter[str] = Counter()
        for info in kernel.sessions():
            for turn in kernel.session_turns(info.session_id):
                by_question.update(m.text for m in turn.messages if m.role == "user")
        for seen in acknowledged:
            if seen.turn_id not in ids:
                outcome.lost += 1
                outcome.note(f"acknowledged turn {seen.turn_id} not in the index")
        repeated = {q: n for q, n in by_question.items() if q.startswith("burst ") and n > 1}
        outcome.duplicates += sum(n - 1 for n in repeated.values())
        for question in list(repeated)[:3]:
            outcome.note(f"stored {repeated[question]} times: {question!r}")
    outcome.notes.insert(0, f"{len(acknowledged)} of {len(streamed)} streamed replies acknowledged")


def _timed(action: Callable[[], httpx.Response], outcome: Outcome, wanted: int) -> float:
    started = time.perf_counter()
    answer = action()
    if answer.status_code != wanted:
        outcome.failed += 1
        outcome.note(f"{answer.status_code} {answer.text[:120]}")
    return time.perf_counter() - started


def _normal_latencies(url: str, key: str, requests: int, outcome: Outcome) -> tuple[list[float], list[float]]:
    headers = {"Authorization": f"Bearer {key}"}
    chats: list[float] = []
    searches: list[float] = []
    with httpx.Client(base_url=url, headers=headers, timeout=120) as client:
        for i in range(requests):
            body = {"model": "fake", "messages": [{"role": "user", "content": f"normal question {i} 部署"}]}
            chats.append(_timed(partial(client.post, "/v1/chat/completions", json=body), outcome, 200))
            query = {"query": f"部署 question {i}", "max_results": 5}
            searches.append(_timed(partial(client.post, "/v1/memory/search", json=query), outcome, 200))
    return chats, searches


@contextmanager
def _hostile(url: str, victim_id: str, outcome: Outcome, hostile_key: str) -> Iterator[None]:
    """Four clients of 1 MB queries and oversized bodies, sixteen of wrong secrets, each its own
    process at the lowest priority (``benchmarks.chaos_attacker``: clients from other machines)."""
    environment = {**os.environ, "PYTHONPATH": str(ROOT)}
    command = ["nice", "-n", "19", sys.executable, "-m", "benchmarks.chaos_attacker"]
    attackers = [
        (kind, who)
        for kind, who, count in (("big-queries", hostile_key, 4), ("wrong-secrets", victim_id, 16))
        for _ in range(count)
    ]
    processes = [
        subprocess.Popen([*command, kind, url, who], cwd=ROOT, stdout=subprocess.PIPE, text=True, env=environment)
        for kind, who in attackers
    ]
    try:
        for process in processes:  # every attacker sending before the normal user is timed
            assert process.stdout is not None
            process.stdout.readline()  # "sending" (or nothing: it ended, which is counted below)
        yield
    finally:
        for process in processes:
            process.send_signal(signal.SIGTERM)
        for process in processes:
            out, _ = process.communicate(timeout=300)
            lines = out.strip().splitlines()
            if process.returncode != 0 or not lines:
                outcome.failed += 1
                outcome.note(f"an attacker ended with exit {process.returncode}")
                continue
            tally = json.loads(lines[-1])
            outcome.tried += tally["tried"]
            outcome.failed += tally["failed"]
            for note in tally["notes"]:
                outcome.note(note)


def run_hostile(budget: Budget, root: Path) -> Outcome:
    """The normal user's p95, idle and under hostile load (see the module's docstring)."""
    outcome = Outcome("serve", "hostile bodies and wrong secrets beside a normal user", gate=budget.gate_latency)
    with FakeLLM(responder=lambda body: Reply(text="好的，记下了。", chunk_chars=8)) as llm:
        port = _free_port()
        config = _config(root, llm, port)
        from huichat.app.users.keys import KeyRing

        keys = KeyRing(root / "data")
        _, normal = keys.create("default", datetime.now(UTC), admin=True)
        victim, _ = keys.create("victim", datetime.now(UTC))
        _, hostile_key = keys.create("mallory", datetime.now(UTC))
        url = f"http://127.0.0.1:{port}"
        with _server(config, port, root / "serve.log"):
            _normal_latencies(url, normal, 3, outcome)  # warm: the first search measures its reference
            # idle on both sides of the attack: each chat adds a turn, so searches slow down as
            # the run goes on; the idle reference then covers the index sizes the attack saw
            half = max(1, budget.serve_requests // 2)
            idle_chat, idle_search = _normal_latencies(url, normal, half, outcome)
            with _hostile(url, victim.id, outcome, hostile_key):
                busy_chat, busy_search = _normal_latencies(url, normal, budget.serve_requests, outcome)
            after_chat, after_search = _normal_latencies(url, normal, half, outcome)
            idle_chat, idle_search = idle_chat + after_chat, idle_search + after_search
    ratios = []
    for name, idle, busy in (("chat", idle_chat, busy_chat), ("search", idle_search, busy_search)):
        idle_p95, busy_p95 = percentile(idle, 0.95), percentile(busy, 0.95)
        ratios.append(busy_p95 / max(idle_p95, 1e-6))
        outcome.notes.append(f"{name} p95 idle {idle_p95 * 1000:.0f} ms, under load {busy_p95 * 1000:.0f} ms")
    if max(ratios) > 1.5:
        outcome.over_deadline += 1
        outcome.note(f"p95 under load {max(ratios):.2f}× idle (the bound is 1.5×)")
    return outcome


def _tracebacks(log: Path, outcome: Outcome) -> None:
    """An exception the server logged with its traceback is one that escaped a request."""
    text = log.read_text(errors="replace") if log.exists() else ""
    outcome.uncaught += text.count("Traceback (most recent call last)")
    if "Traceback" in text:
        outcome.note(text[text.index("Traceback") :][:300])


def run_serve(budget: Budget, root: Path) -> list[Outcome]:
    """The serve part: kills during streamed bursts, then hostile load beside a normal user."""
    outcomes = []
    for run, folder in ((run_kills, root / "kills"), (run_hostile, root / "hostile")):
        outcome = run(budget, folder)
        _tracebacks(folder / "serve.log", outcome)
        outcomes.append(outcome)
    return outcomes

"""``huichat bench serve``: a real ``huichat serve`` on loopback under N concurrent streaming clients.

A scratch data folder gets ``--turns`` seeded turns (the owner's memory). The in-process
search figure is taken first, on that store. Then the server runs as its own process with
a scripted OpenAI-compatible model (a small streaming server in this process), and for
each N: N clients stream chats (each chat a turn of user ``bench``) while N/2 clients
search the seeded memory. Reported: requests/s, p50/p95 time to the first SSE byte and to
the first text, p95 search latency (also with the searches alone, no chats), errors, and
turns lost (requests answered vs turns in the transcripts). Every loop is bounded; the
server is stopped at the end.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from datetime import UTC, datetime, timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import TYPE_CHECKING, Any

import httpx
from rich.console import Console
from rich.table import Table

from benchmarks.common import bench_embedder, machine, percentile, write_json
from huichat.app.config import LoadedConfig
from huichat.app.users.keys import KeyRing
from huichat.memory.location import MemoryLocation
from huichat.memory.opening import open_kernel
from huichat.memory.results import SearchRequest
from huichat.memory.turns import Message, TurnDraft

if TYPE_CHECKING:
    from huichat.app.runtime import Zone

WORDS = [
    "部署",
    "模型",
    "记忆",
    "llama.cpp",
    "向量",
    "索引",
    "周末",
    "旅行",
    "猫",
    "咖啡",
    "论文",
    "会议",
    "预算",
    "VPN",
]
REPLY = "好的，这是一个用于基准测试的流式回答，分成若干小块逐个发送。" * 2


class _ScriptedModel(BaseHTTPRequestHandler):
    """Streams the same short answer in small chunks, like a fast local model."""

    protocol_version = "HTTP/1.1"

    def log_message(self, *args: object) -> None:
        pass

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        pieces = [{"role": "assistant", "content": ""}] + [
            {"content": REPLY[i : i + 6]} for i in range(0, len(REPLY), 6)
        ]
        for index, delta in enumerate([*pieces, {}]):
            finish = "stop" if index == len(pieces) else None
            chunk = {"id": "b", "object": "chat.completion.chunk", "created": 0, "model": "bench",
                     "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}  # fmt: skip
            data = f"data: {json.dumps(chunk, ensure_ascii=False)}\n\n".encode()
            self.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
            time.sleep(0.002)
        done = b"data: [DONE]\n\n"
        self.wfile.write(f"{len(done):x}\r\n".encode() + done + b"\r\n0\r\n\r\n")


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _queries(count: int, seed: int = 3) -> list[str]:
    rng = random.Random(seed)
    return [" ".join(rng.sample(WORDS, 2)) for _ in range(count)]


def _seed(loaded: LoadedConfig, zone: Zone, root: Path, turns: int, embedder_choice: str) -> dict[str, float]:
    """Write ``turns`` turns into the owner's store and time searches in this process."""
    embedder = bench_embedder(loaded, embedder_choice)
    kernel = open_kernel(MemoryLocation.under(root), embedder, loaded.config.retriever, zone.tz, now=datetime.now(UTC))
    rng = random.Random(7)
    start = datetime.now(UTC) - timedelta(days=90)
    for first in range(0, turns, 50):
        session = kernel.new_session(start + timedelta(hours=first))
        drafts = [
            TurnDraft(
                (Message("user", " ".join(rng.sample(WORDS, 4))), Message("assistant", " ".join(rng.sample(WORDS, 6)))),
                start + timedelta(hours=first, minutes=i),
            )
            for i in range(min(50, turns - first))
        ]
        kernel.append_turns(session, drafts)
    kernel.maintain(force=True)
    now = datetime.now(UTC)
    timings = []
    for query in _queries(100):
        began = time.perf_counter()
        kernel.search(SearchRequest(query, now))  # counted as accessed, as the API does
        timings.append((time.perf_counter() - began) * 1000)
    kernel.close()
    return {"p50": percentile(timings, 0.5), "p95": percentile(timings, 0.95)}


async def _chat(http: httpx.AsyncClient, index: int, rounds: int, out: dict[str, list[float]]) -> None:
    for turn in range(rounds):
        body = {"model": "bench", "stream": True, "user": "bench",
                "messages": [{"role": "user", "content": f"client {index} question {turn}: {WORDS[turn % len(WORDS)]}"}]}  # fmt: skip
        began = time.perf_counter()
        first_byte = first_text = None
        try:
            async with http.stream("POST", "/v1/chat/completions", json=body) as response:
                if response.status_code != 200:
                    out["errors"].append(float(response.status_code))
                    await response.aread()
                    continue
                done = False
                async for line in response.aiter_lines():
                    now = time.perf_counter()
                    first_byte = first_byte or now
                    if first_text is None and '"content": "' in line and '"content": ""' not in line:
                        first_text = now
                    done = done or line == "data: [DONE]"
                    if line.startswith('data: {"error"'):
                        out["errors"].append(502.0)
            if not done:
                out["errors"].append(0.0)
                continue
        except httpx.HTTPError:
            out["errors"].append(-1.0)
            continue
        out["chats"].append(time.perf_counter() - began)
        out["ttfb"].append(((first_byte or began) - began) * 1000)
        out["ttft"].append(((first_text or began) - began) * 1000)


async def _search(http: httpx.AsyncClient, queries: list[str], out: dict[str, list[float]]) -> None:
    for query in queries:
        began = time.perf_counter()
        try:
            response = await http.post("/v1/memory/search", json={"query": query, "max_results": 5})
        except httpx.HTTPError:
            out["errors"].append(-1.0)
            continue
        if response.status_code != 200:
            out["errors"].append(float(response.status_code))
            continue
        out["search"].append((time.perf_counter() - began) * 1000)


async def _load(url: str, key: str, clients: int, rounds: int, searches: int) -> dict[str, Any]:
    out: dict[str, list[float]] = {"chats": [], "ttfb": [], "ttft": [], "search": [], "errors": []}
    limits = httpx.Limits(max_connections=clients * 2, max_keepalive_connections=clients * 2)
    headers = {"Authorization": f"Bearer {key}"}
    async with httpx.AsyncClient(base_url=url, headers=headers, timeout=120, limits=limits) as http:
        began = time.perf_counter()
        jobs = [_chat(http, i, rounds, out) for i in range(clients)]
        jobs += [_search(http, _queries(searches, seed=i), out) for i in range(max(1, clients // 2))]
        await asyncio.gather(*jobs)
        wall = time.perf_counter() - began
    requests = len(out["chats"]) + len(out["search"]) + len(out["errors"])
    return {
        "clients": clients,
        "chat_requests": clients * rounds,
        "chats_answered": len(out["chats"]),
        "searches": len(out["search"]),
        "requests_per_s": round(requests / wall, 1),
        "ttfb_ms": {"p50": round(percentile(out["ttfb"], 0.5), 1), "p95": round(percentile(out["ttfb"], 0.95), 1)},
        "first_text_ms": {
            "p50": round(percentile(out["ttft"], 0.5), 1),
            "p95": round(percentile(out["ttft"], 0.95), 1),
        },
        "search_ms": {
            "p50": round(percentile(out["search"], 0.5), 1),
            "p95": round(percentile(out["search"], 0.95), 1),
        },
        "errors": len(out["errors"]),
        "wall_s": round(wall, 1),
    }


def _server_config(embedder: str, data_dir: Path, zone: str, model_port: int, port: int) -> str:
    """The served huichat's configuration (values as JSON strings, which YAML reads as they are:
    an empty model path, the configured default model, must stay a string, not become null)."""
    return (
        f"embedding:\n  model_path: {json.dumps(embedder)}\nstorage:\n  data_dir: {json.dumps(str(data_dir))}\n"
        f"retriever:\n  timezone: {json.dumps(zone)}\nproviders:\n  max_retries: 0\n  named:\n"
        f"    bench: {{model: openai/bench, api_base: 'http://127.0.0.1:{model_port}/v1', memory_mode: tools}}\n"
        f"serve:\n  port: {port}\n  requests_per_minute: 1000000\n"
    )


def _stored_turns(sessions: Path) -> int:
    return sum(p.read_text(encoding="utf-8").count("<!-- huichat:turn ") for p in sessions.glob("*/*/chat_*.md"))


def run_serve_bench(args: argparse.Namespace, loaded: LoadedConfig, zone: Zone) -> int:
    """Seed, start the server, drive it at each client count, print one table."""
    console = Console()
    model = ThreadingHTTPServer(("127.0.0.1", 0), _ScriptedModel)
    model.daemon_threads = True
    threading.Thread(target=model.serve_forever, daemon=True).start()
    with tempfile.TemporaryDirectory(prefix="huichat-bench-serve-") as scratch:
        root = Path(scratch)
        console.print(f"seeding {args.turns} turns …")
        in_process = _seed(loaded, zone, root / "data", args.turns, args.embedder)
        port = _free_port()
        config = root / "config.yaml"
        config.write_text(
            _server_config(args.embedder, root / "data", zone.name, model.server_address[1], port), encoding="utf-8"
        )
        key = KeyRing(root / "data").create("default", datetime.now(UTC), admin=True)[1]
        log = (root / "serve.log").open("wb")
        env = {**os.environ, "HF_HUB_OFFLINE": "1"}
        server = subprocess.Popen(
            [sys.executable, "-m", "huichat", "--config", str(config), "serve"], stdout=log, stderr=log, env=env
        )
        url = f"http://127.0.0.1:{port}"
        rows = []
        sequential: dict[str, float] = {}
        try:
            deadline = time.monotonic() + 180
            while time.monotonic() < deadline:
                try:
                    if httpx.get(f"{url}/healthz", timeout=2).status_code == 200:
                        break
                except httpx.TransportError:
                    time.sleep(0.3)
            asyncio.run(_load(url, key, 2, 1, 2))  # warm-up: memory opened, litellm imported
            sequential.update(asyncio.run(_load(url, key, 1, 0, 100))["search_ms"])  # the server's own overhead
            console.print(f"one client searching alone: p50/p95 {sequential['p50']}/{sequential['p95']} ms")
            for clients in args.clients:
                alone = asyncio.run(_load(url, key, clients, 0, args.searches))
                before = _stored_turns(root / "data" / "users" / "bench" / "sessions")
                figures = asyncio.run(_load(url, key, clients, args.rounds, args.searches))
                figures["search_alone_ms"] = alone["search_ms"]
                time.sleep(0.5)
                stored = _stored_turns(root / "data" / "users" / "bench" / "sessions") - before
                figures["turns_lost"] = figures["chats_answered"] - stored
                figures["search_vs_in_process_p95"] = round(
                    figures["search_ms"]["p95"] / max(in_process["p95"], 0.001), 2
                )
                rows.append(figures)
                console.print(figures)
        finally:
            server.send_signal(signal.SIGINT)
            try:
                server.wait(timeout=60)
            except subprocess.TimeoutExpired:
                server.kill()
            log.close()
            model.shutdown()
    table = Table(
        title=f"serve · {args.turns} seeded turns · in-process search p50/p95 {in_process['p50']:.1f}/{in_process['p95']:.1f} ms"
    )
    table.add_column("clients", justify="right")
    for label in (
        "req/s",
        "TTFB p50/p95 ms",
        "first text p50/p95 ms",
        "search p50/p95 ms",
        "search p95 ÷ in-process",
        "search alone p50/p95 ms",
        "errors",
        "turns lost",
    ):
        table.add_column(label, justify="right")
    for r in rows:
        table.add_row(str(r["clients"]), str(r["requests_per_s"]), f"{r['ttfb_ms']['p50']}/{r['ttfb_ms']['p95']}",
                      f"{r['first_text_ms']['p50']}/{r['first_text_ms']['p95']}", f"{r['search_ms']['p50']}/{r['search_ms']['p95']}",
                      f"{r['search_vs_in_process_p95']}×", f"{r['search_alone_ms']['p50']}/{r['search_alone_ms']['p95']}",
                      str(r["errors"]), str(r["turns_lost"]))  # fmt: skip
    console.print(table)
    load = os.getloadavg()[0]
    console.print(f"load average during the run: {load:.1f} on {os.cpu_count()} cores")
    summary = {"in_process_search_ms": in_process, "one_client_search_ms": sequential}
    write_json(args.json, {"machine": machine(), "load_average": load, **summary, "runs": rows})
    return 0 if all(r["errors"] == 0 and r["turns_lost"] == 0 for r in rows) else 1

"""The load of ``huichat bench serve``: a scripted streaming model, and clients that chat and search.

The model streams the same short answer in small chunks (a fast local model); each chatting
client streams ``rounds`` chats as user ``bench`` (each a stored turn), each searching client
runs its searches on the seeded memory. Clients are dealt out across the replicas' URLs.
"""

from __future__ import annotations

import asyncio
import json
import random
import time
from contextlib import AsyncExitStack
from http.server import BaseHTTPRequestHandler
from typing import Any

import httpx

from benchmarks.common import percentile

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


class ScriptedModel(BaseHTTPRequestHandler):
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


def queries(count: int, seed: int = 3) -> list[str]:
    rng = random.Random(seed)
    return [" ".join(rng.sample(WORDS, 2)) for _ in range(count)]


async def chat(http: httpx.AsyncClient, index: int, rounds: int, out: dict[str, list[float]]) -> None:
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


async def search(http: httpx.AsyncClient, asked: list[str], out: dict[str, list[float]]) -> None:
    for query in asked:
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


async def load(urls: list[str], key: str, clients: int, rounds: int, searches: int) -> dict[str, Any]:
    """``clients`` chatting clients and half as many searching, dealt out across the replicas at ``urls``
    (every replica gets chats of the same user ``bench``)."""
    out: dict[str, list[float]] = {"chats": [], "ttfb": [], "ttft": [], "search": [], "errors": []}
    limits = httpx.Limits(max_connections=clients * 2, max_keepalive_connections=clients * 2)
    headers = {"Authorization": f"Bearer {key}"}
    async with AsyncExitStack() as stack:
        https = [
            await stack.enter_async_context(httpx.AsyncClient(base_url=u, headers=headers, timeout=120, limits=limits))
            for u in urls
        ]
        began = time.perf_counter()
        jobs = [chat(https[i % len(https)], i, rounds, out) for i in range(clients)]
        jobs += [search(https[i % len(https)], queries(searches, seed=i), out) for i in range(max(1, clients // 2))]
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

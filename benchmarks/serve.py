"""``huichat bench serve``: a real ``huichat serve`` on loopback under N concurrent streaming clients.

A scratch data folder gets ``--turns`` seeded turns (the owner's memory). The in-process
search figure is taken first, on that store. Then the server runs as its own process with
a scripted OpenAI-compatible model (a small streaming server in this process), and for
each N: N clients stream chats (each chat a turn of user ``bench``) while N/2 clients
search the seeded memory. Reported: requests/s, p50/p95 time to the first SSE byte and to
the first text, p95 search latency (also with the searches alone, no chats), errors, and
turns lost (requests answered vs turns in the transcripts). Every loop is bounded; the
server is stopped at the end.

``--replicas 1,2,3`` runs that many servers over the same data, the clients dealt out across
them (user ``bench`` chats through every replica). ``--storage`` puts the index and the API keys
on object storage — moto's S3 server in its own process (``benchmarks.counted_s3``), which
counts every request — and records the store's round trips per HTTP request: under the load,
and for one client alone (a search, a chat: what lies on a request's path). Loopback answers in
well under a millisecond; a real S3 round trip takes tens, which the arithmetic in
BENCHMARKS.md "Service" applies to these counts.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
from http.server import ThreadingHTTPServer
from pathlib import Path
from typing import TYPE_CHECKING, Any

import httpx
from rich.console import Console
from rich.table import Table

from benchmarks.common import bench_embedder, machine, percentile, write_json
from benchmarks.counted_s3 import CountedS3, free_port
from benchmarks.serve_load import WORDS, ScriptedModel, load, queries
from huichat.app.config import LoadedConfig
from huichat.app.users.keys import KeyRing
from huichat.memory.location import MemoryLocation
from huichat.memory.objectstore import ObjectStore
from huichat.memory.opening import open_kernel
from huichat.memory.results import SearchRequest
from huichat.memory.turns import Message, TurnDraft

if TYPE_CHECKING:
    from huichat.app.runtime import Zone

OWNER = "default"
"""The servers' owner (``serve.owner``): the seeded memory the searches read."""


def _seed(
    loaded: LoadedConfig, zone: Zone, location: MemoryLocation, turns: int, embedder_choice: str
) -> dict[str, float]:
    """Write ``turns`` turns into the owner's store and time searches in this process."""
    embedder = bench_embedder(loaded, embedder_choice)
    kernel = open_kernel(location, embedder, loaded.config.retriever, zone.tz, now=datetime.now(UTC))
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
    for query in queries(100):
        began = time.perf_counter()
        kernel.search(SearchRequest(query, now))  # counted as accessed, as the API does
        timings.append((time.perf_counter() - began) * 1000)
    kernel.close()
    return {"p50": percentile(timings, 0.5), "p95": percentile(timings, 0.95)}


def _server_config(
    embedder: str, data_dir: Path, zone: str, model_port: int, port: int, s3: CountedS3 | None = None
) -> str:
    """The served huichat's configuration (values as JSON strings, which YAML reads as they are:
    an empty model path, the configured default model, must stay a string, not become null)."""
    storage = f"storage:\n  data_dir: {json.dumps(str(data_dir))}\n"
    if s3 is not None:
        storage += f"  uri: {json.dumps(s3.uri)}\n  options: {json.dumps(s3.options)}\n"
    return (
        f"embedding:\n  model_path: {json.dumps(embedder)}\n{storage}"
        f"retriever:\n  timezone: {json.dumps(zone)}\nproviders:\n  max_retries: 0\n  named:\n"
        f"    bench: {{model: openai/bench, api_base: 'http://127.0.0.1:{model_port}/v1', memory_mode: tools}}\n"
        f"serve:\n  port: {port}\n  requests_per_minute: 1000000\n"
    )


def _where(user: str, root: Path, s3: CountedS3 | None) -> MemoryLocation:
    """``user``'s memory as the servers keep it: under the data folder, or (``--storage``) in the
    store at ``<uri>/users/<user>/`` with a working copy of its transcripts under ``root``."""
    if s3 is None:
        return (
            MemoryLocation.under(root / "data") if user == OWNER else MemoryLocation.under(root / "data/users" / user)
        )
    shared, local = f"{s3.uri}/users/{user}", root / "bench-copy" / user
    return MemoryLocation(local, local / "sessions", f"{shared}/index.lancedb", s3.options, f"{shared}/sessions")


def _stored_turns(root: Path, s3: CountedS3 | None, loaded: LoadedConfig, zone: Zone, embedder: str) -> int:
    """The turns of user ``bench`` in its index (every replica's, read at the newest version)."""
    kernel = open_kernel(
        _where("bench", root, s3), bench_embedder(loaded, embedder), loaded.config.retriever, zone.tz,
        now=datetime.now(UTC), reconcile=False,
    )  # fmt: skip
    try:
        return kernel.count()
    finally:
        kernel.close()


@contextmanager
def _replicas(count: int, root: Path, args: argparse.Namespace, zone: Zone, model_port: int, s3: CountedS3 | None
              ) -> Iterator[list[str]]:  # fmt: skip
    """``count`` ``huichat serve`` processes over the same data folder (and object store); their URLs."""
    servers: list[subprocess.Popen[bytes]] = []
    urls = []
    env = {**os.environ, "HF_HUB_OFFLINE": "1"}
    try:
        for replica in range(count):
            port = free_port()
            config = root / f"config-{replica}.yaml"
            data = root / ("data" if s3 is None else f"replica-{replica}")  # replicas on S3: their own copies
            config.write_text(_server_config(args.embedder, data, zone.name, model_port, port, s3), encoding="utf-8")
            log = (root / f"serve-{replica}.log").open("ab")
            command = [sys.executable, "-m", "huichat", "--config", str(config), "serve"]
            servers.append(subprocess.Popen(command, stdout=log, stderr=log, env=env))
            urls.append(f"http://127.0.0.1:{port}")
        for url in urls:
            deadline = time.monotonic() + 180
            while time.monotonic() < deadline:
                try:
                    if httpx.get(f"{url}/healthz", timeout=2).status_code == 200:
                        break
                except httpx.TransportError:
                    time.sleep(0.3)
        yield urls
    finally:
        for server in servers:
            server.send_signal(signal.SIGINT)
        for server in servers:
            try:
                server.wait(timeout=60)
            except subprocess.TimeoutExpired:
                server.kill()


def _counted(
    s3: CountedS3 | None, urls: list[str], key: str, clients: int, rounds: int, searches: int
) -> dict[str, Any]:
    """``_load``'s figures, with the object-store requests it caused per HTTP request (with one client:
    those on each request's path, background work included)."""
    before = s3.counts() if s3 is not None else Counter[str]()
    figures = asyncio.run(load(urls, key, clients, rounds, searches))
    requests = clients * rounds + max(1, clients // 2) * searches
    if s3 is not None:
        counted = s3.counts() - before
        figures["store_requests"] = dict(counted)
        figures["round_trips_per_request"] = round(sum(counted.values()) / max(requests, 1), 1)
    return figures


def _drive(urls: list[str], key: str, root: Path, args: argparse.Namespace, in_process: dict[str, float],
           s3: CountedS3 | None, loaded: LoadedConfig, zone: Zone, console: Console) -> list[dict[str, Any]]:  # fmt: skip
    """The warm-up, the one-client probes, then each client count, against the replicas at ``urls``."""
    asyncio.run(load(urls, key, 2 * len(urls), 1, 2))  # warm-up: memory opened, litellm imported on each
    probes = {
        "search": _counted(s3, urls[:1], key, 1, 0, 50),
        "chat": _counted(s3, urls[:1], key, 1, 10, 0),
    }
    console.print(f"{len(urls)} replicas · one client alone: {probes}")
    rows = []
    for clients in args.clients:
        alone = asyncio.run(load(urls, key, clients, 0, args.searches))
        before = _stored_turns(root, s3, loaded, zone, args.embedder)
        figures = _counted(s3, urls, key, clients, args.rounds, args.searches)
        figures |= {"replicas": len(urls), "search_alone_ms": alone["search_ms"], "one_client": probes}
        time.sleep(0.5)
        figures["turns_lost"] = figures["chats_answered"] - (
            _stored_turns(root, s3, loaded, zone, args.embedder) - before
        )
        figures["search_vs_in_process_p95"] = round(figures["search_ms"]["p95"] / max(in_process["p95"], 0.001), 2)
        rows.append(figures)
        console.print(figures)
    return rows


def run_serve_bench(args: argparse.Namespace, loaded: LoadedConfig, zone: Zone) -> int:
    """Seed, then for each replica count start the servers, drive them at each client count; print one table."""
    console = Console()
    model = ThreadingHTTPServer(("127.0.0.1", 0), ScriptedModel)
    model.daemon_threads = True
    threading.Thread(target=model.serve_forever, daemon=True).start()
    s3 = CountedS3.start(free_port()) if args.storage else None
    rows: list[dict[str, Any]] = []
    try:
        with tempfile.TemporaryDirectory(prefix="huichat-bench-serve-") as scratch:
            root = Path(scratch)
            location = _where(OWNER, root, s3)
            console.print(f"seeding {args.turns} turns …")
            in_process = _seed(loaded, zone, location, args.turns, args.embedder)
            keys = KeyRing(location.data_dir, ObjectStore(s3.uri, s3.options) if s3 is not None else None)
            key = keys.create("default", datetime.now(UTC), admin=True)[1]
            for count in args.replicas:
                with _replicas(count, root, args, zone, model.server_address[1], s3) as urls:
                    rows += _drive(urls, key, root, args, in_process, s3, loaded, zone, console)
    finally:
        model.shutdown()
        if s3 is not None:
            s3.stop()
    _print(console, rows, args, in_process)
    load = os.getloadavg()[0]
    console.print(f"load average during the run: {load:.1f} on {os.cpu_count()} cores")
    summary = {"in_process_search_ms": in_process, "storage": "s3 (moto)" if s3 is not None else "local folder"}
    write_json(args.json, {"machine": machine(), "load_average": load, **summary, "runs": rows})
    return 0 if all(r["errors"] == 0 and r["turns_lost"] == 0 for r in rows) else 1


def _print(
    console: Console, rows: list[dict[str, Any]], args: argparse.Namespace, in_process: dict[str, float]
) -> None:
    table = Table(
        title=f"serve · {args.turns} seeded turns · {'object storage (moto S3)' if args.storage else 'local folder'} "
        f"· in-process search p50/p95 {in_process['p50']:.1f}/{in_process['p95']:.1f} ms"
    )
    labels = ("replicas", "clients", "req/s", "TTFB p50/p95 ms", "first text p50/p95 ms", "search p50/p95 ms",
              "search alone p50/p95 ms", "store trips/req", "alone: trips/search, /chat", "errors", "turns lost")  # fmt: skip
    for label in labels:
        table.add_column(label, justify="right")
    for r in rows:
        alone = r["one_client"]
        trips = f"{alone['search'].get('round_trips_per_request', '-')}, {alone['chat'].get('round_trips_per_request', '-')}"
        table.add_row(str(r["replicas"]), str(r["clients"]), str(r["requests_per_s"]),
                      f"{r['ttfb_ms']['p50']}/{r['ttfb_ms']['p95']}", f"{r['first_text_ms']['p50']}/{r['first_text_ms']['p95']}",
                      f"{r['search_ms']['p50']}/{r['search_ms']['p95']}", f"{r['search_alone_ms']['p50']}/{r['search_alone_ms']['p95']}",
                      str(r.get("round_trips_per_request", "-")), trips, str(r["errors"]), str(r["turns_lost"]))  # fmt: skip
    console.print(table)

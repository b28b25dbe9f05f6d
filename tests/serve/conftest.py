"""A real ``huichat serve`` process on loopback, shared by the service tests, and its fake model."""

from __future__ import annotations

import os
import re
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx
import pytest

from benchmarks.fakellm import FakeLLM, Reply, ToolCall
from huichat.app.users.keys import KeyRing

ROOT = Path(__file__).resolve().parents[2]
RATE_LIMIT = 40


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def model(body: dict[str, Any]) -> Reply:
    """A tool-using fake model: 'remember …' questions search memory first, then cite what was found."""
    last = body["messages"][-1]
    if last["role"] == "tool":
        ids = re.findall(r"\[id:([a-z0-9]{6})", last["content"])
        return Reply(text=f"记得：{ids[0] if ids else 'nothing'}")
    # the question without the time note that starts the newest user message
    question = re.sub(r"^\[[^\]\n]*\]\n", "", str(last.get("content") or ""))
    if question.startswith("remember"):
        return Reply(tool_calls=[ToolCall("recall_memory", {"query": question.removeprefix("remember"), "top_k": 3})])
    if question.startswith("slow"):
        return Reply(text="一二三四五六七八九十" * 3, chunk_chars=1, chunk_delay=0.05)
    return Reply(text=f"收到：{question}", chunk_chars=3)


@dataclass
class Server:
    """The running server: its address, data folder, key ring and the fake model behind it."""

    url: str
    data_dir: Path
    config: Path
    keys: KeyRing
    llm: FakeLLM
    log: Path

    def key(self, user: str, *, admin: bool = False) -> str:
        """A fresh key for ``user``."""
        return self.keys.create(user, datetime.now(UTC), admin=admin)[1]

    def client(self, key: str | None) -> httpx.Client:
        """An HTTP client for the API, with ``key`` as its bearer token."""
        headers = {"Authorization": f"Bearer {key}"} if key else {}
        return httpx.Client(base_url=self.url, headers=headers, timeout=60)


def start_server(
    config: Path, port: int, log: Path, module: str = "huichat", env: dict[str, str] | None = None
) -> subprocess.Popen[bytes]:
    """``huichat --config CONFIG serve --port PORT`` from this checkout (``module``: what runs it
    instead, e.g. one that stubs the model); waits until it answers."""
    env = {**os.environ, "PYTHONPATH": str(ROOT), "HF_HUB_OFFLINE": "1", **(env or {})}
    process = subprocess.Popen(
        [sys.executable, "-m", module, "--config", str(config), "serve", "--port", str(port)],
        stdout=log.open("wb"),
        stderr=subprocess.STDOUT,
        env=env,
        cwd=ROOT,
    )
    deadline = time.monotonic() + 300  # a loaded machine starts it slowly
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise AssertionError(f"huichat serve exited early:\n{log.read_text(errors='replace')}")
        try:
            if httpx.get(f"http://127.0.0.1:{port}/healthz", timeout=2).status_code == 200:
                return process
        except httpx.TransportError:
            time.sleep(0.3)
    process.kill()
    raise AssertionError(f"huichat serve did not start:\n{log.read_text(errors='replace')}")


def stop_server(process: subprocess.Popen[bytes]) -> None:
    """Stop like Ctrl-C does (replies in flight finish), then make sure it is gone."""
    process.send_signal(signal.SIGINT)
    try:
        process.wait(timeout=30)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait(timeout=10)


def write_config(folder: Path, llm: FakeLLM, port: int, retriever: str = "", **serve: Any) -> Path:
    """A config with the hash embedder, data under ``folder`` and the fake model as providers ``fake`` and ``other``
    (``retriever``: more lines of that section); queries and messages are short enough to pass the body limit."""
    settings = {"port": port, "requests_per_minute": RATE_LIMIT, "max_body_bytes": 4096, "memory_retry_seconds": 1.0}
    settings.update(serve)
    lines = "".join(f"  {k}: {v if not isinstance(v, bool) else str(v).lower()}\n" for k, v in settings.items())
    config = folder / "config.yaml"
    config.write_text(
        f"embedding:\n  model_path: hash\nstorage:\n  data_dir: {folder / 'data'}\n"
        f"retriever:\n  timezone: Asia/Shanghai\n  min_similarity: 0.0\n  max_query_chars: 100\n{retriever}"
        "chat:\n  max_message_chars: 1000\n"
        f"providers:\n  max_retries: 0\n  named:\n    fake: {{model: openai/fake-model, api_base: '{llm.base_url}', memory_mode: tools}}\n"
        f"    other: {{model: openai/other-model, api_base: '{llm.base_url}', memory_mode: tools}}\n"
        f"serve:\n{lines}",
        encoding="utf-8",
    )
    return config


@pytest.fixture(scope="session")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    folder = tmp_path_factory.mktemp("serve")
    with FakeLLM(responder=model) as llm:
        port = free_port()
        config = write_config(folder, llm, port)
        keys = KeyRing(folder / "data")
        keys.create("default", datetime.now(UTC), admin=True)
        log = folder / "serve.log"
        process = start_server(config, port, log)
        try:
            yield Server(f"http://127.0.0.1:{port}", folder / "data", config, keys, llm, log)
        finally:
            stop_server(process)

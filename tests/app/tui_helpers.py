"""Building the real app for Pilot and snapshot tests: hash-embedder kernel, fake LLM, fixed clock."""

from __future__ import annotations

import dataclasses
import html
import itertools
import re
from collections.abc import Callable
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from benchmarks.fakellm import FakeLLM, Reply, ToolCall
from huichat.app.config import AppConfig, LoadedConfig, resolve_paths
from huichat.app.runtime import Runtime, Zone
from huichat.app.tui.app import HuichatApp
from huichat.app.tui.widgets.chat_message import ChatMessage
from huichat.memory.config import RetrieverConfig
from huichat.memory.embedding import HashEmbedder
from huichat.memory.kernel import MemoryKernel
from huichat.memory.location import MemoryLocation
from huichat.memory.opening import open_kernel
from huichat.memory.turns import Message, TurnDraft
from huichat.providers.llm import LLMClient
from tests.conftest import NOW, ZONE

CONFIG_FILE = Path("/home/you/.config/huichat/config.yaml")
COUNTED = re.compile(r"memory: [\d,]+ turns? ")
"""The status line once memory is loaded and counted ("memory: 1 turn · …", "memory: 1,204 turns · …")."""


def counter_ids() -> Callable[[], str]:
    """Deterministic 6-character ids: aaa001, aaa002, …"""
    numbers = itertools.count(1)
    return lambda: f"t{next(numbers):05d}"


def deterministic_kernel(root: Path, min_similarity: float = 0.0) -> MemoryKernel:
    # the threshold is calibrated for real models: the hash embedder's cosines mean nothing to it
    config = RetrieverConfig(timezone="Asia/Shanghai", min_similarity=min_similarity)
    return open_kernel(
        MemoryLocation.under(root), HashEmbedder(64), config, ZONE, now=NOW, id_source=counter_ids(),
    )  # fmt: skip


def seed_memory(kernel: MemoryKernel) -> list[str]:
    """Last Wednesday's session about local model deployment, and an older one about a VPN."""
    wednesday = datetime(2026, 11, 18, 14, 30, tzinfo=ZONE)
    older = kernel.new_session(wednesday - timedelta(days=20))
    kernel.append_turn(
        older,
        TurnDraft(
            (Message("user", "VPN 晚上总是断"), Message("assistant", "把 WireGuard keepalive 设成 25 秒。")),
            wednesday - timedelta(days=20),
            "VPN",
        ),
    )
    session = kernel.new_session(wednesday)
    ids = []
    for i, (user, assistant) in enumerate(
        [
            ("我们讨论一下本地模型部署的问题", "可以用 llama.cpp 部署 4-bit 量化模型。"),
            ("显存只有 8G 够吗", "7B 模型量化后大约要 5G 显存，够用。"),
            ("那推理速度呢", "在你的显卡上大约每秒二十个 token。"),
        ]
    ):
        ids.append(
            kernel.append_turn(
                session,
                TurnDraft(
                    (Message("user", user), Message("assistant", assistant)),
                    wednesday + timedelta(minutes=5 * i),
                    "本地模型部署",
                ),
            ).id
        )
    kernel.maintain(force=True)
    return ids


def loaded_config(providers: dict[str, dict[str, Any]] | None = None, **sections: Any) -> LoadedConfig:
    # a steady cursor: a frame must not depend on the moment it is taken
    data: dict[str, Any] = {
        "retriever": {"timezone": "Asia/Shanghai"},
        # a test that wants the last session continued at start-up says so
        "ui": {"theme": "textual-dark", "cursor_blink": False, "on_start": "new"},
        # a test that wants the daily jobs or the transcript watcher says so (they run on their own time)
        "lifecycle": {"enabled": False, "importance": {"enabled": False}},
        "consolidation": {"enabled": False},
        "sync": {"watch": False},
        # scripted servers answer requests in order: a test that wants the model's titles says so
        "chat": {"titles": "local"},
    }
    if providers is not None:
        data["providers"] = {"named": providers}
    data.update(sections)
    config = AppConfig.model_validate(data)
    return LoadedConfig(config, (CONFIG_FILE,), resolve_paths(config, CONFIG_FILE, {"HOME": "/home/you"}))


def build_app(
    root: Path,
    loaded: LoadedConfig,
    *,
    kernel: MemoryKernel | None = None,
    kernel_factory: Callable[[], MemoryKernel] | None = None,
    start_session: str | None = None,
) -> HuichatApp:
    made = kernel or deterministic_kernel(root)
    clock_state = {"now": NOW}
    # what the app keeps beside memory (prompt history, theme, last session) stays in the test's folder
    loaded = dataclasses.replace(loaded, paths=dataclasses.replace(loaded.paths, data_dir=root))

    def clock() -> datetime:
        clock_state["now"] += timedelta(seconds=30)
        return clock_state["now"]

    def open_any_kernel(*_: Any, **__: Any) -> MemoryKernel:
        return kernel_factory() if kernel_factory else made

    runtime = Runtime(
        loaded,
        Zone(ZONE, "Asia/Shanghai"),
        open_kernel=open_any_kernel,
        open_embedder=lambda: made.embedder,
        open_llm=lambda: LLMClient(loaded.config.providers, env={}),
        open_catalogue=lambda: made.catalogue,
        clock=clock,
    )
    return HuichatApp(runtime, start_session=start_session)


def fake_providers(*servers: FakeLLM) -> dict[str, dict[str, Any]]:
    names = ["local", "backup"]
    return {
        names[i]: {"model": f"openai/model-{names[i]}", "api_base": s.base_url, "memory_mode": "tools"}
        for i, s in enumerate(servers)
    }


def memory_model(body: dict[str, Any]) -> Reply:
    """A tool-using fake model: it recalls first, then answers quoting the first hit's id."""
    last = body["messages"][-1]
    if last["role"] == "tool":
        found = re.findall(r"\[id:([a-z0-9]{6})", last["content"])
        return Reply(text=f"上周三我们聊过：用 **llama.cpp** 部署（见 {found[0] if found else '—'}）。", chunk_chars=2)
    return Reply(tool_calls=[ToolCall("recall_memory", {"query": "上周三下午 显存", "top_k": 1})])


async def wait_until(pilot: Any, condition: Callable[[], bool], seconds: float = 30.0) -> None:
    """Let the app run until ``condition`` holds (a worker finished, a widget appeared)."""
    for _ in range(int(seconds / 0.05)):
        if condition():
            await pilot.pause()
            return
        await pilot.pause(0.05)
    raise AssertionError("the app never reached the expected state")


async def ready(pilot: Any) -> None:
    """Wait for memory and the LLM client to load and the status line to settle."""
    app = pilot.app
    await wait_until(
        pilot, lambda: app.gateway_started and app.gateway.memory.settled and app.gateway.llm_client.settled
    )
    await wait_until(
        pilot,
        lambda: (
            COUNTED.search(app.chat_screen.memory_status) is not None or "unavailable" in app.chat_screen.memory_status
        ),
    )


def said(app: Any) -> list[ChatMessage]:
    """The conversation on screen: the user's and the assistant's messages (not huichat's own notes)."""
    return [m for m in app.chat_screen.query(ChatMessage) if m.role != "system"]


def screen_text(app: HuichatApp) -> str:
    """What the terminal shows: the screenshot's text, its non-breaking spaces as spaces."""
    return html.unescape(re.sub(r"<[^>]+>", "", app.export_screenshot())).replace("\xa0", " ")

"""SVG snapshots of each screen state (pytest-textual-snapshot). Update with --snapshot-update."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from benchmarks.fakellm import FakeLLM, Reply
from huichat.app.tui.screens.search import SearchScreen
from huichat.app.tui.screens.turn_detail import TurnDetailScreen
from huichat.app.tui.widgets.memory_panel import MemoryPanel
from tests.app.tui_helpers import (
    build_app,
    deterministic_kernel,
    fake_providers,
    loaded_config,
    memory_model,
    ready,
    said,
    seed_memory,
    wait_until,
)

SIZE = (120, 34)


async def steady(pilot: Any) -> None:
    """Let the last frame settle (the apps here are built with ``ui.cursor_blink: false``)."""
    await pilot.pause(0.2)


@pytest.fixture
def server() -> Any:
    with FakeLLM() as fake:
        yield fake


async def _reply_done(pilot: Any, text: str, messages: int) -> None:
    app = pilot.app
    await ready(pilot)
    await pilot.press(*text)
    await pilot.press("enter")
    await wait_until(pilot, lambda: not app.chat_screen.replying and len(said(app)) == messages)
    await pilot.pause(0.3)


async def _ready(pilot: Any) -> None:
    await ready(pilot)
    await steady(pilot)


def test_empty_chat(snap_compare: Any, tmp_path: Path, server: FakeLLM) -> None:
    app = build_app(tmp_path, loaded_config(fake_providers(server)))
    assert snap_compare(app, terminal_size=SIZE, run_before=_ready)


def test_streamed_reply(snap_compare: Any, tmp_path: Path, server: FakeLLM) -> None:
    server.push(
        Reply(
            text="部署可以用 **llama.cpp**：\n\n```bash\n./llama-server -m qwen2.5-7b-q4.gguf --port 8080\n```\n\n然后在配置里把 `api_base` 指向它。",
            chunk_chars=3,
        )
    )
    app = build_app(tmp_path, loaded_config(fake_providers(server)))

    async def run_before(pilot: Any) -> None:
        await _reply_done(pilot, "本地模型怎么部署？", 2)

    assert snap_compare(app, terminal_size=SIZE, run_before=run_before)


def _remembering_app(tmp_path: Path, server: FakeLLM) -> Any:
    """The app over last Wednesday's memory, with a model that recalls before it answers."""
    kernel = deterministic_kernel(tmp_path)
    seed_memory(kernel)
    server.responder = memory_model
    return build_app(tmp_path, loaded_config(fake_providers(server)), kernel=kernel)


def test_memory_panel_with_hits_and_neighbours(snap_compare: Any, tmp_path: Path, server: FakeLLM) -> None:
    app = _remembering_app(tmp_path, server)

    async def run_before(pilot: Any) -> None:
        await _reply_done(pilot, "上周三我们用什么部署的？", 2)
        assert pilot.app.chat_screen.query_one(MemoryPanel).hits

    assert snap_compare(app, terminal_size=SIZE, run_before=run_before)


def test_turn_detail_view(snap_compare: Any, tmp_path: Path, server: FakeLLM) -> None:
    app = _remembering_app(tmp_path, server)

    async def run_before(pilot: Any) -> None:
        await _reply_done(pilot, "上周三我们用什么部署的？", 2)
        await pilot.press("f2", "enter")  # into the panel, open the hit
        await wait_until(pilot, lambda: isinstance(pilot.app.screen, TurnDetailScreen))
        await steady(pilot)

    assert snap_compare(app, terminal_size=SIZE, run_before=run_before)


def test_search_screen(snap_compare: Any, tmp_path: Path) -> None:
    kernel = deterministic_kernel(tmp_path)
    seed_memory(kernel)
    app = build_app(tmp_path, loaded_config(), kernel=kernel)

    async def run_before(pilot: Any) -> None:
        await ready(pilot)
        await pilot.press("ctrl+f")
        await wait_until(pilot, lambda: isinstance(pilot.app.screen, SearchScreen))
        await pilot.press(*"上周三下午 显存")
        await pilot.press("enter")
        await wait_until(pilot, lambda: bool(pilot.app.screen.query_one(MemoryPanel).hits))
        await steady(pilot)

    assert snap_compare(app, terminal_size=SIZE, run_before=run_before)


def test_no_provider_state(snap_compare: Any, tmp_path: Path) -> None:
    app = build_app(tmp_path, loaded_config())
    assert snap_compare(app, terminal_size=SIZE, run_before=_ready)


def test_error_notification(snap_compare: Any, tmp_path: Path, server: FakeLLM) -> None:
    server.push(Reply(status=401, error_message="Incorrect API key"))
    app = build_app(tmp_path, loaded_config(fake_providers(server)))

    async def run_before(pilot: Any) -> None:
        await _reply_done(pilot, "你好", 2)

    assert snap_compare(app, terminal_size=SIZE, run_before=run_before)

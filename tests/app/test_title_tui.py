"""The session's title in the real app (Pilot): status line, sessions list, memory panel."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from rich.text import Text
from textual.widgets import Input, Label

from benchmarks.fakellm import FakeLLM, Reply, ToolCall
from huichat.app.tui.screens.ask_path import AskPathScreen
from huichat.app.tui.screens.sessions import SessionsScreen
from tests.app.test_titles import is_title_request
from tests.app.tui_helpers import (
    build_app,
    deterministic_kernel,
    fake_providers,
    loaded_config,
    ready,
    said,
    seed_memory,
    wait_until,
)


def _model(body: dict[str, Any]) -> Reply:
    """Titles every session "VPN 夜间断线"; recalls when asked to remember, else answers plainly."""
    last = body["messages"][-1]
    if is_title_request(body):
        return Reply(text="VPN 夜间断线")
    if last["role"] == "tool":
        return Reply(text="记得：把 keepalive 设成 25 秒。")
    if "还记得" in str(last["content"]):
        return Reply(tool_calls=[ToolCall("recall_memory", {"query": "VPN 断 keepalive", "top_k": 1})])
    return Reply(text="把 WireGuard keepalive 设成 25 秒。")


async def test_the_title_shows_in_the_status_line_the_sessions_list_and_the_memory_panel(
    tmp_path: Path, fake_llm: FakeLLM
) -> None:
    fake_llm.responder = _model
    app = build_app(tmp_path, loaded_config(fake_providers(fake_llm), chat={"titles": "model"}))
    async with app.run_test(size=(120, 36)) as pilot:
        await ready(pilot)
        chat = app.chat_screen
        await pilot.press(*"我的 VPN 晚上总断")
        await pilot.press("enter")
        await wait_until(pilot, lambda: chat.session_status.startswith("VPN 夜间断线 · session "))

        await pilot.press("ctrl+o")
        await wait_until(pilot, lambda: isinstance(app.screen, SessionsScreen))
        rows = [str(o.prompt) for o in app.screen.query_one("OptionList")._options]
        assert len(rows) == 1 and "VPN 夜间断线" in rows[0] and "我的 VPN" not in rows[0]
        await pilot.press("escape")

        await pilot.press("ctrl+n")
        await pilot.press(*"还记得 VPN 的事吗")
        await pilot.press("enter")
        await wait_until(pilot, lambda: bool(chat.panel.hits) and not chat.replying and len(said(app)) == 2)
        row = chat.panel.options.get_option_at_index(0).prompt
        assert isinstance(row, Text) and "VPN 夜间断线" in row.plain
    titles = [r for r in fake_llm.requests if is_title_request(r)]
    assert len(titles) >= 1 and all("tools" not in r for r in titles)


async def test_the_palette_renames_the_session_and_the_model_leaves_the_new_title(
    tmp_path: Path, fake_llm: FakeLLM
) -> None:
    fake_llm.responder = _model
    app = build_app(tmp_path, loaded_config(fake_providers(fake_llm), chat={"titles": "model", "retitle_every": 1}))
    async with app.run_test(size=(120, 36)) as pilot:
        await ready(pilot)
        chat = app.chat_screen
        await pilot.press(*"我的 VPN 晚上总断", "enter")
        await wait_until(pilot, lambda: chat.session_status.startswith("VPN 夜间断线 · session "))

        await pilot.press("ctrl+p")
        await pilot.pause(0.3)
        await pilot.press(*"rename session")
        await pilot.pause(0.5)
        await pilot.press("enter")
        await wait_until(pilot, lambda: isinstance(app.screen, AskPathScreen))
        field = app.screen.query_one(Input)
        assert field.value == "VPN 夜间断线"  # the current title, to edit
        # the hint says what Enter does here (it said "Enter writes", as for an export's folder)
        assert str(app.screen.query_one(".hint", Label).render()) == "Enter renames · Esc cancels"
        await pilot.press("ctrl+u", "enter")
        await wait_until(
            pilot, lambda: any(n.message == "A session's title cannot be empty." for n in app._notifications)
        )
        assert isinstance(app.screen, AskPathScreen)  # still asking
        await pilot.press(*"家里的 WireGuard", "enter")
        await wait_until(pilot, lambda: chat.session_status.startswith("家里的 WireGuard · session "))
        assert [n.message for n in app._notifications][-1] == "Session renamed: 家里的 WireGuard"

        await pilot.press(*"keepalive 设多少", "enter")
        await wait_until(pilot, lambda: not chat.replying and len(said(app)) == 4)
        await pilot.pause(0.5)
        assert chat.session_status.startswith("家里的 WireGuard · session ")
        await pilot.press("ctrl+o")
        await wait_until(pilot, lambda: isinstance(app.screen, SessionsScreen))
        rows = [str(o.prompt) for o in app.screen.query_one("OptionList")._options]
        assert len(rows) == 1 and "家里的 WireGuard" in rows[0]
    sessions = app.runtime.open_catalogue().sessions()
    assert [(s.title, s.title_source) for s in sessions] == [("家里的 WireGuard", "user")]


async def test_a_session_continued_at_start_is_renamed_before_anything_is_said_in_it(
    tmp_path: Path, fake_llm: FakeLLM
) -> None:
    # tried as a user: the session the app continued showed its turns, yet "Rename session…" said
    # "Nothing to rename yet: this session has no turn" (nothing had been sent in this window)
    kernel = deterministic_kernel(tmp_path)
    [stored] = seed_memory(kernel)[:1]
    session_id = kernel.recall_by_id(stored).turn.session_id  # type: ignore[union-attr]
    app = build_app(tmp_path, loaded_config(fake_providers(fake_llm)), kernel=kernel, start_session=session_id)
    async with app.run_test(size=(120, 36)) as pilot:
        await ready(pilot)
        chat = app.chat_screen
        await wait_until(pilot, lambda: chat.session_id == session_id and len(said(app)) >= 2)
        await pilot.press("ctrl+p")
        await pilot.pause(0.3)
        await pilot.press(*"rename session")
        await pilot.pause(0.5)
        await pilot.press("enter")
        await wait_until(pilot, lambda: isinstance(app.screen, AskPathScreen))
        await pilot.press("ctrl+u", *"部署 llama.cpp", "enter")
        await wait_until(pilot, lambda: chat.session_status.startswith("部署 llama.cpp · session "))
        assert [n.message for n in app._notifications][-1] == "Session renamed: 部署 llama.cpp"
    assert kernel.session_meta(kernel.resume_session(session_id).session_file)["title"] == "部署 llama.cpp"

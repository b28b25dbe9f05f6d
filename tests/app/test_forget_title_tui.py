"""Forgetting from the chat: the title cut from the turn's words and the turn count follow at once."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from benchmarks.fakellm import FakeLLM, Reply
from huichat.memory.results import SearchRequest
from tests.app.tui_helpers import (
    build_app,
    deterministic_kernel,
    fake_providers,
    loaded_config,
    ready,
    said,
    wait_until,
)
from tests.conftest import NOW

SECRET = "我的银行卡密码是 735102"


async def _send(pilot: Any, app: Any, *texts: str) -> None:
    """Type and send each of ``texts``, each once its reply before it is in."""
    for i, text in enumerate(texts):
        await pilot.press(*text, "enter")
        await wait_until(pilot, lambda i=i: not app.chat_screen.replying and len(said(app)) == 2 * (i + 1))


async def test_forgetting_the_first_turn_takes_its_words_out_of_the_sessions_title(
    tmp_path: Path, fake_llm: FakeLLM
) -> None:
    kernel = deterministic_kernel(tmp_path)
    fake_llm.push(Reply(text="记住了。"), Reply(text="是的，适合散步。"))
    app = build_app(tmp_path, loaded_config(fake_providers(fake_llm)), kernel=kernel)
    async with app.run_test(size=(140, 40)) as pilot:
        await ready(pilot)
        chat = app.chat_screen
        await _send(pilot, app, f"{SECRET}，帮我记住", "今天天气不错，适合散步吗")
        await wait_until(pilot, lambda: "735102" in chat.session_title)  # the local title: the first message's clause
        first, second = (said(app)[i].turn_id for i in (0, 2))
        assert first is not None and second is not None
        app.forget_turn(first)
        await wait_until(pilot, lambda: app.last_forgotten == first)
        await wait_until(pilot, lambda: "735102" not in chat.session_title, seconds=5)
        assert "天气" in chat.session_title
        assert all("735102" not in s.title for s in kernel.sessions())
        hit = next(h for h in kernel.search(SearchRequest("天气 散步", NOW)).hits if h.turn.id == second)
        assert "735102" not in hit.turn.topic


async def test_the_status_line_counts_a_forgotten_turn_out_and_an_undone_one_back(
    tmp_path: Path, fake_llm: FakeLLM
) -> None:
    kernel = deterministic_kernel(tmp_path)
    fake_llm.push(Reply(text="好"), Reply(text="行"))
    app = build_app(tmp_path, loaded_config(fake_providers(fake_llm)), kernel=kernel)
    async with app.run_test(size=(140, 40)) as pilot:
        await ready(pilot)
        chat = app.chat_screen
        await _send(pilot, app, "第一句", "第二句")
        await wait_until(pilot, lambda: "memory: 2 turns" in chat.memory_status)
        first = said(app)[0].turn_id
        assert first is not None
        app.forget_turn(first)
        await wait_until(pilot, lambda: app.last_forgotten == first)
        await wait_until(pilot, lambda: "memory: 1 turn " in chat.memory_status, seconds=5)  # stayed at 2
        app.forget_turn(first, undo=True)
        await wait_until(pilot, lambda: app.last_forgotten is None)
        await wait_until(pilot, lambda: "memory: 2 turns" in chat.memory_status, seconds=5)

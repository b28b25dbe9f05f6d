"""The conversation follows what is sent: a message and its reply are in view, wherever the view was."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

from benchmarks.fakellm import FakeLLM, Reply
from huichat.memory.turns import Message, TurnDraft
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


async def test_a_message_sent_after_reading_back_up_the_conversation_is_shown_with_its_reply(
    tmp_path: Path, fake_llm: FakeLLM
) -> None:
    kernel = deterministic_kernel(tmp_path)
    handle = kernel.new_session(NOW - timedelta(hours=2))
    for i in range(12):
        said_then = NOW - timedelta(hours=2) + timedelta(minutes=i)
        draft = TurnDraft(
            (Message("user", f"第 {i} 个问题"), Message("assistant", f"第 {i} 个回答\n\n" * 3)), said_then, "长对话"
        )
        kernel.append_turn(handle, draft)
    fake_llm.push(Reply(text="新的回答 the new answer"))
    app = build_app(tmp_path, loaded_config(fake_providers(fake_llm)), kernel=kernel, start_session=handle.session_id)
    async with app.run_test(size=(100, 30)) as pilot:
        await ready(pilot)
        chat = app.chat_screen
        transcript = chat.transcript
        await wait_until(pilot, lambda: len(said(app)) == 24 and transcript.max_scroll_y > 0)
        await pilot.press("ctrl+up", *["up"] * 8)  # read back up the conversation
        assert transcript.scroll_y < transcript.max_scroll_y
        await pilot.press("escape")  # back to the prompt
        assert chat.prompt.has_focus
        await pilot.press(*"还在吗", "enter")
        await wait_until(pilot, lambda: len(said(app)) == 26 and not chat.replying)
        await pilot.pause(0.3)
        answer = said(app)[-1]
        assert answer.text == "新的回答 the new answer"
        assert transcript.scroll_y == transcript.max_scroll_y  # the view followed the conversation again
        assert transcript.region.contains_region(answer.region)

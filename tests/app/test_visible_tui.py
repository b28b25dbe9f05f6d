"""The chat shows escape sequences from memory and from the model as visible characters, never obeys them."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

from benchmarks.fakellm import FakeLLM, Reply
from huichat.memory.turns import Message, TurnDraft
from tests.app.test_visible_output import HOSTILE, RAW_CONTROL
from tests.app.tui_helpers import (
    build_app,
    deterministic_kernel,
    fake_providers,
    loaded_config,
    ready,
    screen_text,
    wait_until,
)
from tests.conftest import ZONE


async def test_stored_titles_and_messages_and_a_streamed_reply_show_their_control_characters(
    tmp_path: Path, fake_llm: FakeLLM
) -> None:
    kernel = deterministic_kernel(tmp_path)
    session = kernel.new_session(datetime(2026, 11, 18, 14, 30, tzinfo=ZONE))
    draft = TurnDraft(
        (Message("user", HOSTILE), Message("assistant", "stored\x1b]0;owned\x07 reply")),
        datetime(2026, 11, 18, 14, 30, tzinfo=ZONE),
        "topic\x1b[2J\x1b]0;owned\x07",
    )
    kernel.append_turn(session, draft)
    kernel.append_turn(
        session, TurnDraft((Message("user", "plain"), Message("assistant", "text")), draft.timestamp, draft.topic)
    )
    fake_llm.push(Reply(text="live\x1b]52;c;cHduZWQ=\x07 \x1b[31mreply\x9b done", chunk_chars=3))
    config = loaded_config(fake_providers(fake_llm), ui={"theme": "textual-dark", "cursor_blink": False})
    app = build_app(tmp_path, config, kernel=kernel)
    async with app.run_test(size=(160, 40)) as pilot:
        await ready(pilot)
        await pilot.press(*"hello")
        await pilot.press("enter")
        await wait_until(pilot, lambda: not app.chat_screen.replying and "done" in screen_text(app))
        screen = screen_text(app)
    assert not RAW_CONTROL.findall(screen), RAW_CONTROL.findall(screen)[:10]
    assert "clip␛]52;c;cHduZWQ=␇" in screen
    assert "stored␛]0;owned␇ reply" in screen
    assert "live␛]52;c;cHduZWQ=␇" in screen and "\\x9b done" in screen
    assert "topic␛[2J␛]0;owned␇" in screen  # the session's title in the status line

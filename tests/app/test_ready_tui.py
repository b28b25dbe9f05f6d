"""The test harness's own promise: ``ready`` sees memory loaded whatever the turn count reads."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

from huichat.memory.turns import Message, TurnDraft
from tests.app.tui_helpers import build_app, deterministic_kernel, loaded_config, ready
from tests.conftest import NOW


async def test_ready_knows_memory_holding_one_turn(tmp_path: Path) -> None:
    kernel = deterministic_kernel(tmp_path)
    session = kernel.new_session(NOW - timedelta(days=1))
    kernel.append_turn(session, TurnDraft((Message("user", "只有一轮"), Message("assistant", "好的")), NOW, "一轮"))
    app = build_app(tmp_path, loaded_config(), kernel=kernel)
    async with app.run_test(size=(120, 30)) as pilot:
        await ready(pilot)  # waited for "turns" and gave up on "memory: 1 turn"
        assert "memory: 1 turn ·" in app.chat_screen.memory_status

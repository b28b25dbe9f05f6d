"""Memory holding one turn: the harness's ``ready`` sees it loaded, and counts read in the singular."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

from huichat.app.tui.screens.stats import StatsScreen
from huichat.memory.results import SearchRequest
from huichat.memory.turns import Message, TurnDraft
from tests.app.tui_helpers import build_app, deterministic_kernel, loaded_config, ready, wait_until
from tests.conftest import NOW


async def test_ready_knows_memory_holding_one_turn(tmp_path: Path) -> None:
    kernel = deterministic_kernel(tmp_path)
    session = kernel.new_session(NOW - timedelta(days=1))
    kernel.append_turn(session, TurnDraft((Message("user", "只有一轮"), Message("assistant", "好的")), NOW, "一轮"))
    app = build_app(tmp_path, loaded_config(), kernel=kernel)
    async with app.run_test(size=(120, 30)) as pilot:
        await ready(pilot)  # waited for "turns" and gave up on "memory: 1 turn"
        assert "memory: 1 turn ·" in app.chat_screen.memory_status


async def test_the_statistics_count_one_of_a_thing_in_the_singular(tmp_path: Path) -> None:
    kernel = deterministic_kernel(tmp_path)
    session = kernel.new_session(NOW - timedelta(days=1))
    kernel.append_turn(session, TurnDraft((Message("user", "只有一轮"), Message("assistant", "好的")), NOW, "一轮"))
    kernel.search(SearchRequest("一轮", NOW))  # one access
    app = build_app(tmp_path, loaded_config(), kernel=kernel)
    async with app.run_test(size=(140, 50)) as pilot:
        await ready(pilot)
        await pilot.press("f3")
        await wait_until(pilot, lambda: isinstance(app.screen, StatsScreen))
        summary = app.screen.query_one("#stats-summary")
        await wait_until(pilot, lambda: "in 1 session" in str(summary.render()))
        shown = str(summary.render())
        assert "1 turn in 1 session ·" in shown and "· 1 access ·" in shown, shown  # was "1 turns in 1 sessions"
        assert "0 clusters (0 turns behind" in shown

"""Memory over time in the real app (Pilot): statistics screen, +N similar, background jobs, live sync."""

from __future__ import annotations

import re
from datetime import timedelta
from pathlib import Path

from textual.widgets import OptionList
from textual_plotext import PlotextPlot

from huichat.app.tui.screens.stats import StatsScreen
from huichat.app.tui.screens.turn_detail import TurnDetailScreen
from huichat.app.tui.widgets.memory_panel import MemoryPanel
from huichat.memory.config import ConsolidationConfig
from huichat.memory.consolidation import run_consolidation
from huichat.memory.joblog import JobLog
from huichat.memory.results import SearchRequest
from huichat.memory.turns import Message, TurnDraft
from tests.app.tui_helpers import build_app, deterministic_kernel, loaded_config, ready, seed_memory, wait_until
from tests.conftest import NOW

FACT = "我的车停在 B2 层 117 号车位"


async def test_f3_shows_statistics_with_charts_and_a_recent_turn_opens(tmp_path: Path) -> None:
    kernel = deterministic_kernel(tmp_path)
    ids = seed_memory(kernel)
    kernel.note_access([ids[2]], NOW - timedelta(hours=1))
    kernel.flush_access()
    kernel.note_access([ids[1], ids[1]], NOW)
    kernel.flush_access()
    app = build_app(tmp_path, loaded_config(), kernel=kernel)
    async with app.run_test(size=(120, 36)) as pilot:
        await ready(pilot)
        await pilot.press("f3")
        await wait_until(pilot, lambda: isinstance(app.screen, StatsScreen))
        screen = app.screen
        summary = screen.query_one("#stats-summary")
        await wait_until(pilot, lambda: "4 turns in 2 sessions" in str(summary.render()))
        assert "working memory 4" in str(summary.render())
        assert len(screen.query(PlotextPlot)) == 3
        recent = screen.query_one("#recent-list", OptionList)
        assert recent.option_count == 2 and f"[{ids[1]}]" in str(recent.get_option_at_index(0).prompt)
        recent.focus()
        recent.highlighted = 0
        await pilot.press("enter")
        await wait_until(pilot, lambda: isinstance(app.screen, TurnDetailScreen))
        assert app.screen.turn is not None and app.screen.turn.id == ids[1]
        assert "retrieved 2×" in str(app.screen.query_one("#lifecycle").render())
        await pilot.press("escape", "escape")
        await wait_until(pilot, lambda: not isinstance(app.screen, StatsScreen | TurnDetailScreen))


async def test_a_representative_expands_to_its_near_duplicates_in_the_panel(tmp_path: Path) -> None:
    kernel = deterministic_kernel(tmp_path)
    repeats = []
    for day in range(4):
        when = NOW - timedelta(days=4 - day)
        session = kernel.new_session(when)
        repeats.append(
            kernel.append_turn(session, TurnDraft((Message("user", FACT), Message("assistant", "好的")), when)).id
        )
    [cluster] = run_consolidation(kernel, NOW, ConsolidationConfig(), JobLog(tmp_path)).clusters
    results = kernel.search(SearchRequest("车位", NOW, record_access=False))
    app = build_app(tmp_path, loaded_config(), kernel=kernel)
    async with app.run_test(size=(140, 40)) as pilot:
        await ready(pilot)
        app.chat_screen.show_recall(results, None, "")
        app.chat_screen.panel_open = True
        panel = app.chat_screen.query_one(MemoryPanel)
        await pilot.pause()
        assert [h.turn.id for h in panel.hits] == [cluster.representative]
        assert "+3 similar" in str(panel.options.get_option_at_index(0).prompt)
        panel.focus_list()
        await pilot.press("plus")
        assert [h.turn.id for h in panel.hits] == [cluster.representative, *sorted(cluster.members, key=repeats.index)]
        assert "'≈ similar 2026-" in str(panel.options.get_option_at_index(1).prompt)
        await pilot.press("down", "enter")
        await wait_until(pilot, lambda: isinstance(app.screen, TurnDetailScreen))
        assert app.screen.turn is not None and app.screen.turn.id in cluster.members
        await pilot.press("escape")
        panel.focus_list()  # (back from a turn, typing goes to the prompt)
        await pilot.press("plus")  # on a near-duplicate, + folds its representative again
        assert len(panel.hits) == 1


async def test_due_jobs_run_in_the_background_at_start(tmp_path: Path) -> None:
    kernel = deterministic_kernel(tmp_path)
    seed_memory(kernel)
    config = loaded_config(lifecycle={"enabled": True}, consolidation={"enabled": True}, sync={"watch": False})
    app = build_app(tmp_path, config, kernel=kernel)
    log = JobLog(tmp_path)
    async with app.run_test(size=(120, 36)) as pilot:
        await ready(pilot)
        await wait_until(pilot, lambda: sum(r["event"] == "end" for r in log.records()) == 2)
    tiers = {s.tier for s in kernel.store.states()}
    assert tiers == {"archive"}  # every seeded turn is more than a week old and was never used
    kernel.close()


async def test_a_transcript_changed_on_disk_refreshes_the_panel(tmp_path: Path) -> None:
    kernel = deterministic_kernel(tmp_path)
    ids = seed_memory(kernel)
    results = kernel.search(SearchRequest("显存", NOW, record_access=False))
    config = loaded_config(sync={"watch": True, "watch_debounce_ms": 200})
    app = build_app(tmp_path, config, kernel=kernel)
    async with app.run_test(size=(140, 40)) as pilot:
        await ready(pilot)
        await wait_until(pilot, lambda: app._watcher is not None)
        app.chat_screen.show_recall(results, None, "")
        panel = app.chat_screen.query_one(MemoryPanel)
        shown = next(h.turn for h in panel.hits if h.turn.id == ids[1])
        path = tmp_path / "sessions" / shown.session_file
        path.write_text(path.read_text(encoding="utf-8").replace("8G", "12G"), encoding="utf-8")
        await wait_until(pilot, lambda: any("12G" in h.turn.text for h in panel.hits))
    kernel.close()


async def test_a_first_weeks_turns_stand_as_a_column_from_zero_in_the_weeks_chart(tmp_path: Path) -> None:
    kernel = deterministic_kernel(tmp_path)
    session = kernel.new_session(NOW)
    for text in (FACT, "车钥匙在门口的抽屉里"):
        kernel.append_turn(session, TurnDraft((Message("user", text), Message("assistant", "记住了。")), NOW, "车位"))
    app = build_app(tmp_path, loaded_config(), kernel=kernel)
    async with app.run_test(size=(120, 36)) as pilot:
        await ready(pilot)
        await pilot.press("f3")
        await wait_until(pilot, lambda: isinstance(app.screen, StatsScreen))
        chart = app.screen.query_one("#weeks-chart", PlotextPlot)
        await wait_until(pilot, lambda: "(last 1)" in str(chart.render()))
        drawn = str(chart.render())
        # one week is one point: drawn as a line it was a single braille dot on an axis around it
        assert re.search(r"(?<![\d.])0(\.0+)?┤", drawn)  # the y axis starts at zero
        assert sum(0x2800 < ord(c) <= 0x28FF for c in drawn) >= 5
        # counts read as whole numbers on both charts (a trial saw 7.0, 5.8, 4.7, … turns per decile)
        importance = app.screen.query_one("#importance-chart", PlotextPlot)
        await wait_until(pilot, lambda: "┤" in str(importance.render()))
        for shown in (drawn, str(importance.render())):
            ticks = re.findall(r"([\d.]+) ?┤", shown)
            assert ticks and all(re.fullmatch(r"\d+", tick) for tick in ticks), ticks

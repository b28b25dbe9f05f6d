"""The prompt's new-line keys, as a terminal sends them (in bursts, as escape sequences), and its unsent draft across a quit."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from textual import events
from textual._xterm_parser import XTermParser
from textual.widgets import Static
from textual.widgets._markdown import MarkdownParagraph

from benchmarks.fakellm import FakeLLM, Reply
from huichat.app.config import LoadedConfig
from huichat.app.tui.app import HuichatApp
from huichat.app.tui.screens.search import SearchScreen
from huichat.app.tui.screens.turn_detail import TurnDetailScreen
from huichat.app.tui.widgets.chat_message import ChatMessage
from huichat.app.tui.widgets.prompt_input import ALT_ENTER
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


def _burst(app: object, keys: Iterable[tuple[str, str | None]]) -> None:
    """Queue keys the way a terminal delivers a fast typist's (or tmux's) input: all at once,
    without waiting for one to be handled before the next arrives."""
    driver = app._driver  # type: ignore[attr-defined]
    for key, character in keys:
        driver.send_message(events.Key(key, character))


async def test_new_lines_typed_in_a_burst_land_where_they_were_typed(tmp_path: Path) -> None:
    app = build_app(tmp_path, loaded_config())
    async with app.run_test(size=(120, 30)) as pilot:
        await ready(pilot)
        prompt = app.chat_screen.prompt
        typed = [(c, c) for c in "ab"] + [("ctrl+j", "\n")] + [(c, c) for c in "cd"] + [("ctrl+j", "\n")]
        typed += [("ctrl+j", "\n")] + [(c, c) for c in "第四行"]
        _burst(app, typed)
        await wait_until(pilot, lambda: len(prompt.text) == 10)
        assert prompt.text == "ab\ncd\n\n第四行"
        assert not said(app)


async def test_alt_enter_as_a_terminal_sends_it_breaks_the_line(tmp_path: Path) -> None:
    app = build_app(tmp_path, loaded_config())
    # xterm and tmux send alt+enter as ESC then Enter; Textual alone reads that as Enter (a send)
    keys = [token for token in XTermParser().feed(ALT_ENTER) if isinstance(token, events.Key)]
    assert [key.key for key in keys] != ["enter"]
    async with app.run_test(size=(120, 30)) as pilot:
        await ready(pilot)
        prompt = app.chat_screen.prompt
        _burst(app, [("a", "a"), *((key.key, key.character) for key in keys), ("b", "b")])
        await wait_until(pilot, lambda: len(prompt.text) == 3)
        assert prompt.text == "a\nb" and not said(app)


async def test_the_lines_of_a_sent_message_stay_lines(tmp_path: Path, fake_llm: FakeLLM) -> None:
    fake_llm.push(Reply(text="第一行\n第二行"))
    app = build_app(tmp_path, loaded_config(fake_providers(fake_llm)))
    async with app.run_test(size=(120, 30)) as pilot:
        await ready(pilot)
        await pilot.press(*"first", "ctrl+j", *"第二行", "ctrl+j", "ctrl+j", *"third")
        await pilot.press("enter")
        await wait_until(pilot, lambda: len(said(app)) == 2 and not app.chat_screen.replying)
        mine = said(app)[0]
        assert mine.text == "first\n第二行\n\nthird"
        assert str(mine.query_one(".body", Static).render()) == mine.text  # Markdown showed "first 第二行"
        # and so does the turn, opened from search as memory keeps it
        await pilot.press("ctrl+f")
        await wait_until(pilot, lambda: isinstance(app.screen, SearchScreen))
        await pilot.press(*f"id:{mine.turn_id}", "enter")
        await wait_until(pilot, lambda: isinstance(app.screen, TurnDetailScreen))
        await pilot.pause(0.3)
        kept = [str(block._content) for block in app.screen.query(MarkdownParagraph)]
        assert "first\n第二行" in kept, kept


async def test_enter_typed_before_the_window_painted_sends_and_the_rest_stays(
    tmp_path: Path, fake_llm: FakeLLM
) -> None:
    fake_llm.push(Reply(text="收到"))
    app = build_app(tmp_path, loaded_config(fake_providers(fake_llm)))
    async with app.run_test(size=(120, 30)) as pilot:
        await ready(pilot)
        chat = app.chat_screen
        chat.set_focus(None)  # as at start-up, before the prompt had focus
        await pilot.pause()
        # until huichat has the terminal, the terminal turns Enter into ctrl+j; the app reads
        # all of it at once when it starts
        _burst(app, [*((c, c) for c in "启动就问"), ("ctrl+j", "\n"), *((c, c) for c in "接着")])
        await wait_until(pilot, lambda: len(said(app)) == 2 and not chat.replying)
        assert [m.text for m in said(app)] == ["启动就问", "收到"]
        assert chat.prompt.text == "接着"  # was "启动就问接着\n": not sent, and the line break last


async def test_a_new_line_in_a_burst_typed_over_a_message_lands_in_place(tmp_path: Path, fake_llm: FakeLLM) -> None:
    fake_llm.push(Reply(text="好的"))
    app = build_app(tmp_path, loaded_config(fake_providers(fake_llm)))
    async with app.run_test(size=(120, 30)) as pilot:
        await ready(pilot)
        chat = app.chat_screen
        await pilot.press(*"你好", "enter")
        await wait_until(pilot, lambda: len(said(app)) == 2 and not chat.replying)
        await pilot.press("ctrl+up")
        assert isinstance(app.focused, ChatMessage)
        _burst(app, [("t", "t"), ("ctrl+j", "\n"), ("u", "u")])  # typing goes on in the prompt
        await wait_until(pilot, lambda: len(chat.prompt.text) == 3)
        assert chat.prompt.text == "t\nu"
        assert len(said(app)) == 2


async def test_pasted_code_and_markdown_signs_in_a_message_show_as_written(tmp_path: Path, fake_llm: FakeLLM) -> None:
    fake_llm.push(Reply(text="好的"))
    app = build_app(tmp_path, loaded_config(fake_providers(fake_llm)))
    written = "def f():\n    if x:\n        return 1\n# 不是标题\n* not a bullet"
    async with app.run_test(size=(120, 30)) as pilot:
        await ready(pilot)
        app.chat_screen.prompt.insert(written)  # as a paste lands
        await pilot.press("enter")
        await wait_until(pilot, lambda: len(said(app)) == 2 and not app.chat_screen.replying)
        mine = said(app)[0]
        # Markdown dropped the indentation, made a heading and a bullet
        assert str(mine.query_one(".body", Static).render()) == written


async def test_an_unsent_draft_comes_back_in_its_session_and_a_sent_or_cleared_one_does_not(
    tmp_path: Path, fake_llm: FakeLLM
) -> None:
    fake_llm.responder = lambda _body: Reply(text="好的。")
    kernel = deterministic_kernel(tmp_path)
    seed_memory(kernel)
    ui = {"theme": "textual-dark", "cursor_blink": False}
    continuing = loaded_config(fake_providers(fake_llm), ui=ui)  # ui.on_start: continue (the default)
    draft = tmp_path / "draft.json"

    def reopen(config: LoadedConfig = continuing) -> HuichatApp:
        return build_app(tmp_path, config, kernel=kernel)  # the same data folder each time

    app = reopen()
    async with app.run_test(size=(120, 36)) as pilot:
        await wait_until(pilot, lambda: app.chat_screen.session_id is not None)
        shown = app.chat_screen.session_id
        await pilot.press(*"还有一件事 明天", "ctrl+j", *"第二行")
        await pilot.press("ctrl+q")
    assert draft.stat().st_mode & 0o777 == 0o600

    # a new session is not where it was typed: not shown there, and kept for its own session
    app = reopen(loaded_config(fake_providers(fake_llm), ui={**ui, "on_start": "new"}))
    async with app.run_test(size=(120, 36)) as pilot:
        await ready(pilot)
        assert app.chat_screen.prompt.text == ""
        await pilot.press("ctrl+q")
    assert draft.exists()

    app = reopen()
    async with app.run_test(size=(120, 36)) as pilot:
        await wait_until(pilot, lambda: app.chat_screen.prompt.text == "还有一件事 明天\n第二行")
        assert app.chat_screen.session_id == shown
        await pilot.press("enter")
        await wait_until(pilot, lambda: not app.chat_screen.replying and len(said(app)) >= 2)
        await pilot.press("ctrl+q")
    assert not draft.exists()

    app = reopen()
    async with app.run_test(size=(120, 36)) as pilot:
        await wait_until(pilot, lambda: app.chat_screen.session_id is not None)
        await pilot.pause(0.3)
        assert app.chat_screen.prompt.text == ""
        await pilot.press(*"typed, then cleared", "ctrl+l", "ctrl+q")
    assert not draft.exists()

"""Importing from the TUI: the palette command, the path dialog, progress and the account as notifications."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.widgets import Input

from benchmarks.fakellm import FakeLLM
from huichat.app.tui.screens.import_history import ImportHistoryScreen
from tests.app.tui_helpers import (
    build_app,
    deterministic_kernel,
    fake_providers,
    loaded_config,
    ready,
    said,
    screen_text,
    wait_until,
)
from tests.memory.imports.helpers import FIXTURES


def _notes(app) -> list[str]:  # type: ignore[no-untyped-def]
    return [f"{n.title}: {n.message}" for n in app._notifications]


async def test_the_palette_imports_a_history_while_the_chat_keeps_working(tmp_path: Path, fake_llm: FakeLLM) -> None:
    kernel = deterministic_kernel(tmp_path)
    app = build_app(tmp_path, loaded_config(fake_providers(fake_llm)), kernel=kernel)
    async with app.run_test(size=(120, 36)) as pilot:
        await ready(pilot)
        await pilot.press("ctrl+p")
        await pilot.pause(0.3)
        await pilot.press(*"Import chat")
        await pilot.pause(0.5)
        await pilot.press("enter")
        await wait_until(pilot, lambda: isinstance(app.screen, ImportHistoryScreen))
        await pilot.press(*str(tmp_path / "missing.json"), "enter")
        await pilot.pause(0.2)
        assert isinstance(app.screen, ImportHistoryScreen)  # a path that does not exist is said, not taken
        assert "No such file or folder" in str(app.screen.query_one("#import-problem").render())
        app.screen.query_one("#import-path").value = ""  # type: ignore[attr-defined]
        await pilot.press(*str(FIXTURES / "chatgpt" / "conversations.json"), "enter")
        await wait_until(pilot, lambda: not isinstance(app.screen, ImportHistoryScreen))
        await pilot.press(*"hello", "enter")  # the chat answers while the import runs
        await wait_until(pilot, lambda: any(n.startswith("Import finished") for n in _notes(app)), 60)
        await wait_until(pilot, lambda: len(said(app)) == 2)
        finished = next(n for n in _notes(app) if n.startswith("Import finished"))
        assert "imported: 15 messages — 5 turns in 3 new sessions" in finished
        assert "Searchable by their words now" in finished
        assert kernel.count() == 5 + 1  # the imported turns and the chat's own
        await wait_until(pilot, lambda: kernel.pending_vectors == 0, 60)  # embedded in the background


async def test_a_malformed_file_imports_nothing_and_says_why(tmp_path: Path) -> None:
    kernel = deterministic_kernel(tmp_path)
    broken = tmp_path / "conversations.json"
    broken.write_bytes((FIXTURES / "chatgpt" / "conversations.json").read_bytes()[:-200])
    app = build_app(tmp_path, loaded_config(), kernel=kernel)
    async with app.run_test(size=(120, 36)) as pilot:
        await ready(pilot)
        await app.import_history(broken)
        await wait_until(pilot, lambda: any(n.startswith("Import failed") for n in _notes(app)))
        failed = next(n for n in _notes(app) if n.startswith("Import failed"))
        assert f"{broken}: malformed JSON" in failed and "Nothing was imported" in failed
        assert kernel.count() == 0


@pytest.mark.parametrize("width", [80, 140])
async def test_the_import_dialog_shows_its_whole_hint(tmp_path: Path, width: int) -> None:
    # a user's trial: at 140 columns the hint stopped at "an elia database," (one line, cut off)
    app = build_app(tmp_path, loaded_config(), kernel=deterministic_kernel(tmp_path))
    async with app.run_test(size=(width, 30)) as pilot:
        await ready(pilot)
        app.push_screen(ImportHistoryScreen())
        await wait_until(pilot, lambda: isinstance(app.screen, ImportHistoryScreen))
        shown = screen_text(app)
        # a path that is not there: the line that says so is whole too, however long the path
        missing = tmp_path / "exports" / ("a-very-long-folder-name-" * 4) / "chatgpt-export.zip"
        app.screen.query_one("#import-path", Input).value = str(missing)
        await pilot.press("enter")
        await pilot.pause()
        problem = screen_text(app)

    def inside(text: str) -> str:  # the dialog's lines, inside its borders, as one text
        lines = [line.rsplit("│", 2)[1] for line in text.splitlines() if line.count("│") >= 2]
        return " ".join(" ".join(lines).split())

    words = inside(shown)
    for phrase in ("A ChatGPT, Claude or DeepSeek export", "chat JSONL,", "a huichat export or transcripts folder."):
        assert phrase in words
    assert "Importing again adds only what is new." in words
    assert "No such file or folder:" in inside(problem) and "chatgpt-export.zip" in inside(problem).replace(" ", "")

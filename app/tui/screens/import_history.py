"""Asking for the chat history to import: a path (a file, a folder or a zip)."""

from __future__ import annotations

from pathlib import Path

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Footer, Input, Label


class ImportHistoryScreen(ModalScreen[Path | None]):
    """Returns the path to import (``~`` expanded), or None when dismissed."""

    BINDINGS = [Binding("escape", "dismiss(None)", "Cancel")]

    def compose(self) -> ComposeResult:
        with Vertical(id="import-history"):
            yield Label("Import chat history", classes="title")
            yield Label(
                "A ChatGPT, Claude or DeepSeek export (the zip or its conversations.json), an llm logs.db, "
                "an elia database, chat JSONL, a huichat export or transcripts folder. "
                "Importing again adds only what is new.",
                classes="hint",
            )
            yield Input(placeholder="~/Downloads/chatgpt-export.zip", id="import-path")
            yield Label("", id="import-problem", markup=False)  # a path typed is text
            yield Footer()

    @on(Input.Submitted, "#import-path")
    def submitted(self, event: Input.Submitted) -> None:
        text = event.value.strip().strip("'\"")
        if not text:
            return
        path = Path(text).expanduser()
        if not path.exists():
            self.query_one("#import-problem", Label).update(f"No such file or folder: {path}")
            return
        self.dismiss(path)

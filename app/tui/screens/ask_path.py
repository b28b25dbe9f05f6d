"""Asking for a path (where to export): an editable field, Enter accepts, Esc cancels."""

from __future__ import annotations

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Input, Label


class AskPathScreen(ModalScreen[str | None]):
    """Returns the path typed (``~`` allowed), or None when cancelled."""

    BINDINGS = [Binding("escape", "dismiss(None)", "Cancel")]

    def __init__(self, question: str, default: str) -> None:
        super().__init__()
        self.question = question
        self.default = default

    def compose(self) -> ComposeResult:
        with Vertical(id="ask-path"):
            yield Label(self.question, classes="title")
            yield Input(self.default, id="path")
            yield Label("Enter writes · Esc cancels", classes="hint")

    @on(Input.Submitted, "#path")
    def _accept(self, event: Input.Submitted) -> None:
        if event.value.strip():
            self.dismiss(event.value.strip())

"""Asking for one line (a path to export to, a turn id, a session's title): an editable field,
Enter accepts, Esc cancels."""

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

    def __init__(self, question: str, default: str, *, empty: str = "", enter: str = "writes") -> None:
        super().__init__()
        self.question = question
        self.default = default
        self.empty = empty
        """The line said when Enter is pressed on an empty field ('': Enter does nothing then)."""
        self.enter = enter
        """What Enter does, as the hint under the field says it ("writes" a file, "renames" a session)."""

    def compose(self) -> ComposeResult:
        with Vertical(id="ask-path"):
            yield Label(self.question, classes="title")
            yield Input(self.default, id="path")
            yield Label(f"Enter {self.enter} · Esc cancels", classes="hint")

    @on(Input.Submitted, "#path")
    def _accept(self, event: Input.Submitted) -> None:
        if event.value.strip():
            self.dismiss(event.value.strip())
        elif self.empty:
            self.notify(self.empty, severity="warning", timeout=4)

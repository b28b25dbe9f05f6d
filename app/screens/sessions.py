"""Past sessions, most recent first; choosing one reopens it."""

from __future__ import annotations

from datetime import tzinfo
from typing import TYPE_CHECKING

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Footer, Label, OptionList
from textual.widgets.option_list import Option

if TYPE_CHECKING:
    from memory.results import SessionInfo


class SessionsScreen(ModalScreen[str | None]):
    """Pick a session to reopen (returns its id, or None)."""

    BINDINGS = [Binding("escape", "dismiss(None)", "Close")]

    def __init__(self, sessions: list[SessionInfo], zone: tzinfo) -> None:
        super().__init__()
        self.sessions = sessions
        self.zone = zone

    def compose(self) -> ComposeResult:
        with Vertical(id="sessions"):
            yield Label(f"Sessions ({len(self.sessions)})", classes="title")
            options = [
                Option(
                    f"{s.last.astimezone(self.zone):%Y-%m-%d %H:%M}  {s.turns:>3} turns  "
                    f"{(s.first_text.splitlines() or [''])[0][:60]}",
                    id=s.session_id,
                )
                for s in self.sessions
            ]
            yield OptionList(*options) if options else Label("No sessions yet.")
            yield Footer()

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        self.dismiss(event.option.id)

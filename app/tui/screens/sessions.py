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
    from huichat.memory.results import SessionInfo


def session_row(info: SessionInfo, zone: tzinfo, current: bool) -> str:
    """One line: when, how many turns, what it is about (its title); the open session is marked."""
    mark = "▶ " if current else "  "
    turns = f"{info.turns} turn{'' if info.turns == 1 else 's'}"
    about = (info.title or (info.first_text.splitlines() or [""])[0])[:60]
    suffix = "  (current)" if current else ""
    return f"{mark}{info.last.astimezone(zone):%Y-%m-%d %H:%M}  {turns:>9}  {about}{suffix}"


class SessionsScreen(ModalScreen[str | None]):
    """Pick a session to reopen (returns its id, or None)."""

    BINDINGS = [Binding("escape,q", "dismiss(None)", "Close")]

    def __init__(self, sessions: list[SessionInfo], zone: tzinfo, current: str | None = None) -> None:
        super().__init__()
        self.sessions = sessions
        self.zone = zone
        self.current = current

    def compose(self) -> ComposeResult:
        with Vertical(id="sessions"):
            yield Label(f"Sessions ({len(self.sessions)})", classes="title")
            options = [
                Option(session_row(s, self.zone, s.session_id == self.current), id=s.session_id) for s in self.sessions
            ]
            yield OptionList(*options) if options else Label("No sessions yet.")
            yield Footer()

    def on_mount(self) -> None:
        if self.current is not None and self.sessions:
            options = self.query_one(OptionList)
            ids = [s.session_id for s in self.sessions]
            if self.current in ids:
                options.highlighted = ids.index(self.current)

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        self.dismiss(event.option.id)

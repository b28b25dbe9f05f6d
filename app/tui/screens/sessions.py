"""Past sessions, most recent first, filtered as the user types; choosing one reopens it."""

from __future__ import annotations

from datetime import tzinfo
from typing import TYPE_CHECKING

from huichat.app.tui.screens.picker import Choice, PickerScreen

if TYPE_CHECKING:
    from huichat.memory.results import SessionInfo


def session_row(info: SessionInfo, zone: tzinfo, current: bool) -> str:
    """One line: when, how many turns, what it is about (its title); the open session is marked."""
    mark = "▶ " if current else "  "
    turns = f"{info.turns} turn{'' if info.turns == 1 else 's'}"
    about = (info.title or (info.first_text.splitlines() or [""])[0])[:60]
    suffix = "  (current)" if current else ""
    return f"{mark}{info.last.astimezone(zone):%Y-%m-%d %H:%M}  {turns:>9}  {about}{suffix}"


class SessionsScreen(PickerScreen):
    """Pick a session to reopen (returns its id, or None); its title, first message, date and id are searched."""

    def __init__(self, sessions: list[SessionInfo], zone: tzinfo, current: str | None = None) -> None:
        choices = [
            Choice(
                s.session_id,
                row := session_row(s, zone, s.session_id == current),
                f"{row} {s.first_text} {s.session_id}",
                s.title,
            )
            for s in sessions
        ]
        super().__init__(
            "Sessions", choices, empty="No sessions match." if sessions else "No sessions yet.", current=current
        )
        self.sessions = sessions

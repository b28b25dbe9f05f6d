"""The status line: provider and model, session, memory state."""

from __future__ import annotations

from textual.reactive import reactive
from textual.widgets import Static


class StatusLine(Static):
    """One line of state set by the screen; ``busy`` toggles the ``-busy`` class."""

    provider: reactive[str] = reactive("no provider")
    session: reactive[str] = reactive("new session")
    memory: reactive[str] = reactive("memory: loading…")
    busy: reactive[bool] = reactive(False)

    def render(self) -> str:
        return f" {self.provider}  ·  {self.session}  ·  {self.memory}"

    def watch_busy(self, busy: bool) -> None:
        self.set_class(busy, "-busy")

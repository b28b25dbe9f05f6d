"""The multi-line prompt: Enter sends, ctrl+j (or alt+enter) inserts a new line."""

from __future__ import annotations

from dataclasses import dataclass

from textual import events
from textual.binding import Binding
from textual.message import Message
from textual.widgets import TextArea


class PromptInput(TextArea):
    """Where the user writes. Chinese input methods commit text like any other keys."""

    BINDINGS = [Binding("ctrl+j,alt+enter,shift+enter", "newline", "New line", show=False)]

    @dataclass
    class Submitted(Message):
        """The user pressed Enter on a non-empty prompt."""

        prompt: PromptInput
        text: str

    def __init__(self, *, id: str | None = None, cursor_blink: bool = True) -> None:
        super().__init__(id=id, soft_wrap=True, show_line_numbers=False, tab_behavior="focus", compact=True)
        self.set_reactive(TextArea.cursor_blink, cursor_blink)
        self.placeholder = "Message huichat · Enter to send · ctrl+j for a new line"

    async def _on_key(self, event: events.Key) -> None:
        if event.key == "enter":
            event.stop()
            event.prevent_default()
            text = self.text
            if text.strip():
                self.post_message(self.Submitted(self, text))
            return
        await super()._on_key(event)

    def action_newline(self) -> None:
        """Insert a line break at the cursor."""
        self.insert("\n")

"""The multi-line prompt: Enter sends, ctrl+j (or alt+enter) inserts a new line."""

from __future__ import annotations

from dataclasses import dataclass

from textual import events
from textual.binding import Binding
from textual.message import Message
from textual.widgets import TextArea


class PromptInput(TextArea):
    """Where the user writes. Chinese input methods commit text like any other keys.

    ↑ or ↓ where the cursor cannot move further asks to leave the prompt (the chat screen
    moves into the open memory panel); inside a longer text they move the cursor as usual.
    """

    BINDINGS = [Binding("ctrl+j,alt+enter,shift+enter", "newline", "New line", show=False)]

    @dataclass
    class Submitted(Message):
        """The user pressed Enter on a non-empty prompt."""

        prompt: PromptInput
        text: str

    @dataclass
    class LeaveRequested(Message):
        """↑ at the top or ↓ at the bottom of the prompt."""

        prompt: PromptInput

    def __init__(self, *, id: str | None = None, cursor_blink: bool = True) -> None:
        super().__init__(id=id, soft_wrap=True, show_line_numbers=False, tab_behavior="focus", compact=True)
        self.set_reactive(TextArea.cursor_blink, cursor_blink)
        self.placeholder = "Message huichat · Enter sends · ctrl+j new line · F1 keys"

    async def _on_key(self, event: events.Key) -> None:
        if event.key == "enter":
            event.stop()
            event.prevent_default()
            text = self.text
            if text.strip():
                self.post_message(self.Submitted(self, text))
            return
        await super()._on_key(event)

    def action_cursor_up(self, select: bool = False) -> None:
        """Up a (wrapped) line; from where the cursor cannot go further up, leave the prompt."""
        if not select and self.get_cursor_up_location() == self.cursor_location:
            self.post_message(self.LeaveRequested(self))
            return
        super().action_cursor_up(select)

    def action_cursor_down(self, select: bool = False) -> None:
        """Down a (wrapped) line; from where the cursor cannot go further down, leave the prompt."""
        if not select and self.get_cursor_down_location() == self.cursor_location:
            self.post_message(self.LeaveRequested(self))
            return
        super().action_cursor_down(select)

    def action_newline(self) -> None:
        """Insert a line break at the cursor."""
        self.insert("\n")

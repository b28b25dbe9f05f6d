"""The multi-line prompt: Enter sends, ctrl+j (or alt+enter) inserts a new line."""

from __future__ import annotations

from dataclasses import dataclass
from typing import cast

from textual import events
from textual.binding import Binding
from textual.keys import Keys
from textual.message import Message
from textual.widgets import TextArea

ALT_ENTER = "\x1b\r"
"""What alt+enter sends in xterm, tmux, GNOME Terminal, iTerm (ESC, then Enter)."""


def read_alt_enter() -> None:
    """Make alt+enter a new line where the terminal sends it as ESC + Enter.

    Textual reads that pair as a plain Enter (the ESC is dropped), so alt+enter sent the
    message instead of breaking the line. Only terminals speaking the kitty keyboard protocol
    report "alt+enter" itself; this teaches the parser the older form, as ctrl+j.
    """
    from textual._ansi_sequences import ANSI_SEQUENCES_KEYS

    # typed as a Mapping, but it is the dict the parser reads
    cast("dict[str, object]", ANSI_SEQUENCES_KEYS).setdefault(ALT_ENTER, (Keys.ControlJ,))


class PromptInput(TextArea):
    """Where the user writes. Chinese input methods commit text like any other keys.

    ↑ on an empty prompt brings back the previous prompt sent (again: older ones; ↓: newer,
    then empty again), as in a shell. Otherwise ↑ or ↓ where the cursor cannot move further
    asks to leave the prompt (the chat screen moves into the open memory panel); inside a
    longer text they move the cursor as usual.
    """

    NEWLINE_KEYS = ("ctrl+j", "alt+enter", "shift+enter")
    BINDINGS = [
        Binding(",".join(NEWLINE_KEYS), "newline", "New line", show=False),
        Binding("ctrl+l", "clear_prompt", "Clear", show=False),
    ]

    @dataclass
    class Submitted(Message):
        """The user pressed Enter on a non-empty prompt."""

        prompt: PromptInput
        text: str

    @dataclass
    class LeaveRequested(Message):
        """↑ at the top or ↓ at the bottom of the prompt."""

        prompt: PromptInput
        up: bool

    def __init__(self, *, id: str | None = None, cursor_blink: bool = True) -> None:
        super().__init__(id=id, soft_wrap=True, show_line_numbers=False, tab_behavior="focus", compact=True)
        self.set_reactive(TextArea.cursor_blink, cursor_blink)
        self.placeholder = "Message huichat · Enter sends · ctrl+j new line · ↑ history · F1 keys"
        self.sent: list[str] = []
        """Prompts sent before, oldest first (the screen hands them down)."""
        self._recalled: int | None = None
        """Which of them the prompt shows, while it shows one unchanged."""

    def _browsing(self) -> int | None:
        index = self._recalled
        if index is not None and index < len(self.sent) and self.text == self.sent[index]:
            return index
        return None

    def _show(self, index: int | None) -> None:
        self._recalled = index
        self.text = "" if index is None else self.sent[index]
        self.move_cursor(self.document.end)

    def action_clear_prompt(self) -> None:
        """Empty the prompt, however long (ctrl+z brings the text back)."""
        self.clear()
        self._recalled = None

    async def _on_key(self, event: events.Key) -> None:
        if event.key == "enter":
            event.stop()
            event.prevent_default()
            self.submit()
            return
        if event.key in self.NEWLINE_KEYS:
            # here, not only through the binding: a binding runs once the key has bubbled up to
            # the app, after the keys queued behind it, so a fast burst put its text first
            event.stop()
            event.prevent_default()
            self.action_newline()
            return
        await super()._on_key(event)

    def submit(self) -> None:
        """Send what the prompt holds (nothing when it is empty; when it holds only spaces, that is said)."""
        if self.text.strip():
            self.post_message(self.Submitted(self, self.text))
        elif self.text:
            self.notify("Nothing to send: the message holds only spaces.", timeout=2)

    def take(self, sent: str) -> None:
        """The message ``sent`` has left: remove it, keeping what was typed after it while the
        screen was still handling it (clearing everything lost the next message's first keys)."""
        rest = self.text[len(sent) :] if self.text.startswith(sent) else ""
        self.text = rest
        self.move_cursor(self.document.end)

    def action_cursor_up(self, select: bool = False) -> None:
        """An older prompt (on an empty prompt, or one showing a recalled prompt); else up a
        (wrapped) line; from where the cursor cannot go further up, leave the prompt."""
        browsing = self._browsing()
        if not select and self.sent and (browsing is not None or not self.text):
            self._show(max(0, (len(self.sent) if browsing is None else browsing) - 1))
            return
        if not select and self.get_cursor_up_location() == self.cursor_location:
            self.post_message(self.LeaveRequested(self, up=True))
            return
        super().action_cursor_up(select)

    def action_cursor_down(self, select: bool = False) -> None:
        """A newer prompt while one is recalled (past the newest: empty again); else down a
        (wrapped) line; from where the cursor cannot go further down, leave the prompt."""
        browsing = self._browsing()
        if not select and browsing is not None:
            self._show(browsing + 1 if browsing + 1 < len(self.sent) else None)
            return
        if not select and self.get_cursor_down_location() == self.cursor_location:
            self.post_message(self.LeaveRequested(self, up=False))
            return
        super().action_cursor_down(select)

    def action_newline(self) -> None:
        """Insert a line break at the cursor."""
        self.insert("\n")

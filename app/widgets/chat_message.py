"""One message in the transcript: the speaker's label over Markdown that can be streamed."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.containers import Vertical
from textual.reactive import reactive
from textual.widgets import Label, Markdown, Static
from textual.widgets._markdown import MarkdownStream


class ChatMessage(Vertical):
    """A user, assistant or system message. ``state`` drives the look through TCSS classes."""

    state: reactive[str] = reactive("done")
    """``streaming``, ``done``, ``failed`` or ``waiting``."""

    def __init__(self, role: str, text: str = "", *, label: str = "", note: str = "") -> None:
        super().__init__(classes=f"-{role}")
        self.role = role
        self._text = text
        self._label = label or role
        self._note = note
        self._stream: MarkdownStream | None = None
        self.chunks: list[str] = [text] if text else []

    def compose(self) -> ComposeResult:
        yield Label(self._label, classes="label")
        yield Markdown(self._text, classes="body")
        yield Static(self._note, classes="note")

    def on_mount(self) -> None:
        self.set_class(bool(self._note), "-has-note")

    def watch_state(self, old: str, new: str) -> None:
        self.remove_class(f"-{old}")
        self.add_class(f"-{new}")

    @property
    def text(self) -> str:
        """Everything written so far."""
        return "".join(self.chunks)

    async def append(self, fragment: str) -> None:
        """Stream more text into the body (only the new fragment is rendered)."""
        if not fragment:
            return
        self.chunks.append(fragment)
        if self._stream is None:
            self._stream = Markdown.get_stream(self.query_one(".body", Markdown))
        await self._stream.write(fragment)

    async def finish(self, state: str = "done") -> None:
        """Stop streaming and settle into ``state``."""
        if self._stream is not None:
            await self._stream.stop()
            self._stream = None
        self.state = state

    def set_note(self, note: str) -> None:
        """A small line under the message (tool calls, errors, retry hint)."""
        self._note = note
        self.query_one(".note", Static).update(note)
        self.set_class(bool(note), "-has-note")

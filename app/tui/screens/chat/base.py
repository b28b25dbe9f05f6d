"""The chat screen's state and children, shared by every layer of it."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, cast

from textual.containers import VerticalScroll
from textual.message import Message
from textual.reactive import reactive
from textual.screen import Screen

from huichat.app.tui.widgets.memory_panel import MemoryPanel
from huichat.app.tui.widgets.prompt_input import PromptInput

if TYPE_CHECKING:
    from huichat.app.progress import Pace
    from huichat.app.prompt_history import PromptHistory
    from huichat.app.session import ChatSession
    from huichat.app.tui.app import HuichatApp
    from huichat.app.tui.gateway import Gateway
    from huichat.memory.turns import Turn


@dataclass
class MemorySynced(Message):
    """Transcripts changed outside this screen (by hand, by another huichat) and were reconciled."""

    changed_ids: frozenset[str]


class ChatBase(Screen[None]):
    """What every part of the chat screen reads: the reactives, the session, the children."""

    panel_open: reactive[bool] = reactive(False)
    provider_status: reactive[str] = reactive("no provider")
    session_status: reactive[str] = reactive("new session")
    memory_status: reactive[str] = reactive("memory: loading…")
    catch_up_status: reactive[str] = reactive("")
    """While turns get their vectors: how far the catch-up is (``embedding 1,200 of 4,282 turns · …``)."""
    busy: reactive[bool] = reactive(False)
    role: reactive[str] = reactive("")
    """The session's role (a name in chat.roles; '': none), shown in the status line."""
    replying: reactive[bool] = reactive(False, bindings=True)
    """A reply is being produced (Esc and ctrl+c stop it then)."""
    recalled: bool | None = None
    """Whether the reply running recalled memory (None: the panel is not waiting for it)."""

    def __init__(self) -> None:
        super().__init__()
        self.session: ChatSession | None = None
        self.session_id: str | None = None
        """The stored session the next message continues (None: a new one)."""
        self.session_title = ""
        """That session's title (its topic), shown in the status line."""
        self.editing: str | None = None
        """The turn whose message is being edited in the prompt: sending it starts a new branch there."""
        self.draft = ""
        """What the prompt held when an edit began: given back when the edit is sent or left."""
        self._typed_at = 0.0
        """When a key typed outside the prompt was last taken into it (``ChatScreen.on_key``)."""
        self._blind = False
        """That burst began while nothing had focus: typed before the window painted."""
        self.history: PromptHistory | None = None
        """The prompts sent, across sessions (↑ on an empty prompt, ctrl+r)."""
        self._memory_line = "memory: loading…"
        """The status line's memory part (``_show_memory``)."""
        self._catch_up: tuple[Pace, int, int] | None = None
        """While turns get their vectors: the catch-up's pace, how many it has done and of how many."""
        self._elsewhere = False
        """The catch-up waits: another process (an import) computes the vectors now."""
        self._earlier: list[Turn] = []
        """The open session's turns above those shown (``show_earlier``)."""
        self._later: list[Turn] = []
        """Opened on an earlier turn: the session's turns below those shown (``show_later``)."""

    @property
    def huichat(self) -> HuichatApp:
        """The app, typed (screens sit below the app and never import it)."""
        return cast("HuichatApp", self.app)

    @property
    def gateway(self) -> Gateway:
        return self.huichat.gateway

    @property
    def transcript(self) -> VerticalScroll:
        return self.query_one("#transcript", VerticalScroll)

    @property
    def panel(self) -> MemoryPanel:
        return self.query_one("#panel", MemoryPanel)

    @property
    def prompt(self) -> PromptInput:
        return self.query_one("#prompt", PromptInput)

    def refresh_session_label(self) -> None:
        """Show which session the next message goes to, by its title when it has one (and remember it:
        the next start continues it)."""
        self.huichat.last_session.save(self.session_id)
        if self.session_id is None:
            self.session_status = "new session"
            return
        title = f"{self.session_title} · " if self.session_title else ""
        self.session_status = f"{title}session {self.session_id}"

    def leave_edit(self) -> bool:
        """Stop editing; the draft the edit set aside goes back into the prompt. True when there was one."""
        self.editing = None
        draft, self.draft = self.draft, ""
        if draft:
            self.prompt.text = draft
            self.prompt.move_cursor(self.prompt.document.end)
        return bool(draft)

    def unsent(self) -> str:
        """The user's text not sent: the prompt's, or during an edit the draft it set aside (the edit
        itself is left, as Esc leaves it)."""
        return self.draft if self.editing is not None else self.prompt.text

    def restore_prompt(self, text: str) -> None:
        """Give the user's text back (nothing typed is ever lost)."""
        prompt = self.prompt
        if not prompt.text.strip():
            prompt.text = text
            prompt.move_cursor(prompt.document.end)
        prompt.focus()

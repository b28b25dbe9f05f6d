"""The chat screen itself: its keys, its layout and where the focus goes."""

from __future__ import annotations

import time

from textual import events, on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, VerticalScroll
from textual.widgets import Footer, Header

from huichat.app.tui.screens.chat.branches import ChatBranches
from huichat.app.tui.widgets.chat_message import ChatMessage
from huichat.app.tui.widgets.memory_panel import MemoryPanel
from huichat.app.tui.widgets.prompt_input import PromptInput
from huichat.app.tui.widgets.status_line import StatusLine
from huichat.app.wording import plural

_MESSAGE_LETTERS = frozenset(b.key for b in ChatMessage.BINDINGS if isinstance(b, Binding) and len(b.key) == 1)
"""A message's letter keys (c, b, e, r): on a message they are never text, even when they cannot act."""

_BURST = 0.3
"""Seconds after a key typed over the panel or a message went to the prompt during which the next
keys that reach the screen are taken as more of the same typing."""


class ChatScreen(ChatBranches):
    """One conversation in takeover mode."""

    BINDINGS = [
        Binding("ctrl+f", "search", "Search"),
        Binding("f2", "toggle_panel", "Memory"),
        Binding("ctrl+n", "new_session", "New"),
        Binding("ctrl+o", "open_session", "Sessions"),
        Binding("ctrl+r", "prompt_history", "History"),
        Binding("f4", "regenerate", "Regenerate"),
        Binding("ctrl+g", "external_editor", "Editor", show=False),
        Binding("ctrl+up", "focus_messages", "Messages", show=False),
        Binding("f1", "help", "Help"),
        # where nothing is being typed (the transcript, the memory panel)
        Binding("slash", "search", "Search", show=False),
        Binding("question_mark", "help", "Help", show=False),
        Binding("escape", "focus_prompt", "Prompt", show=False),
        # while a reply streams, Esc and ctrl+c stop it from anywhere (check_action lets both
        # fall through to their usual meaning otherwise: back to the prompt, copy, quit hint)
        Binding("escape", "stop", "Stop", priority=True),
        Binding("ctrl+c", "stop", "Stop", show=False, priority=True),
    ]

    HORIZONTAL_BREAKPOINTS = [(0, "-narrow"), (90, "-wide")]
    """Below 90 columns the memory panel sits under the conversation instead of beside it."""
    # ---------------------------------------------------------------- compose

    def compose(self) -> ComposeResult:
        ui = self.huichat.runtime.loaded.config.ui
        yield Header()
        with Horizontal(id="main"):
            yield VerticalScroll(id="transcript")
            yield MemoryPanel(self.huichat.runtime.zone.tz, ui.snippet_chars, id="panel")
        yield PromptInput(id="prompt", cursor_blink=ui.cursor_blink)
        yield StatusLine(id="status").data_bind(
            provider=ChatScreen.provider_status,
            session=ChatScreen.session_status,
            memory=ChatScreen.memory_status,
            progress=ChatScreen.catch_up_status,
            busy=ChatScreen.busy,
        )
        yield Footer()

    def on_mount(self) -> None:
        from huichat.app.prompt_history import FILE_NAME, PromptHistory

        self.history = PromptHistory(self.huichat.runtime.loaded.paths.data_dir / FILE_NAME)
        self.prompt.sent = self.history.entries
        self.transcript.anchor()
        self.prompt.focus()
        self.panel_open = self.huichat.runtime.loaded.config.ui.memory_panel == "open"
        self.set_reactive(ChatScreen.role, self.huichat.start_role or "")
        self.watch(self.app, "provider_name", self._provider_changed)
        notice = self.provider_notice()
        self.transcript.mount(ChatMessage("system", notice or self.welcome(), label="setup" if notice else "huichat"))
        self.track_memory()

    def on_key(self, event: events.Key) -> None:
        # a character that reached the screen unhandled was typed where nothing takes text: keys
        # typed while the app was starting (before anything had focus), or over the memory panel
        # or the transcript. They are the words of a message, not lost keystrokes. So are the keys
        # of the same burst that were already on their way to the panel or a message when the
        # first one moved the focus: "tell me" over the panel ran its e (correct) and l, and a
        # burst's x would have forgotten the highlighted turn.
        burst = time.monotonic() - self._typed_at < _BURST
        if not burst:
            self._blind = False
        message_key = event.key in _MESSAGE_LETTERS and event.key not in self.active_bindings
        if not burst and message_key and isinstance(self.focused, ChatMessage):
            # e or r on a message that cannot take them now: said, not typed into the draft
            event.stop()
            why = "Wait for the current reply to finish." if self.replying else "This message has no stored turn."
            self.notify(why, timeout=3)
            return
        if event.is_printable and event.character and (burst or event.key not in self.active_bindings):
            event.stop()
            self._blind = self._blind or self.focused is None
            self._typed_at = time.monotonic()
            self.set_focus(self.prompt)
            self.prompt.insert(event.character)
        elif burst and (event.key == "enter" or (self._blind and event.key == "ctrl+j")):
            # the burst's Enter sends it (not: open the highlighted turn). So does the ctrl+j of
            # a burst typed before anything had focus (before the window painted): until huichat
            # has the terminal, the terminal itself turns Enter into ctrl+j
            event.stop()
            self._typed_at = 0.0
            self._blind = False
            self.set_focus(self.prompt)
            self.prompt.submit()
        elif burst and event.key in PromptInput.NEWLINE_KEYS:
            # in place: left to the prompt's binding, it ran after the rest of the burst
            event.stop()
            self.set_focus(self.prompt)
            self.prompt.action_newline()

    def on_descendant_focus(self, event: events.DescendantFocus) -> None:
        if event.widget is not self.prompt:  # the focus moved on purpose (↓, ctrl+↑): its keys are keys again
            self._typed_at = 0.0

    def on_screen_resume(self) -> None:
        # back from search, a turn or a dialog: typing goes to the prompt again
        self.prompt.focus()

    @on(PromptInput.LeaveRequested)
    def _leave_prompt(self, event: PromptInput.LeaveRequested) -> None:
        if self.panel_open and self.panel.hits:
            self.panel.focus_list()
        elif event.up:
            self.action_focus_messages()

    def action_focus_messages(self) -> None:
        """ctrl+up: into the conversation, on its last message (c copies it, b its code, ↑ ↓ move)."""
        messages = list(self.transcript.query(ChatMessage))
        if messages:
            messages[-1].focus()

    @on(ChatMessage.StepRequested)
    async def _step(self, event: ChatMessage.StepRequested) -> None:
        messages = list(self.transcript.query(ChatMessage))
        index = messages.index(event.message) + event.step
        if index < 0 and await self.show_earlier() is not None:  # ↑ above a long session's first shown turn
            messages = list(self.transcript.query(ChatMessage))
            index = messages.index(event.message) + event.step
        elif index >= len(messages) and await self.show_later() is not None:  # ↓ below a session opened on a turn
            messages = list(self.transcript.query(ChatMessage))
        if index >= len(messages):
            self.prompt.focus()
        elif index >= 0:
            messages[index].focus()
            self.transcript.scroll_to_widget(messages[index], animate=False)

    @on(ChatMessage.CopyRequested)
    def _copy(self, event: ChatMessage.CopyRequested) -> None:
        self.copy_text(event.text, event.what)

    def copy_text(self, text: str, what: str) -> None:
        """Put ``text`` on the clipboard (OSC 52: it works over ssh too) and say so."""
        self.app.copy_to_clipboard(text)
        self.notify(f"Copied {what} ({plural(len(text), 'character')}): {_preview(text)}", timeout=3)

    def action_copy_last_reply(self) -> None:
        """Palette: the last answer, as written."""
        answers = [m for m in self.transcript.query(ChatMessage) if m.role == "assistant" and m.text]
        if not answers:
            self.notify("No reply to copy yet.", timeout=3)
            return
        answers[-1].action_copy()

    def action_copy_last_code(self) -> None:
        """Palette: the last code block of the conversation."""
        from huichat.app.tui.widgets.chat_message import code_blocks

        blocks = [b for m in self.transcript.query(ChatMessage) if m.role != "system" for b in code_blocks(m.text)]
        if not blocks:
            self.notify("No code block in this conversation.", timeout=3)
            return
        self.copy_text(blocks[-1].removesuffix("\n"), "the last code block")

    def action_external_editor(self) -> None:
        """ctrl+g: write the prompt in $VISUAL / $EDITOR; the text comes back into the prompt."""
        from huichat.app.tui.editor import EditorError, edit

        try:
            text = edit(self.app, self.prompt.text)
        except EditorError as exc:
            self.notify(str(exc), title="Editor", severity="error", timeout=6)
            return
        self.prompt.text = text
        self.prompt.move_cursor(self.prompt.document.end)
        self.prompt.focus()

    def action_search(self) -> None:
        """Open the search screen."""
        from huichat.app.tui.screens.search import SearchScreen

        runtime = self.huichat.runtime
        ui = runtime.loaded.config.ui
        self.app.push_screen(
            SearchScreen(self.search_memory, self.recall_turn, runtime.zone.tz, ui.snippet_chars, ui.cursor_blink)
        )

    def action_help(self) -> None:
        """Show every binding."""
        from huichat.app.tui.screens.help import HelpScreen

        self.app.push_screen(HelpScreen())

    @work(group="history", exit_on_error=False)
    async def action_prompt_history(self) -> None:
        """ctrl+r: search the prompts sent before (newest first); the chosen one goes into the prompt to edit."""
        from huichat.app.tui.screens.picker import Choice, PickerScreen

        entries = list(reversed(self.history.entries if self.history is not None else []))
        choices = [Choice(text, " ⏎ ".join(text.splitlines())[:200], text) for text in entries]
        picker = PickerScreen("Prompt history", choices, empty="No prompt matches.", ranked=False)
        chosen = await self.app.push_screen_wait(picker)
        if chosen is not None:
            self.prompt.text = chosen
            self.prompt.move_cursor(self.prompt.document.end)
            self.prompt.focus()


_PREVIEW = 48
"""Characters of a copied text the notice shows: which message or block it was."""


def _preview(text: str) -> str:
    """The start of ``text`` on one line, quoted, cut with "…" past ``_PREVIEW`` characters."""
    flat = " ".join(text.split())
    return f"“{flat if len(flat) <= _PREVIEW else flat[: _PREVIEW - 1] + '…'}”"

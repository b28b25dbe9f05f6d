"""The chat screen: transcript, prompt, memory panel and status — it owns the conversation."""

from __future__ import annotations

import asyncio
import os
from typing import TYPE_CHECKING, Any

from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, VerticalScroll
from textual.reactive import reactive
from textual.screen import Screen
from textual.widgets import Footer, Header

from app.screens.help import HelpScreen
from app.screens.search import SearchScreen, describe_results
from app.screens.sessions import SessionsScreen
from app.screens.turn_detail import TurnDetailScreen
from app.widgets.chat_message import ChatMessage
from app.widgets.memory_panel import MemoryPanel
from app.widgets.prompt_input import PromptInput
from app.widgets.status_line import StatusLine
from providers.config import key_problem

if TYPE_CHECKING:
    from app.session import ChatSession, SessionEvent
    from app.tui import HuichatApp
    from memory.results import SearchResults
    from memory.turns import Turn


def _call_label(name: str, arguments: dict[str, Any]) -> str:
    shown = ", ".join(f"{k}={v!r}" for k, v in arguments.items() if v not in (None, ""))
    return f"🔎 {name}({shown})"


class ChatScreen(Screen[None]):
    """One conversation in takeover mode."""

    BINDINGS = [
        Binding("ctrl+f", "search", "Search"),
        Binding("slash", "search", "Search", show=False),
        Binding("f2", "toggle_panel", "Memory"),
        Binding("ctrl+n", "new_session", "New"),
        Binding("ctrl+o", "open_session", "Sessions"),
        Binding("ctrl+r", "retry", "Retry", show=False),
        Binding("f1,question_mark", "help", "Help"),
    ]

    panel_open: reactive[bool] = reactive(False)

    def __init__(self) -> None:
        super().__init__()
        self.session: ChatSession | None = None
        self.failed_text: str | None = None
        self._replying = False

    @property
    def huichat(self) -> HuichatApp:
        from app.tui import HuichatApp

        assert isinstance(self.app, HuichatApp)
        return self.app

    # ---------------------------------------------------------------- compose

    def compose(self) -> ComposeResult:
        app = self.huichat
        yield Header()
        with Horizontal(id="main"):
            yield VerticalScroll(id="transcript")
            yield MemoryPanel(app.zone.tz, app.loaded.config.ui.snippet_chars, id="panel")
        yield PromptInput(id="prompt", cursor_blink=app.loaded.config.ui.cursor_blink)
        yield StatusLine(id="status")
        yield Footer()

    def on_mount(self) -> None:
        self.query_one("#transcript", VerticalScroll).anchor()
        self.query_one("#prompt", PromptInput).focus()
        self.panel_open = self.huichat.loaded.config.ui.memory_panel == "open"
        self.refresh_provider()
        notice = self.provider_notice()
        if notice:
            self.query_one("#transcript").mount(ChatMessage("system", notice, label="setup"))
        self.track_services()

    def watch_panel_open(self, open_: bool) -> None:
        self.set_class(open_, "-panel-open")

    # ----------------------------------------------------------------- status

    def provider_notice(self) -> str:
        """What to configure when no provider can be used; '' when one can."""
        app = self.huichat
        providers = app.loaded.config.providers
        config_file = app.loaded.paths.config_file
        if not providers.named:
            return (
                "**No LLM provider is configured.** Add one to "
                f"`{config_file}`:\n\n```yaml\nproviders:\n  named:\n    deepseek:\n      model: deepseek/deepseek-chat\n"
                "      api_key_env: DEEPSEEK_API_KEY\n```\n\nthen set `DEEPSEEK_API_KEY` in your environment "
                "(any litellm model works; `api_base` reaches llama.cpp, vLLM, LM Studio or Ollama). "
                "Search (ctrl+f) and sessions (ctrl+o) work without it."
            )
        name = app.provider_name
        if name is None:
            return ""
        problem = key_problem(name, providers.named[name], os.environ)
        if problem:
            variable = providers.named[name].api_key_env
            return (
                f"**{problem}.** Set it in the environment that starts huichat (`export {variable}=…`), "
                f"or pick another provider with ctrl+p. Config: `{config_file}`. Search and sessions still work."
            )
        return ""

    def refresh_provider(self) -> None:
        """Show the current provider and model in the header and status line."""
        app = self.huichat
        name = app.provider_name
        status = self.query_one("#status", StatusLine)
        if name is None:
            status.provider = "no provider"
            app.sub_title = "no provider configured"
            return
        model = app.loaded.config.providers.named[name].model
        status.provider = f"{name} · {model}"
        app.sub_title = f"{name} · {model}"

    def refresh_session_label(self) -> None:
        """Show which session the next message goes to."""
        status = self.query_one("#status", StatusLine)
        handle = self.session.handle if self.session else None
        status.session = f"session {handle.session_id}" if handle else "new session"

    @work(group="services")
    async def track_services(self) -> None:
        """Follow the background loading of memory and the LLM client in the status line."""
        app = self.huichat
        status = self.query_one("#status", StatusLine)
        status.memory = "memory: loading embedding model and index…"
        status.busy = True
        kernel = await app.services.wait_kernel()
        if not self.is_attached:  # the app closed while memory was loading
            return
        if kernel is None:
            status.memory = f"memory unavailable: {app.services.kernel_error}"
            status.busy = False
            self.notify(app.services.kernel_error, title="Memory", severity="error", timeout=10)
            return
        await self.update_memory_status()
        status.busy = False
        if app.start_session:
            await self.open_session(app.start_session)

    @work(group="maintenance", exclusive=True)
    async def maintain_memory(self) -> None:
        """Fold new turns into the indexes now and then (compaction, index refresh), off the UI thread."""
        kernel = self.huichat.services.kernel
        if kernel is None or not kernel.needs_maintenance():
            return
        status = self.query_one("#status", StatusLine)
        memory = status.memory
        status.memory = f"{memory} · indexing…"
        status.busy = True
        try:
            await asyncio.to_thread(kernel.maintain)
        finally:
            status.memory = memory
            status.busy = False

    async def update_memory_status(self) -> None:
        """Turn count and embedding model."""
        kernel = self.huichat.services.kernel
        if kernel is None:
            return
        count = await asyncio.to_thread(kernel.count)
        if not self.is_attached:
            return
        self.query_one("#status", StatusLine).memory = f"memory: {count} turns · {kernel.embedder.name}"

    # ------------------------------------------------------------------ reply

    @on(PromptInput.Submitted)
    def _submitted(self, event: PromptInput.Submitted) -> None:
        if self._replying:
            self.notify("Wait for the current reply to finish.", timeout=3)
            return
        notice = self.provider_notice()
        if notice:
            self.notify(notice.split("**")[1] if "**" in notice else notice, severity="error", timeout=8)
            return
        event.prompt.clear()
        self.send(event.text)

    def send(self, text: str) -> None:
        """Show the user's message at once and answer it in the background."""
        message = ChatMessage("user", text, label="you")
        self.query_one("#transcript").mount(message)
        self.reply(text, message)

    async def _ensure_session(self) -> ChatSession | None:
        app = self.huichat
        kernel = await app.services.wait_kernel()
        llm = await app.services.wait_llm()
        if kernel is None or llm is None:
            return None
        if self.session is None:
            from app.session import ChatSession

            if app.provider_name:
                llm.switch(app.provider_name)
            config = app.loaded.config
            self.session = ChatSession(
                kernel, llm, config.chat, app.clock, app.zone.tz, app.zone.name, None, config.retriever.context_window
            )
        return self.session

    @work(exclusive=True, group="reply")
    async def reply(self, text: str, user_message: ChatMessage) -> None:
        """Run one reply: wait for memory if needed, stream, show recalls, store."""
        app = self.huichat
        self._replying = True
        try:
            if app.services.kernel is None or app.services.llm is None:
                user_message.state = "waiting"
                user_message.set_note("waiting for memory and the model to load…")
            session = await self._ensure_session()
            user_message.state = "done"
            user_message.set_note("")
            if session is None:
                reason = app.services.kernel_error or app.services.llm_error
                self.notify(reason, title="Cannot reply", severity="error", timeout=10)
                self.restore_prompt(text)
                user_message.remove()
                return
            panel = self.query_one("#panel", MemoryPanel)
            panel.clear("Recalling…")
            answer = ChatMessage("assistant", label=app.provider_name or "assistant")
            await self.query_one("#transcript").mount(answer)
            answer.state = "streaming"
            notes: list[str] = []
            async for event in session.reply(text):
                await self.show_event(event, answer, notes, panel)
        finally:
            self._replying = False

    async def show_event(self, event: SessionEvent, answer: ChatMessage, notes: list[str], panel: MemoryPanel) -> None:
        """Render one event of the reply."""
        from app.session import RecallFinished, ReplyCompleted, ReplyFailed, ToolCalled
        from providers.events import TextDelta

        if isinstance(event, TextDelta):
            await answer.append(event.text)
        elif isinstance(event, ToolCalled):
            notes.append(_call_label(event.name, event.arguments))
            answer.set_note("\n".join(notes))
        elif isinstance(event, RecallFinished):
            self.show_recall(event.results, event.turn, event.error, panel)
        elif isinstance(event, ReplyCompleted):
            await answer.finish("done")
            self.failed_text = None
            self.refresh_session_label()
            await self.update_memory_status()
            self.maintain_memory()
        elif isinstance(event, ReplyFailed):
            await answer.finish("failed")
            hint = "press ctrl+r to retry" if event.turn is not None else "your message is back in the prompt"
            notes.append(f"⚠ {event.message} — {hint}")
            answer.set_note("\n".join(notes))
            self.notify(event.message, title="Reply failed", severity="error", timeout=8)
            if event.turn is None:
                self.restore_prompt(event.user_text)
            else:
                self.failed_text = event.user_text
                self.refresh_session_label()

    def show_recall(self, results: SearchResults | None, turn: Turn | None, error: str, panel: MemoryPanel) -> None:
        """Put what a memory tool found into the panel (opening it when configured so)."""
        from memory.results import SearchHit

        if error:
            panel.show([], f"⚠ {error}", append=True)
            return
        if results is not None:
            panel.show(list(results), describe_results(results), append=True)
        elif turn is not None:
            panel.show([SearchHit(turn, 1.0)], f"recall_by_id → {turn.id}", append=True)
        if panel.hits and self.huichat.loaded.config.ui.memory_panel == "auto":
            self.panel_open = True

    def restore_prompt(self, text: str) -> None:
        """Give the user's text back (nothing typed is ever lost)."""
        prompt = self.query_one("#prompt", PromptInput)
        if not prompt.text.strip():
            prompt.text = text
            prompt.move_cursor(prompt.document.end)
        prompt.focus()

    # ---------------------------------------------------------------- actions

    def action_toggle_panel(self) -> None:
        """Show or hide the memory panel."""
        self.panel_open = not self.panel_open
        if self.panel_open:
            self.query_one("#panel", MemoryPanel).query_one("OptionList").focus()
        else:
            self.query_one("#prompt", PromptInput).focus()

    async def fetch_turn(self, turn_id: str) -> Turn | None:
        """A turn by id, off the UI thread."""
        kernel = await self.huichat.services.wait_kernel()
        if kernel is None:
            return None
        found = await asyncio.to_thread(kernel.recall_by_id, turn_id)
        return found.turn

    async def search_memory(self, query: str) -> SearchResults:
        """The kernel's search as the user sees it (time words resolved, ±1 neighbours)."""
        from memory.errors import KernelError
        from memory.results import SearchRequest

        app = self.huichat
        kernel = await app.services.wait_kernel()
        if kernel is None:
            raise RuntimeError(app.services.kernel_error)
        now = app.clock()
        window = app.loaded.config.retriever.context_window
        try:
            return await asyncio.to_thread(kernel.search, SearchRequest(query, now, context_window=window))
        except KernelError as exc:
            from memory.results import SearchResults as Results

            self.notify(str(exc), severity="error")
            return Results((), query, query)

    async def on_memory_panel_turn_chosen(self, event: MemoryPanel.TurnChosen) -> None:
        turn = await self.fetch_turn(event.turn_id)
        if turn is not None:
            await self.app.push_screen(TurnDetailScreen(turn, event.hit_id, self.fetch_turn, self.huichat.zone.tz))

    def action_search(self) -> None:
        """Open the search screen."""
        app = self.huichat
        self.app.push_screen(
            SearchScreen(
                self.search_memory,
                self.fetch_turn,
                app.zone.tz,
                app.loaded.config.ui.snippet_chars,
                app.loaded.config.ui.cursor_blink,
            )
        )

    def action_help(self) -> None:
        """Show every binding."""
        self.app.push_screen(HelpScreen())

    async def action_new_session(self) -> None:
        """Start a new session: an empty transcript; memory keeps everything."""
        if self._replying:
            self.notify("Wait for the current reply to finish.", timeout=3)
            return
        if self.session is not None:
            self.session.start_new()
        await self.query_one("#transcript").remove_children()
        self.query_one("#panel", MemoryPanel).clear()
        self.refresh_session_label()
        self.notify("New session.", timeout=2)

    @work(group="sessions")
    async def action_open_session(self) -> None:
        """Choose a past session and continue it."""
        kernel = await self.huichat.services.wait_kernel()
        if kernel is None:
            return
        infos = await asyncio.to_thread(kernel.sessions)
        chosen = await self.app.push_screen_wait(SessionsScreen(infos, self.huichat.zone.tz))
        if chosen:
            await self.open_session(chosen)

    async def open_session(self, session_id: str) -> None:
        """Show a stored session's transcript and continue its anchor chain."""
        from memory.errors import KernelError

        session = await self._ensure_session()
        if session is None:
            return
        try:
            await session.resume(session_id)
        except KernelError as exc:
            self.notify(str(exc), severity="error")
            return
        transcript = self.query_one("#transcript")
        await transcript.remove_children()
        widgets = []
        for turn in session.turns:
            for message in turn.messages:
                widgets.append(
                    ChatMessage("user" if message.role == "user" else "assistant", message.text, label=message.who)
                )
            if turn.status != "ok":
                widgets[-1].add_class("-failed")
        await transcript.mount_all(widgets)
        transcript.scroll_end(animate=False)
        self.refresh_session_label()

    def action_retry(self) -> None:
        """Send the last failed message again."""
        if self.failed_text and not self._replying:
            text, self.failed_text = self.failed_text, None
            self.send(text)

    def switch_provider(self, name: str) -> None:
        """Use another provider for the next reply."""
        app = self.huichat
        app.provider_name = name
        if app.services.llm is not None:
            app.services.llm.switch(name)
        self.refresh_provider()
        notice = self.provider_notice()
        self.notify(
            notice.split("**")[1] if notice else f"Now using {name}.", severity="warning" if notice else "information"
        )

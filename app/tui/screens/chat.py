"""The chat screen: transcript, prompt, memory panel and status — it owns the conversation."""

from __future__ import annotations

import asyncio
import contextlib
import os
from dataclasses import dataclass
from functools import partial
from typing import TYPE_CHECKING, Any, cast

from rich.markup import escape
from textual import events, on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, VerticalScroll
from textual.message import Message
from textual.reactive import reactive
from textual.screen import Screen
from textual.widgets import Footer, Header

from huichat.app.progress import Pace
from huichat.app.tui.widgets.chat_message import ChatMessage, call_label
from huichat.app.tui.widgets.memory_panel import MemoryPanel
from huichat.app.tui.widgets.prompt_input import PromptInput
from huichat.app.tui.widgets.status_line import StatusLine
from huichat.memory.errors import KernelError
from huichat.memory.health import IndexState
from huichat.providers.config import key_problem
from huichat.providers.errors import ProviderError

if TYPE_CHECKING:
    from huichat.app.session import ChatSession, SessionEvent
    from huichat.app.tui.app import HuichatApp
    from huichat.app.tui.gateway import Gateway
    from huichat.app.tui.history import PromptHistory
    from huichat.memory.kernel import MemoryKernel
    from huichat.memory.results import SearchResults
    from huichat.memory.turns import Turn


@dataclass
class MemorySynced(Message):
    """Transcripts changed outside this screen (by hand, by another huichat) and were reconciled."""

    changed_ids: frozenset[str]


_CONTINUE_CANDIDATES = 20
"""Sessions looked at, newest first, for the last one the user had in the terminal."""


def _meta_of(session_file: str, kernel: MemoryKernel) -> dict[str, Any]:
    return kernel.session_meta(session_file)


def plural(count: int, noun: str) -> str:
    """``1 turn``, ``2 turns``."""
    return f"{count} {noun}{'' if count == 1 else 's'}"


class ChatScreen(Screen[None]):
    """One conversation in takeover mode."""

    BINDINGS = [
        Binding("ctrl+f", "search", "Search"),
        Binding("f2", "toggle_panel", "Memory"),
        Binding("ctrl+n", "new_session", "New"),
        Binding("ctrl+o", "open_session", "Sessions"),
        Binding("ctrl+r", "prompt_history", "History"),
        Binding("f4", "retry", "Retry"),
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

    panel_open: reactive[bool] = reactive(False)
    provider_status: reactive[str] = reactive("no provider")
    session_status: reactive[str] = reactive("new session")
    memory_status: reactive[str] = reactive("memory: loading…")
    busy: reactive[bool] = reactive(False)
    role: reactive[str] = reactive("")
    """The session's role (a name in chat.roles; '': none), shown in the status line."""
    replying: reactive[bool] = reactive(False, bindings=True)
    """A reply is being produced (Esc and ctrl+c stop it then)."""

    def __init__(self) -> None:
        super().__init__()
        self.session: ChatSession | None = None
        self.session_id: str | None = None
        """The stored session the next message continues (None: a new one)."""
        self.session_title = ""
        """That session's title (its topic), shown in the status line."""
        self.failed_text: str | None = None
        """The message whose reply failed or was stopped: what F4 sends again."""
        self.history: PromptHistory | None = None
        """The prompts sent, across sessions (↑ on an empty prompt, ctrl+r)."""
        self._memory_line = "memory: loading…"
        """The status line's memory part but for the catch-up's progress (``_show_memory``)."""
        self._catch_up: tuple[Pace, int, int] | None = None
        """While turns get their vectors: the catch-up's pace, how many it has done and of how many."""

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
            busy=ChatScreen.busy,
        )
        yield Footer()

    def on_mount(self) -> None:
        from huichat.app.tui.history import PromptHistory

        self.history = PromptHistory(self.huichat.runtime.loaded.paths.data_dir / "prompt_history.jsonl")
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
        # or the transcript. They are the words of a message, not lost keystrokes.
        if event.is_printable and event.character and event.key not in self.active_bindings:
            event.stop()
            self.prompt.focus()
            self.prompt.insert(event.character)

    def on_screen_resume(self) -> None:
        # back from search, a turn or a dialog: typing goes to the prompt again
        self.prompt.focus()

    def watch_panel_open(self, open_: bool) -> None:
        self.set_class(open_, "-panel-open")

    def refresh_provider_status(self) -> None:
        """The status line's provider part: its name, model and memory mode."""
        self._provider_changed(self.huichat.provider_name)

    def _provider_changed(self, name: str | None) -> None:
        providers = self.huichat.runtime.loaded.config.providers.named
        if name not in providers:
            self.provider_status = "no provider"
            return
        choice = self.huichat.memory_modes.choose(name, providers[name])
        # the role stays with the provider's name: a crowded status line keeps the part before " · "
        head = f"{name}, role {self.role}" if self.role else name
        self.provider_status = f"{head} · {providers[name].model} · memory: {choice.mode}"

    def watch_role(self) -> None:
        self._provider_changed(self.huichat.provider_name)

    async def choose_role(self, name: str) -> None:
        """Palette: answer in role ``name`` ('' : none) from the next reply on, in this session."""
        if self.session is not None:
            try:
                await self.session.choose_role(name)
            except KernelError as exc:
                self.notify(str(exc), title="Role", severity="error")
                return
        self.role = name
        self.notify(f"Role: {name}." if name else "No role: huichat's own prompt.", timeout=3)

    # ----------------------------------------------------------------- status

    def welcome(self) -> str:
        """The first screen when a provider is ready: what to do and which keys matter."""
        return (
            "Ask anything — earlier conversations are searched when they help "
            "(try [i]what did we decide about … last week?[/i]). "
            "[b]ctrl+f[/b] searches memory yourself · [b]F2[/b] shows what was recalled · "
            "[b]ctrl+o[/b] reopens a session · [b]F1[/b] lists every key."
        )

    def provider_problem(self) -> str:
        """Why no reply can be asked for, in one line; '' when a provider can be used."""
        app = self.huichat
        providers = app.runtime.loaded.config.providers
        if not providers.named:
            return "No LLM provider is configured."
        name = app.provider_name
        if name is None:
            return ""
        problem = key_problem(name, providers.named[name], os.environ)
        return f"{problem}." if problem else ""

    def provider_notice(self) -> str:
        """What to configure when no provider can be used (Rich markup); '' when one can."""
        app = self.huichat
        providers = app.runtime.loaded.config.providers
        config_file = escape(str(app.runtime.loaded.paths.config_file))
        problem = self.provider_problem()
        if not problem:
            return ""
        if not providers.named:
            return (
                f"[b]{problem}[/b] Add one to [b]{config_file}[/b]:\n\n"
                "[dim]  providers:\n    named:\n      deepseek:\n        model: deepseek/deepseek-chat\n"
                "        api_key_env: DEEPSEEK_API_KEY[/dim]\n\nthen set [b]DEEPSEEK_API_KEY[/b] in your environment "
                "(any litellm model works; [b]api_base[/b] reaches llama.cpp, vLLM, LM Studio or Ollama). "
                "Search (ctrl+f) and sessions (ctrl+o) work without it."
            )
        variable = providers.named[app.provider_name or ""].api_key_env
        return (
            f"[b]{escape(problem)}[/b] Set it in the environment that starts huichat "
            f"([b]export {escape(str(variable))}=…[/b]), or pick another provider with ctrl+p. "
            f"Config: [b]{config_file}[/b]. Search and sessions still work."
        )

    @work(group="memory-status", exit_on_error=False)
    async def track_memory(self) -> None:
        """Follow the background loading of memory in the status line, then reopen where the user left off."""
        self.busy = True
        self.memory_status = "memory: loading…"
        try:
            await self.gateway.kernel()
        except KernelError as exc:
            self.memory_status = "memory unavailable (chat still works)"
            self.notify(str(exc), title="Memory", severity="error", timeout=10)
            return
        finally:
            self.busy = False
        await self.update_memory_status()
        self.embed_pending()
        app = self.huichat
        if app.start_session:
            await self.open_session(app.start_session)
        elif app.runtime.loaded.config.ui.on_start == "continue" and self.session_id is None:
            await self.continue_last_session()

    async def update_memory_status(self) -> None:
        """Turn count and embedding model, or what the kernel's health says is wrong with the index."""
        try:
            kernel = await self.gateway.kernel()
            count = await self.gateway.count()
        except KernelError:
            failed = self.gateway.memory.ready
            if failed is not None and not failed.health.usable:  # it failed since it opened
                self.memory_status = "memory unavailable (chat still works)"
            return
        behind = " · index behind" if kernel.health.state is IndexState.BEHIND else ""
        self._memory_line = f"memory: {plural(count, 'turn')} · {kernel.embedder.name}{behind}"
        self._show_memory()

    def _show_memory(self) -> None:
        """The memory part of the status line, with the catch-up's progress (rate, time left) while it runs."""
        kernel = self.gateway.memory.ready
        waiting = kernel.pending_vectors if kernel is not None else 0
        pace, done, total = self._catch_up or (Pace(), 0, waiting)
        if total <= done:
            self.memory_status = self._memory_line
            return
        self.memory_status = f"{self._memory_line} · embedding {pace.describe(done, total, 'turns')}"

    def _embedded(self, done: int, total: int | None = None) -> None:
        """The catch-up has ``done`` turns (of ``total``, when it counted them again)."""
        if self._catch_up is not None:
            pace, _, known = self._catch_up
            pace.note(done)
            self._catch_up = (pace, done, known if total is None else total)
            self._show_memory()

    @work(group="embedding", exclusive=True, exit_on_error=False)
    async def embed_pending(self) -> None:
        """Give turns indexed without a vector their vectors, a batch at a time, off the UI thread."""
        kernel = self.gateway.memory.ready
        if kernel is None or not kernel.pending_vectors:
            return
        self.busy = True
        loop = asyncio.get_running_loop()
        self._catch_up = (Pace(), 0, kernel.pending_vectors)
        done = 0
        try:
            while kernel.pending_vectors:
                self._embedded(done, done + kernel.pending_vectors)  # turns written meanwhile count too
                await self.update_memory_status()

                def part(finished: int, _of: int, before: int = done) -> None:  # in the gateway's thread
                    loop.call_soon_threadsafe(self._embedded, before + finished)

                batch = await self.gateway.run(lambda k: k.embed_pending(progress=part))
                if not batch:
                    break
                done += batch
        except KernelError as exc:
            self.notify(str(exc), title="Memory", severity="warning")
        finally:
            self.busy = False
            self._catch_up = None
            await self.update_memory_status()

    @work(group="maintenance", exclusive=True, exit_on_error=False)
    async def maintain_memory(self) -> None:
        """Fold new turns into the indexes now and then (compaction, index refresh), off the UI thread."""
        kernel = self.gateway.memory.ready
        if kernel is None or not kernel.needs_maintenance():
            return
        self.busy = True
        try:
            await self.gateway.maintain()
        except KernelError as exc:
            self.notify(str(exc), title="Memory maintenance", severity="warning")
        finally:
            self.busy = False

    def refresh_session_label(self) -> None:
        """Show which session the next message goes to, by its title when it has one."""
        if self.session_id is None:
            self.session_status = "new session"
            return
        title = f"{self.session_title} · " if self.session_title else ""
        self.session_status = f"{title}session {self.session_id}"

    @work(group="title", exit_on_error=False)
    async def refresh_title(self, session: ChatSession) -> None:
        """Let the session title itself when due, beside the conversation (a reply never waits for it)."""
        titled = session.handle.session_id if session.handle else None
        title = await session.refresh_title(provider=self.huichat.provider_name)
        if title is not None and titled == self.session_id:
            self.session_title = title.text
            self.refresh_session_label()

    # ------------------------------------------------------------------ reply

    @on(PromptInput.Submitted)
    def _submitted(self, event: PromptInput.Submitted) -> None:
        if self.replying:
            self.notify("Wait for the current reply to finish.", timeout=3)
            return
        problem = self.provider_problem() or self.huichat.runtime.loaded.config.chat.message_problem(event.text)
        if problem:  # the text stays in the prompt
            self.notify(problem, severity="error", timeout=8)
            return
        event.prompt.clear()
        if self.history is not None:
            self.history.add(event.text)
        self.send(event.text)

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
    def _step(self, event: ChatMessage.StepRequested) -> None:
        messages = list(self.transcript.query(ChatMessage))
        index = messages.index(event.message) + event.step
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
        self.notify(f"Copied {what} ({plural(len(text), 'character')}).", timeout=3)

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

    @work(group="export", exit_on_error=False)
    async def action_export_session(self) -> None:
        """Palette: this session as Markdown into a folder the user picks (one file per session, as the CLI)."""
        from pathlib import Path

        from huichat.app.tui.screens.ask_path import AskPathScreen
        from huichat.memory.exports import ExportFormat
        from huichat.memory.exports.selection import Selection
        from huichat.memory.exports.writer import export

        session_id = self.session_id
        if session_id is None:
            self.notify("Nothing to export yet: this session has no turn.", timeout=4)
            return
        asked = AskPathScreen(f"Export session {session_id} as Markdown into the folder:", str(Path.cwd()))
        folder = await self.app.push_screen_wait(asked)
        if folder is None:
            return
        runtime = self.huichat.runtime
        out = Path(folder).expanduser()
        try:
            report = await asyncio.to_thread(
                export,
                runtime.loaded.paths.sessions_dir,
                ExportFormat.MARKDOWN,
                out,
                Selection(None, None, session_id),
                runtime.zone.tz,
            )
        except (KernelError, OSError) as exc:
            self.notify(str(exc), title="Export", severity="error", timeout=8)
            return
        if report.path is None:
            self.notify(f"Session {session_id} was not found in the transcripts.", severity="error")
            return
        self.notify(f"Exported to {report.path / f'{session_id}.md'}", title="Export", timeout=8)

    def send(self, text: str) -> None:
        """Show the user's message at once and answer it in the background."""
        message = ChatMessage("user", text, label="you")
        self.transcript.mount(message)
        self.reply(text, message)

    async def _ensure_session(self) -> ChatSession:
        """The conversation loop, once memory and the LLM client are loaded (raises their errors)."""
        if self.session is None:
            from huichat.app.session import ChatSession

            kernel = await self.gateway.kernel()
            llm = await self.gateway.llm()
            session = ChatSession.from_runtime(self.huichat.runtime, kernel=kernel, llm=llm)
            if self.session_id is not None:
                await session.resume(self.session_id)
            if session.handle is None:
                session.role = self.role
            elif not session.role and self.role:  # a stored session never given one takes the chosen role
                await session.choose_role(self.role)
            self.role = session.role
            self.session = session
        return self.session

    @work(exclusive=True, group="reply", exit_on_error=False)
    async def reply(self, text: str, user_message: ChatMessage) -> None:
        """Run one reply: wait for memory if needed, stream, show recalls, store."""
        self.replying = True
        try:
            if not (self.gateway.memory.settled and self.gateway.llm_client.settled):
                self.huichat.start_llm()  # a reply needs it now, not after memory
                user_message.state = "waiting"
                user_message.set_note("waiting for memory and the model to load…")
            try:
                session = await self._ensure_session()
            except (KernelError, ProviderError) as exc:
                self.notify(str(exc), title="Cannot reply", severity="error", timeout=10)
                self.restore_prompt(text)
                user_message.remove()
                return
            user_message.state = "done"
            user_message.set_note("")
            self.panel.clear("Recalling…")
            provider = self.huichat.provider_name
            answer = ChatMessage("assistant", label=provider or "assistant")
            await self.transcript.mount(answer)
            answer.state = "streaming"
            try:
                # closed explicitly on a stop, so the session keeps the stopped turn at once
                async with contextlib.aclosing(session.reply(text, provider=provider)) as events:
                    async for event in events:
                        await self.show_event(event, answer)
            except asyncio.CancelledError:
                await self.show_stopped(session, text, answer)
                raise
        finally:
            self.replying = False

    async def show_stopped(self, session: ChatSession, text: str, answer: ChatMessage) -> None:
        """Settle a stopped reply: what arrived stays, marked stopped; F4 asks again."""
        await answer.finish("stopped")
        answer.set_note("■ stopped — F4 asks again")
        self.failed_text = text
        if session.handle is not None:  # the stopped turn may have started the session
            self.session_id = session.handle.session_id
            self.session_title = session.topic
            self.refresh_session_label()

    async def show_event(self, event: SessionEvent, answer: ChatMessage) -> None:
        """Render one event of the reply."""
        from huichat.app.session import RecallFinished, ReplyCompleted, ReplyFailed, ToolCalled
        from huichat.providers.events import TextDelta

        if isinstance(event, TextDelta):
            await answer.append(event.text)
        elif isinstance(event, ToolCalled):
            answer.add_tool_note(call_label(event.name, event.arguments))
        elif isinstance(event, RecallFinished):
            self.show_recall(event.results, event.turn, event.error)
        elif isinstance(event, ReplyCompleted):
            await answer.finish("done")
            self.failed_text = None
            self.session_id = event.turn.session_id
            self.session_title = event.turn.topic
            self.refresh_session_label()
            self.refresh_provider_status()  # auto may have learnt a new mode
            await self.update_memory_status()
            self.maintain_memory()
            if self.session is not None:
                self.refresh_title(self.session)
        elif isinstance(event, ReplyFailed):
            await answer.finish("failed")
            hint = "press F4 to retry" if event.turn is not None else "your message is back in the prompt"
            answer.set_note(f"⚠ {event.message} — {hint}")
            self.notify(event.message, title="Reply failed", severity="error", timeout=8)
            if event.turn is None:
                self.restore_prompt(event.user_text)
            else:
                self.failed_text = event.user_text
                self.session_id = event.turn.session_id
                self.session_title = event.turn.topic
                self.refresh_session_label()

    def show_recall(self, results: SearchResults | None, turn: Turn | None, error: str) -> None:
        """Put what a memory tool found into the panel (opening it when configured so)."""
        from huichat.memory.results import SearchHit

        if error and results is None:
            self.panel.show([], f"⚠ {error}", append=True)
            return
        if results is not None:
            from huichat.app.tui.screens.search import describe_results

            scope = describe_results(results)
            if error:  # an id that does not exist: the user's message was searched instead
                scope = f"⚠ {error} · searched your message instead: {scope}"
            self.panel.show(list(results), scope, append=True)
        elif turn is not None:
            self.panel.show([SearchHit(turn, None)], f"recall_by_id → {turn.id}", append=True)
        if self.panel.hits and self.huichat.runtime.loaded.config.ui.memory_panel == "auto":
            self.panel_open = True

    def restore_prompt(self, text: str) -> None:
        """Give the user's text back (nothing typed is ever lost)."""
        prompt = self.prompt
        if not prompt.text.strip():
            prompt.text = text
            prompt.move_cursor(prompt.document.end)
        prompt.focus()

    # ---------------------------------------------------------------- actions

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "stop":
            return self.replying
        return True

    def action_stop(self) -> None:
        """Esc / ctrl+c while a reply streams: cancel it (the provider request and the tool loop with it)."""
        self.workers.cancel_group(self, "reply")

    def action_focus_prompt(self) -> None:
        """Esc: back to typing."""
        self.prompt.focus()

    def action_toggle_panel(self) -> None:
        """F2: open the memory panel and move into it; from inside it, close it."""
        if self.panel_open and self.panel.has_focus_within:
            self.panel_open = False
            self.prompt.focus()
            return
        self.panel_open = True
        self.panel.focus_list()

    async def fetch_turn(self, turn_id: str) -> Turn | None:
        """A turn by id, off the UI thread (None when memory is unavailable or the id unknown)."""
        try:
            return await self.gateway.turn(turn_id)
        except KernelError:
            return None

    async def search_memory(self, query: str, include_failed: bool = False) -> SearchResults:
        """The kernel's search as the user sees it (time words resolved, neighbours around hits)."""
        from huichat.memory.results import SearchRequest

        runtime = self.huichat.runtime
        window = runtime.loaded.config.retriever.context_window
        request = SearchRequest(query, runtime.clock(), context_window=window, include_failed=include_failed)
        return await self.gateway.search(request)

    async def on_memory_panel_turn_chosen(self, event: MemoryPanel.TurnChosen) -> None:
        from huichat.app.tui.screens.turn_detail import TurnDetailScreen

        turn = await self.fetch_turn(event.turn_id)
        if turn is not None:
            await self.app.push_screen(
                TurnDetailScreen(turn, event.hit_id, self.fetch_turn, self.huichat.runtime.zone.tz)
            )

    def action_search(self) -> None:
        """Open the search screen."""
        from huichat.app.tui.screens.search import SearchScreen

        runtime = self.huichat.runtime
        ui = runtime.loaded.config.ui
        self.app.push_screen(
            SearchScreen(self.search_memory, self.fetch_turn, runtime.zone.tz, ui.snippet_chars, ui.cursor_blink)
        )

    def action_help(self) -> None:
        """Show every binding."""
        from huichat.app.tui.screens.help import HelpScreen

        self.app.push_screen(HelpScreen())

    async def action_new_session(self) -> None:
        """Start a new session: an empty transcript; memory keeps everything."""
        if self.replying:
            self.notify("Wait for the current reply to finish.", timeout=3)
            return
        if self.session is not None:
            self.session.start_new()
            self.session.role = self.role  # the role chosen stays for the next session
        self.session_id = None
        self.session_title = ""
        self.failed_text = None
        await self.transcript.remove_children()
        self.panel.clear()
        self.refresh_session_label()
        self.notify("New session.", timeout=2)

    @work(group="sessions", exit_on_error=False)
    async def action_open_session(self) -> None:
        """Choose a past session and continue it."""
        from huichat.app.tui.screens.sessions import SessionsScreen

        try:
            infos = await self.gateway.sessions()
        except KernelError as exc:
            self.notify(str(exc), title="Sessions", severity="error")
            return
        chosen = await self.app.push_screen_wait(SessionsScreen(infos, self.huichat.runtime.zone.tz, self.session_id))
        if chosen:
            await self.open_session(chosen)

    async def continue_last_session(self) -> None:
        """At start-up: show the user's most recent session and continue it (ctrl+n starts a new one)."""
        try:
            infos = await self.gateway.sessions()
        except KernelError:
            return
        for info in infos[:_CONTINUE_CANDIDATES]:
            if self.session_id is not None or self.replying:
                return
            try:
                meta = await self.gateway.run(partial(_meta_of, info.session_file))
            except KernelError:
                return
            if meta.get("face") != "serve":  # an API client's conversation (huichat serve) is not the user's own
                await self.open_session(info.session_id, note="Continuing your last session · ctrl+n starts a new one")
                return

    async def open_session(self, session_id: str, note: str = "") -> None:
        """Show a stored session's transcript and continue its anchor chain."""
        if self.replying:
            self.notify("Wait for the current reply to finish.", timeout=3)
            return
        try:
            turns = await self.gateway.run(lambda kernel: kernel.session_turns(session_id))
        except KernelError as exc:
            self.notify(str(exc), severity="error")
            return
        if not turns:
            self.notify(f"No session '{session_id}'.", severity="error")
            return
        if self.session is not None:
            await self.session.resume(session_id)
            self.role = self.session.role
        self.session_id = session_id
        self.session_title = self.session.topic if self.session is not None else turns[-1].topic
        self.failed_text = None
        self.panel.clear()
        await self.transcript.remove_children()
        widgets = [widget for turn in turns for widget in ChatMessage.for_turn(turn)]
        if note:
            widgets.append(ChatMessage("system", note, label="huichat"))
        await self.transcript.mount_all(widgets)
        self.transcript.scroll_end(animate=False)
        self.refresh_session_label()

    @work(group="history", exit_on_error=False)
    async def action_prompt_history(self) -> None:
        """ctrl+r: search the prompts sent before (newest first); the chosen one goes into the prompt to edit."""
        from huichat.app.tui.screens.picker import Choice, PickerScreen

        entries = list(reversed(self.history.entries if self.history is not None else []))
        choices = [Choice(text, " ⏎ ".join(text.splitlines())[:200], text) for text in entries]
        chosen = await self.app.push_screen_wait(PickerScreen("Prompt history", choices, empty="No prompt matches."))
        if chosen is not None:
            self.prompt.text = chosen
            self.prompt.move_cursor(self.prompt.document.end)
            self.prompt.focus()

    def action_retry(self) -> None:
        """Send the last failed or stopped message again."""
        if self.replying:
            self.notify("Wait for the current reply to finish.", timeout=3)
            return
        if not self.failed_text:
            self.notify("Nothing to retry: the last reply did not fail or stop.", timeout=3)
            return
        text, self.failed_text = self.failed_text, None
        self.send(text)

    # ------------------------------------------ live sync hook (issue 13, memory over time)

    async def on_memory_synced(self, event: MemorySynced) -> None:
        """The app reconciled changed transcripts: update the count, embed, refresh what the panel shows."""
        await self.update_memory_status()
        self.embed_pending()
        stale = event.changed_ids & self.panel.shown_ids
        if not stale:
            return
        try:
            fresh = await self.gateway.run(lambda kernel: kernel.store.get(stale))
        except KernelError:
            return
        self.panel.replace_turns(fresh)

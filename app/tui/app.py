"""The Textual application: paints at once, loads memory and the LLM client in the background."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import sys
from collections.abc import Callable, Iterator
from functools import partial
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn, TypeVar

from textual import work
from textual.app import App
from textual.binding import Binding
from textual.command import Hit, Hits, Provider
from textual.notifications import SeverityLevel
from textual.reactive import reactive
from textual.screen import Screen
from textual.worker import Worker, WorkerState

from huichat.app import visible
from huichat.app.memory_modes import MODE_HELP, ModeBook, ModeSetting
from huichat.app.runtime import Runtime
from huichat.app.tui.gateway import Gateway, Loading
from huichat.memory.errors import KernelError

if TYPE_CHECKING:
    from huichat.app.tui.screens.chat import ChatScreen
    from huichat.app.tui.widgets.memory_panel import MemoryPanel
    from huichat.memory.imports.model import ImportedConversation
    from huichat.memory.kernel import MemoryKernel
    from huichat.memory.reconcile import ReconcileReport
    from huichat.memory.stats import MemoryStats
    from huichat.memory.watch import TranscriptWatcher

T = TypeVar("T")
STYLES = Path(str(resources.files("huichat") / "styles"))
"""The TCSS files, shipped as package data."""
MILESTONES = logging.getLogger("huichat.milestones")
"""The moments of the app's life (first_paint, memory_ready, llm_ready, quit), logged at INFO."""
_LOAD_DELAY = 0.05
"""Seconds between the first frame and the start of the heavy imports: the frame is composed and
handed to the driver's writer by then, and writing it takes milliseconds. 0.2 s cost memory and the
LLM client ~0.13 s each, with no change to the first paint (BENCHMARKS.md, start-up)."""
_JOB_CHECK = 60.0
"""Seconds between checks whether a daily memory job is due."""
_NOTICE_LINES = 6
"""At most this many lines in the notice of what reading the transcripts found (the rest are counted)."""


class HuichatCommands(Provider):
    """Palette commands: providers, sessions, search, memory panel, reindex."""

    def _commands(self) -> Iterator[tuple[str, Callable[[], object], str]]:
        app = self.app
        assert isinstance(app, HuichatApp)
        screen = app.chat_screen
        for name, provider in app.runtime.loaded.config.providers.named.items():
            current = " (current)" if name == app.provider_name else ""
            yield (f"Provider: use {name}{current}", partial(app.switch_provider, name), provider.model)
        if app.provider_name in app.runtime.loaded.config.providers.named:
            now = app.memory_modes.choose(
                app.provider_name, app.runtime.loaded.config.providers.named[app.provider_name]
            )
            for mode, what in MODE_HELP.items():
                current = " (current)" if mode == now.mode and now.why == "chosen" else ""
                yield (f"Memory mode: {mode}{current}", partial(app.set_memory_mode, mode), what)
        for name, text in app.runtime.loaded.config.chat.roles.items():
            current = " (current)" if name == screen.role else ""
            yield (f"Role: {name}{current}", partial(screen.choose_role, name), text[:80])
        if screen.role:
            yield ("Role: none", partial(screen.choose_role, ""), "huichat's own system prompt")
        yield ("New session", screen.action_new_session, "start an empty conversation (ctrl+n)")
        yield ("Open session…", screen.action_open_session, "reopen a past session (ctrl+o)")
        yield ("Rename session…", screen.action_rename_session, "give this session your own title")
        yield ("Search memory", screen.action_search, "search every stored turn (ctrl+f)")
        yield ("Search prompt history", screen.action_prompt_history, "the prompts you sent (ctrl+r)")
        yield ("Regenerate the last reply", screen.action_regenerate, "a new branch; the earlier reply is kept (F4)")
        yield ("Edit and resend the last message", screen.action_edit_last, "a new branch from there (e on a message)")
        yield ("Branch: previous", partial(screen.action_switch_last, -1), "of the last turn (← on a message ‹ n/m ›)")
        yield ("Branch: next", partial(screen.action_switch_last, 1), "of the last turn (→ on a message ‹ n/m ›)")
        yield ("Copy last reply", screen.action_copy_last_reply, "to the clipboard (c on a focused message)")
        yield ("Copy last code block", screen.action_copy_last_code, "to the clipboard (b on a focused message)")
        yield ("Edit prompt in $EDITOR", screen.action_external_editor, "$VISUAL or $EDITOR (ctrl+g)")
        yield ("Export session as Markdown…", screen.action_export_session, "this conversation into a folder")
        yield ("Toggle memory panel", screen.action_toggle_panel, "show or hide what was recalled (F2)")
        yield ("Forget a turn…", app.action_forget_turn, "it leaves search, recall and exports (x on a turn)")
        if app.last_forgotten:
            yield (
                f"Undo forget: turn {app.last_forgotten}",
                partial(app.forget_turn, app.last_forgotten, undo=True),
                "bring the turn forgotten last back",
            )
        yield ("Correct a turn…", app.action_correct_turn, "attach a note, recalled with it (e on a turn)")
        yield ("Reindex memory", app.action_reindex, "rebuild the index from the transcripts")
        yield (
            "Import chat history…",
            app.action_import_history,
            "ChatGPT, Claude, DeepSeek, llm, elia, JSONL — adds only what is new",
        )
        yield ("Memory statistics", app.action_stats, "tiers, importance, turns per week, recent recalls (F3)")
        yield (
            "Run lifecycle jobs now",
            partial(app.run_jobs, True),
            "score, move between tiers, group near-duplicates",
        )
        yield ("Help: key bindings", screen.action_help, "every binding (F1)")

    async def discover(self) -> Hits:
        for title, callback, help_text in self._commands():
            yield Hit(1.0, title, callback, help=help_text)

    async def search(self, query: str) -> Hits:
        matcher = self.matcher(query)
        for title, callback, help_text in self._commands():
            score = matcher.match(title)
            if score > 0:
                yield Hit(score, matcher.highlight(title), callback, help=help_text)


class HuichatApp(App[int]):
    """huichat: chat in the terminal with a memory that never forgets a turn."""

    TITLE = "huichat"
    BINDINGS = [Binding("f3", "stats", "Stats")]
    CSS_PATH = [STYLES / "app.tcss", STYLES / "chat.tcss", STYLES / "memory.tcss", STYLES / "stats.tcss"]
    COMMANDS = App.COMMANDS | {HuichatCommands}

    provider_name: reactive[str | None] = reactive(None)
    """The provider the next reply uses: the one place it is held (the header, the status line,
    the palette and each reply read it; the LLM client holds no choice of its own)."""

    def __init__(
        self,
        runtime: Runtime,
        *,
        start_provider: str | None = None,
        start_session: str | None = None,
        start_role: str | None = None,
    ) -> None:
        visible.install(tui=True)  # before the first widget renders a stored or streamed text
        from huichat.app.tui.widgets.prompt_input import read_alt_enter

        read_alt_enter()
        super().__init__()
        self.runtime = runtime
        self.start_session = start_session
        self.start_role = start_role
        """The role (``--role``) the first session is held in."""
        self.set_reactive(HuichatApp.provider_name, start_provider or runtime.loaded.config.providers.default_name())
        from huichat.app.tui.small_state import LastSession, PromptDraft
        from huichat.app.tui.theme_choice import ThemeChoice

        self.theme_choice = ThemeChoice(runtime.loaded.paths.data_dir / "theme.json", runtime.loaded.config.ui.theme)
        theme = self.theme_choice.theme()
        self.theme = theme if theme in self.available_themes else "textual-dark"
        self._gateway: Gateway | None = None
        self._watcher: TranscriptWatcher | None = None
        self._jobs_running = False
        self._synced_count: int | None = None
        """The number of turns the last sync found (another process's import changes it)."""
        self._llm_started = False
        self.memory_modes = ModeBook.shared(runtime.loaded.paths.data_dir)
        """How each provider gets at memory (the palette sets a mode for this run)."""
        self.last_session = LastSession(runtime.loaded.paths.data_dir / "last-session.json")
        """The session shown, kept for the next start."""
        self.prompt_draft = PromptDraft(runtime.loaded.paths.data_dir / "draft.json")
        """The prompt's unsent text, kept as the app quits for the next start in the same session."""
        self.last_forgotten: str | None = None
        """The turn forgotten last in this run (the palette offers to undo it)."""

    @property
    def gateway_started(self) -> bool:
        """True once the gateway exists (it is made on the app's event loop)."""
        return self._gateway is not None

    @property
    def gateway(self) -> Gateway:
        """The one way to memory and the LLM client (created on the app's event loop)."""
        if self._gateway is None:
            self._gateway = Gateway(self.start_llm)
        return self._gateway

    @property
    def chat_screen(self) -> ChatScreen:
        """The conversation screen (the bottom of the screen stack)."""
        from huichat.app.tui.screens.chat import ChatScreen

        for screen in self.screen_stack:
            if isinstance(screen, ChatScreen):
                return screen
        raise LookupError("the chat screen is not open")

    def get_default_screen(self) -> Screen[Any]:
        from huichat.app.tui.screens.chat import ChatScreen

        return ChatScreen()

    def notify(
        self,
        message: str,
        *,
        title: str = "",
        severity: SeverityLevel = "information",
        timeout: float | None = None,
        markup: bool = True,
    ) -> None:
        """Textual's notification, always as plain text (every screen's ``notify`` comes here): the
        messages carry errors, paths and what was said, where "[/INST]" or "[b]" is text, not markup."""
        super().notify(message, title=title, severity=severity, timeout=timeout, markup=False)

    def action_help_quit(self) -> None:
        """ctrl+c with nothing to stop or copy: how to quit (Textual's own notice, written in markup)."""
        for key, active in self.active_bindings.items():
            if active.binding.action in ("quit", "app.quit"):
                self.notify(f"Press {key} to quit the app", title="Do you want to quit?")
                return

    def on_mount(self) -> None:
        # a theme picked from now on (the palette) is kept for the next start
        self.theme_changed_signal.subscribe(self, lambda theme: self.theme_choice.save(theme.name))
        # heavy imports hold the GIL: start them only once the first frame is on screen
        self.call_after_refresh(MILESTONES.info, "first_paint")
        self.call_after_refresh(self.set_timer, _LOAD_DELAY, self._start_loading)

    def _start_loading(self) -> None:
        # one loader at a time: both hold the GIL while they import, so running them side by side
        # makes memory (what the first recall needs) wait for litellm; the LLM client follows
        # memory, or starts at once when a reply asks for it
        self.load_memory()
        self.keep_memory()

    def start_llm(self) -> None:
        """Start building the LLM client (once): after memory has loaded, or when a reply needs it first."""
        if self._llm_started:
            return
        self._llm_started = True
        self.load_llm()

    @work(thread=True, group="load", exit_on_error=False)
    def load_memory(self) -> None:
        """Import lancedb, load the embedding model, open and reconcile the index.

        Turns found in the transcripts but not in the index are added without vectors (found
        by their words at once); the chat screen embeds them in the background.
        """
        gateway = self.gateway
        opener = partial(self.runtime.open_kernel, embed=False)
        try:
            self._load("memory", opener, gateway.memory)
        finally:
            self._call_soon(self.start_llm)

    @work(thread=True, group="load", exit_on_error=False)
    def load_llm(self) -> None:
        """Import litellm (slow) and build the client; then warm the Markdown renderer the first reply uses
        (after: a reply cannot start before the client, and its first words take longer than this import)."""
        gateway = self.gateway
        self._load("llm", self.runtime.open_llm, gateway.llm_client)
        import textual.widgets._markdown  # noqa: F401 - markdown-it, off the event loop before the first answer

    def _load(self, name: str, factory: Callable[[], T], loading: Loading[T]) -> None:
        """Build one service in this worker thread and hand the outcome to the gateway."""
        try:
            service = factory()
        except loading.error as exc:
            self._call_soon(loading.failed, str(exc))
        except Exception as exc:  # a loader bug must not leave every waiting reply hanging
            what = "memory" if name == "memory" else "the LLM client"
            self._call_soon(loading.failed, f"{what} failed to load: {type(exc).__name__}: {exc}")
        else:
            self._call_soon(loading.loaded, service)
            MILESTONES.info(f"{name}_ready")

    def _call_soon(self, callback: Callable[..., None], *args: Any) -> None:
        with contextlib.suppress(RuntimeError):  # the app closed while this was loading
            self.call_from_thread(callback, *args)

    def watch_provider_name(self, name: str | None) -> None:
        providers = self.runtime.loaded.config.providers.named
        self.sub_title = f"{name} · {providers[name].model}" if name in providers else "no provider configured"

    def switch_provider(self, name: str) -> None:
        """Use another provider for the next reply."""
        self.provider_name = name
        problem = self.chat_screen.provider_problem()
        self.notify(problem or f"Now using {name}.", severity="warning" if problem else "information")

    def set_memory_mode(self, mode: ModeSetting) -> None:
        """Answer with ``mode`` from now on (``auto``: as configured and learnt), until the app ends."""
        name = self.provider_name
        providers = self.runtime.loaded.config.providers.named
        if name not in providers:
            self.notify("No provider is in use.", severity="warning")
            return
        self.memory_modes.override(name, None if mode == "auto" else mode)
        choice = self.memory_modes.choose(name, providers[name])
        self.chat_screen.refresh_provider_status()
        self.notify(f"{name}: memory mode {choice.label()}.")

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        """The safety net: a worker that fails says so in one line instead of ending the app."""
        if event.state == WorkerState.ERROR and event.worker.error is not None:
            error = event.worker.error
            self.log.error(f"worker {event.worker.name} failed", error)
            self.notify(f"{type(error).__name__}: {error}"[:300], title="Something went wrong", severity="error")

    def on_memory_panel_forget_asked(self, event: MemoryPanel.ForgetAsked) -> None:
        event.stop()
        self.forget_turn(event.turn_id)

    async def on_memory_panel_open_asked(self, event: MemoryPanel.OpenAsked) -> None:
        """Close the views above the chat and show the turn in its conversation."""
        event.stop()
        screen = self.chat_screen
        if screen.replying:
            self.notify("Wait for the current reply to finish.", timeout=3)
            return
        while self.screen is not screen:
            self.pop_screen()
        await screen.open_session(event.session_id, at=event.turn_id)

    def on_memory_panel_correct_asked(self, event: MemoryPanel.CorrectAsked) -> None:
        event.stop()
        self.correct_turn(event.turn_id)

    @work(group="turn-edits", exit_on_error=False)
    async def forget_turn(self, turn_id: str, *, undo: bool = False) -> None:
        """Forget a turn (``undo``: bring it back) in the background (``turn_edits``)."""
        from huichat.app.tui import turn_edits  # the turn view's Markdown loads with the first answer, not at start

        await turn_edits.forget(self, turn_id, undo=undo)

    @work(group="turn-edits", exit_on_error=False)
    async def correct_turn(self, turn_id: str) -> None:
        """Ask for a correction and attach it to a turn (``turn_edits``)."""
        from huichat.app.tui import turn_edits

        await turn_edits.correct(self, turn_id)

    @work(group="turn-edits", exit_on_error=False)
    async def action_forget_turn(self) -> None:
        """The palette's "Forget a turn…": ask for its id, then forget it."""
        from huichat.app.tui import turn_edits

        turn_id = await turn_edits.ask_turn_id(self, "Forget")
        if turn_id:
            await turn_edits.forget(self, turn_id)

    @work(group="turn-edits", exit_on_error=False)
    async def action_correct_turn(self) -> None:
        """The palette's "Correct a turn…": ask for its id, then for the correction."""
        from huichat.app.tui import turn_edits

        turn_id = await turn_edits.ask_turn_id(self, "Correct")
        if turn_id:
            await turn_edits.correct(self, turn_id)

    @work(group="reindex", exclusive=True, exit_on_error=False)
    async def action_reindex(self) -> None:
        """Rebuild the index from the transcripts in the background."""
        self.notify("Reindexing memory from the transcripts…", timeout=3)
        try:
            report = await self.gateway.reindex()
        except KernelError as exc:
            self.notify(str(exc), title="Reindex failed", severity="error")
            return
        self.notify(f"Reindexed {report.added + report.updated} turns from {report.files_checked} transcripts.")
        self.tell_reconciled(report)
        await self.chat_screen.update_memory_status()

    @work(group="import", exclusive=True, exit_on_error=False)
    async def action_import_history(self) -> None:
        """Ask for a path, then import it in the background; the chat keeps working meanwhile."""
        from huichat.app.tui.screens.import_history import ImportHistoryScreen

        path = await self.push_screen_wait(ImportHistoryScreen())
        if path is not None:
            await self.import_history(path)

    async def import_history(self, path: Path) -> None:
        """Check ``path`` (nothing is written if it cannot be read), import it, report, then embed.

        Progress arrives as notifications at each quarter; the turns are found by their words
        at once and by meaning once the background embedding reaches them.
        """
        from huichat.app.wording import plural
        from huichat.memory.imports.ingest import import_conversations
        from huichat.memory.imports.model import ImportFormatError
        from huichat.memory.imports.reader import ImportReader
        from huichat.memory.imports.report import report_rows
        from huichat.memory.imports.summary import SummaryBuilder

        self.notify(f"Reading {path}…", title="Import", timeout=4)
        builder = SummaryBuilder()
        limits = self.runtime.loaded.config.imports

        def check() -> None:
            for conversation in ImportReader([path], limits=limits).conversations():
                builder.add(conversation)

        try:
            await asyncio.to_thread(check)
        except ImportFormatError as exc:
            self.notify(f"{exc}\nNothing was imported.", title="Import failed", severity="error", timeout=15)
            return
        summary = builder.build()
        total = max(1, summary.messages)
        self.notify(
            f"Importing {plural(summary.conversations, 'conversation')} ({plural(summary.messages, 'message')})…",
            title="Import",
        )
        done = [0, 0]  # messages, quarters announced

        def progress(conversation: ImportedConversation) -> None:
            done[0] += len(conversation.messages)
            quarter = 4 * done[0] // total
            if done[1] < quarter < 4:
                done[1] = quarter
                self._call_soon(
                    partial(self.notify, title="Import"), f"{quarter * 25}% imported ({done[0]:,} messages)"
                )

        now = self.runtime.clock()
        try:
            tally = await self.gateway.run(
                lambda kernel: import_conversations(
                    kernel, ImportReader([path], limits=limits).conversations(), now, progress
                )
            )
        except (KernelError, ImportFormatError) as exc:
            self.notify(str(exc), title="Import stopped (run it again to resume)", severity="error", timeout=15)
            return
        rows = report_rows(summary, tally, self.runtime.zone.tz, dry_run=False)
        lines = [f"{row.label}: {row.count} — {row.detail}" for row in rows]
        lines.append("Searchable by their words now; by meaning as the background embedding catches up.")
        self.notify("\n".join(lines), title="Import finished", timeout=30)
        screen = self.chat_screen
        await screen.update_memory_status()
        screen.embed_pending()

    async def action_quit(self) -> None:
        MILESTONES.info("quit")
        with contextlib.suppress(LookupError):
            screen = self.chat_screen
            self.last_session.save(screen.session_id, closing=True)
            self.prompt_draft.save(screen.session_id, screen.unsent())
        self.exit(0)

    # ------------------------------------------------- memory over time (issue 13)

    @work(group="memory-upkeep", exit_on_error=False)
    async def keep_memory(self) -> None:
        """Once memory is open: watch the transcripts folder, and run the daily jobs when due."""
        try:
            kernel = await self.gateway.kernel()
            self.tell_reconciled(kernel.last_report)
            # the first search of a new memory measures the calibration's reference: do it now
            await self.gateway.run(lambda opened: opened.prepare_search())
        except KernelError:
            return
        config = self.runtime.loaded.config
        if config.sync.watch:
            from huichat.memory.watch import TranscriptWatcher

            watcher = TranscriptWatcher(
                kernel.sessions_dir,
                lambda _changed: self._call_soon(self._sync_soon),
                config.sync.watch_debounce_ms / 1000,
            )
            await asyncio.to_thread(watcher.start)
            self._watcher = watcher
        lifecycle = config.lifecycle
        if lifecycle.enabled or lifecycle.importance.enabled or config.consolidation.enabled:
            self.run_jobs()
            self.set_interval(_JOB_CHECK, self.run_jobs)

    def tell_reconciled(self, report: ReconcileReport | None) -> None:
        """Say what reading the transcripts found and did (a repair, a part that could not be read)."""
        lines = report.notices(_NOTICE_LINES) if report is not None else []
        if lines:
            # file names and transcript text are shown as written, never read as markup
            self.notify("\n".join(lines), title="Memory", severity="warning", timeout=30, markup=False)

    def _sync_soon(self) -> None:
        self.sync_memory()

    @work(group="memory-sync", exit_on_error=False)
    async def sync_memory(self) -> None:
        """Reconcile transcripts changed by hand or by another huichat, then tell the chat screen."""
        from huichat.app.tui.screens.chat import MemorySynced

        def reconcile(kernel: MemoryKernel) -> tuple[ReconcileReport, bool, int]:
            report = kernel.reconcile(embed=False)
            # `huichat import` indexes what it writes (its files are no change to reconcile): the count
            # of turns waiting for vectors is read again, and the chat embeds them now, not at its next start
            before = kernel.pending_vectors
            return report, kernel.recount_pending() != before, kernel.count()

        try:
            report, waiting_changed, count = await self.gateway.run(reconcile)
        except KernelError as exc:
            self.notify(str(exc), title="Memory sync", severity="warning")
            return
        self.tell_reconciled(report)
        # turns another process stored with their vectors change neither: the count of turns shown does
        counted, self._synced_count = self._synced_count, count
        if report.changed_ids or waiting_changed or counted != count:
            self.chat_screen.post_message(MemorySynced(frozenset(report.changed_ids)))

    @work(group="memory-jobs", exit_on_error=False)
    async def run_jobs(self, force: bool = False) -> None:
        """The daily lifecycle jobs, when due (or now, from the palette), in a thread."""
        if self._jobs_running:
            if force:
                self.notify("The memory jobs are already running.", timeout=3)
            return
        self._jobs_running = True
        now = self.runtime.clock()
        config = self.runtime.loaded.config

        def jobs(kernel: MemoryKernel) -> str:
            from huichat.memory.joblog import JobLog
            from huichat.memory.lifecycle import run_scheduled

            scored, grouped = run_scheduled(kernel, now, config.consolidation, JobLog(kernel.data_dir), force=force)
            # a scheduled run says what it changed, if anything; a run asked for says what it found
            done = []
            if scored is not None and (scored.moves or force):
                done.append(scored.skipped or f"{len(scored.moves)} turns moved between tiers")
            if grouped is not None and not grouped.skipped:
                if grouped.grouped or force:
                    done.append(f"{grouped.grouped} near-duplicates grouped")
                if grouped.released:
                    done.append(f"{grouped.released} members released (no longer near-duplicates)")
            return " · ".join(done)

        try:
            summary = await self.gateway.run(jobs)
        except KernelError as exc:
            self.notify(str(exc), title="Memory jobs", severity="warning")
            return
        finally:
            self._jobs_running = False
        if force or summary:
            self.notify(summary or "Nothing was due.", title="Memory jobs", timeout=5)

    def action_stats(self) -> None:
        """F3: the statistics screen."""
        from huichat.app.tui.screens.stats import StatsScreen

        if isinstance(self.screen, StatsScreen):
            return

        async def load() -> MemoryStats:
            from huichat.memory.stats import collect

            return await self.gateway.run(lambda kernel: collect(kernel, self.runtime.clock()))

        self.push_screen(StatsScreen(load, self.chat_screen.fetch_turn, self.runtime.zone.tz))

    def on_unmount(self) -> None:
        if self._watcher is not None:
            self._watcher.stop()


def run_tui(runtime: Runtime, provider: str | None, session_id: str | None, role: str | None = None) -> NoReturn:
    """Open the chat app; end the process with its exit status once it closes.

    The app runs on a loop of its own, so leaving it does not wait for the loop's executor:
    quitting returns at once even while lancedb or litellm is still importing in a worker,
    or a long job such as a reindex runs. Memory is closed (statistics flushed) first.
    """
    app = HuichatApp(runtime, start_provider=provider, start_session=session_id, start_role=role)
    loop = asyncio.new_event_loop()
    app.run(loop=loop)
    code = app.return_code or 0
    kernel = app.gateway.memory.ready if app.gateway_started else None
    if kernel is not None:
        kernel.close()
    # everything worth keeping is on disk (transcripts are fsynced per turn, the kernel closed):
    # skip the interpreter's teardown of torch, lancedb and litellm, which takes longer than
    # the whole quit may, and never wait for a loader thread that is still importing
    logging.shutdown()
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)

"""Memory in the chat: loading it, the catch-up of vectors, maintenance, the panel of recalls."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

from textual import work

from huichat.app.progress import Pace
from huichat.app.tui.screens.chat.base import MemorySynced
from huichat.app.tui.screens.chat.sessions import ChatSessions
from huichat.app.tui.widgets.memory_panel import MemoryPanel, nearest_below
from huichat.app.wording import plural
from huichat.memory.errors import KernelError
from huichat.memory.health import IndexState

if TYPE_CHECKING:
    from huichat.memory.results import RecallResult, SearchResults
    from huichat.memory.turns import Turn


_ELSEWHERE_POLL = 3.0
"""Seconds between looks at the turns still waiting while another process embeds them."""


class ChatMemory(ChatSessions):
    """The memory part of the chat screen."""

    def watch_panel_open(self, open_: bool) -> None:
        self.set_class(open_, "-panel-open")

    @work(group="memory-status", exit_on_error=False)
    async def track_memory(self) -> None:
        """Follow the background loading of memory in the status line, then reopen where the user left off
        (with the draft left unsent there)."""
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
        if not self.prompt.text.strip():  # what was typed since the window opened is not replaced
            draft = app.prompt_draft.take(self.session_id)
            if draft:
                self.restore_prompt(draft)

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
        """The memory part of the status line and the catch-up's progress (rate, time left) while it runs."""
        kernel = self.gateway.memory.ready
        waiting = kernel.pending_vectors if kernel is not None else 0
        pace, done, total = self._catch_up or (Pace(), 0, waiting)
        self.memory_status = self._memory_line
        if self._elsewhere and waiting:
            self.catch_up_status = f"embedding: another huichat process is at work · {plural(waiting, 'turn')} wait"
        else:
            self.catch_up_status = "" if total <= done else f"embedding {pace.describe(done, total, 'turns')}"

    def _embedded(self, done: int, total: int | None = None) -> None:
        """The catch-up has ``done`` turns (of ``total``, when it counted them again)."""
        if self._catch_up is not None:
            pace, _, known = self._catch_up
            pace.note(done)
            self._catch_up = (pace, done, known if total is None else total)
            self._show_memory()

    def _computed(self, done: int) -> None:
        """A part of this app's own batch is finished: it is at work (again, after waiting on another process)."""
        self._elsewhere = False
        self.busy = True
        self._embedded(done)

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
                    loop.call_soon_threadsafe(self._computed, before + finished)

                batch = await self.gateway.run(lambda k: k.embed_pending(progress=part))
                if not batch and kernel.embedding_elsewhere:  # another process (an import) computes them
                    self._catch_up = None
                    self._elsewhere = True
                    self.busy = False  # this app only looks now and then: the status line says who works
                    self._show_memory()
                    await asyncio.sleep(_ELSEWHERE_POLL)
                    await self.gateway.run(lambda k: k.recount_pending())
                    self._catch_up = (Pace(), done, done + kernel.pending_vectors)
                    continue
                self._elsewhere = False
                self.busy = True
                if not batch:
                    break
                done += batch
        except KernelError as exc:
            self.notify(str(exc), title="Memory", severity="warning")
        else:
            if done and not kernel.pending_vectors:  # the end of a catch-up the status line showed
                self.notify(f"{plural(done, 'turn')} embedded: all of memory is searchable by meaning.", title="Memory")
        finally:
            self.busy = False
            self._catch_up = None
            self._elsewhere = False
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
            self.panel.show(list(results), scope, append=True, nearest=nearest_below(results), query=results.keywords)
        elif turn is not None:
            self.panel.show([SearchHit(turn, None)], f"recall_by_id → {turn.id}", append=True)
        if self.panel.found and self.huichat.runtime.loaded.config.ui.memory_panel == "auto":
            self.panel_open = True

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
        return (await self.recall_turn(turn_id)).turn

    async def recall_turn(self, turn_id: str) -> RecallResult:
        """A turn by id, or why there is none (unknown, kept beside the current branch, memory unavailable)."""
        from huichat.memory.results import RecallResult

        try:
            return await self.gateway.recall_by_id(turn_id)
        except KernelError as exc:
            return RecallResult(None, str(exc))

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
        self.panel.replace_turns(fresh, gone=stale - fresh.keys())

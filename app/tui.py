"""The Textual application: paints at once, loads memory and the LLM client in the background."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterator
from datetime import datetime
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

from textual import work
from textual.app import App
from textual.command import Hit, Hits, Provider
from textual.screen import Screen

from app.config import LoadedConfig

if TYPE_CHECKING:
    from app.__main__ import Zone
    from app.screens.chat import ChatScreen
    from memory.kernel import MemoryKernel
    from providers.llm import LLMClient

STYLES = Path(__file__).resolve().parent.parent / "styles"
_LOAD_DELAY = 0.2
"""Seconds between the first frame and the start of the heavy imports."""


class Services:
    """Memory and the LLM client, filled in by background workers; waiters never block the UI."""

    def __init__(self) -> None:
        self.kernel: MemoryKernel | None = None
        self.llm: LLMClient | None = None
        self.kernel_error = ""
        self.llm_error = ""
        self.kernel_done = asyncio.Event()
        self.llm_done = asyncio.Event()

    async def wait_kernel(self) -> MemoryKernel | None:
        """The kernel once loaded (None if it failed; see ``kernel_error``)."""
        await self.kernel_done.wait()
        return self.kernel

    async def wait_llm(self) -> LLMClient | None:
        """The LLM client once loaded (None if it failed; see ``llm_error``)."""
        await self.llm_done.wait()
        return self.llm


class HuichatCommands(Provider):
    """Palette commands: providers, sessions, search, memory panel, reindex."""

    def _commands(self) -> Iterator[tuple[str, Callable[[], object], str]]:
        app = self.app
        assert isinstance(app, HuichatApp)
        screen = app.chat_screen
        for name, provider in app.loaded.config.providers.named.items():
            current = " (current)" if name == app.provider_name else ""
            yield (f"Provider: use {name}{current}", partial(screen.switch_provider, name), provider.model)
        yield ("New session", screen.action_new_session, "start an empty conversation (ctrl+n)")
        yield ("Open session…", screen.action_open_session, "reopen a past session (ctrl+o)")
        yield ("Search memory", screen.action_search, "search every stored turn (ctrl+f)")
        yield ("Toggle memory panel", screen.action_toggle_panel, "show or hide what was recalled (F2)")
        yield ("Reindex memory", app.action_reindex, "rebuild the index from the transcripts")
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
    CSS_PATH = [STYLES / "app.tcss", STYLES / "chat.tcss", STYLES / "memory.tcss"]
    COMMANDS = App.COMMANDS | {HuichatCommands}

    def __init__(
        self,
        loaded: LoadedConfig,
        zone: Zone,
        *,
        kernel_factory: Callable[[], MemoryKernel],
        llm_factory: Callable[[], LLMClient],
        clock: Callable[[], datetime],
        start_provider: str | None = None,
        start_session: str | None = None,
    ) -> None:
        super().__init__()
        self.loaded = loaded
        self.zone = zone
        self.kernel_factory = kernel_factory
        self.llm_factory = llm_factory
        self.clock = clock
        self.start_session = start_session
        self.provider_name = start_provider or loaded.config.providers.default_name()
        self.services = Services()
        self.theme = loaded.config.ui.theme if loaded.config.ui.theme in self.available_themes else "textual-dark"

    @property
    def chat_screen(self) -> ChatScreen:
        """The conversation screen (the bottom of the screen stack)."""
        from app.screens.chat import ChatScreen

        for screen in self.screen_stack:
            if isinstance(screen, ChatScreen):
                return screen
        raise LookupError("the chat screen is not open")

    def get_default_screen(self) -> Screen[Any]:
        from app.screens.chat import ChatScreen

        return ChatScreen()

    def on_mount(self) -> None:
        # heavy imports hold the GIL: start them only once the first frame is on screen
        self.call_after_refresh(self.set_timer, _LOAD_DELAY, self._start_loading)

    def _start_loading(self) -> None:
        self.load_kernel()
        self.load_llm()

    @work(thread=True, group="load", exit_on_error=False)
    def load_kernel(self) -> None:
        """Import lancedb and torch, load the embedding model, open and reconcile the index."""
        from memory.errors import KernelError

        self._load("kernel", self.kernel_factory, KernelError, self.services.kernel_done)

    @work(thread=True, group="load", exit_on_error=False)
    def load_llm(self) -> None:
        """Import litellm (slow) and build the client."""
        from providers.errors import ProviderError

        self._load("llm", self.llm_factory, ProviderError, self.services.llm_done)

    def _load(self, name: str, factory: Callable[[], object], expected: type[Exception], done: asyncio.Event) -> None:
        """Build one service in this worker thread; its error (one line) is kept for the screens."""
        try:
            setattr(self.services, name, factory())
        except expected as exc:
            setattr(self.services, f"{name}_error", str(exc))
        finally:
            self.call_from_thread(done.set)

    @work(group="reindex", exclusive=True)
    async def action_reindex(self) -> None:
        """Rebuild the index from the transcripts in the background."""
        kernel = await self.services.wait_kernel()
        if kernel is None:
            self.notify(self.services.kernel_error, severity="error")
            return
        self.notify("Reindexing memory from the transcripts…", timeout=3)
        report = await asyncio.to_thread(kernel.reindex)
        self.notify(f"Reindexed {report.added + report.updated} turns from {report.files_checked} transcripts.")
        await self.chat_screen.update_memory_status()

    async def action_quit(self) -> None:
        kernel = self.services.kernel
        if kernel is not None:
            await asyncio.to_thread(kernel.close)
        self.exit(0)

"""The UI's one way to memory and the LLM client, which load in the background.

Each service is a future resolved once its loader finishes. Every call waits for that
future, runs the kernel's blocking work in a thread, and raises the package's own error
(``KernelError``, ``ProviderError``) — also when the service failed to load — so screens
catch one type and never check for ``None``.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import TYPE_CHECKING, TypeVar

from huichat.memory.errors import KernelError
from huichat.providers.errors import ProviderError

if TYPE_CHECKING:
    from huichat.memory.kernel import MemoryKernel, ReconcileReport
    from huichat.memory.results import RecallResult, SearchRequest, SearchResults, SessionInfo
    from huichat.memory.turns import Turn
    from huichat.providers.llm import LLMClient

T = TypeVar("T")


class Gateway:
    """Futures for the kernel and the LLM client, and async calls that use them."""

    def __init__(self, start_llm: Callable[[], None] = lambda: None) -> None:
        loop = asyncio.get_running_loop()
        self._kernel: asyncio.Future[MemoryKernel] = loop.create_future()
        self._llm: asyncio.Future[LLMClient] = loop.create_future()
        self._start_llm = start_llm
        """Starts building the LLM client if nobody has yet (it loads after memory unless asked for sooner)."""

    # ---------------------------------------------------------------- loading

    def kernel_loaded(self, kernel: MemoryKernel) -> None:
        """Called (on the event loop) when memory is open."""
        if not self._kernel.done():
            self._kernel.set_result(kernel)

    def kernel_failed(self, reason: str) -> None:
        """Called (on the event loop) when memory could not be opened."""
        if not self._kernel.done():
            self._kernel.set_exception(KernelError(reason))

    def llm_loaded(self, llm: LLMClient) -> None:
        """Called (on the event loop) when the LLM client is built."""
        if not self._llm.done():
            self._llm.set_result(llm)

    def llm_failed(self, reason: str) -> None:
        """Called (on the event loop) when the LLM client could not be built."""
        if not self._llm.done():
            self._llm.set_exception(ProviderError(reason))

    @property
    def kernel_settled(self) -> bool:
        """True once memory loaded or failed."""
        return self._kernel.done()

    @property
    def llm_settled(self) -> bool:
        """True once the LLM client loaded or failed."""
        return self._llm.done()

    @property
    def loaded_kernel(self) -> MemoryKernel | None:
        """The kernel if it is open now (for quitting without waiting), else None."""
        if self._kernel.done() and not self._kernel.cancelled() and self._kernel.exception() is None:
            return self._kernel.result()
        return None

    async def kernel(self) -> MemoryKernel:
        """The kernel once open; raises ``KernelError`` if it could not be."""
        return await asyncio.shield(self._kernel)

    async def llm(self) -> LLMClient:
        """The LLM client once built (its loading starts now if it had not); raises ``ProviderError`` if it could not be."""
        if not self._llm.done():
            self._start_llm()
        return await asyncio.shield(self._llm)

    # ------------------------------------------------------------------ calls

    async def run(self, call: Callable[[MemoryKernel], T]) -> T:
        """Run ``call(kernel)`` in a thread once memory is open."""
        kernel = await self.kernel()
        return await asyncio.to_thread(call, kernel)

    async def search(self, request: SearchRequest) -> SearchResults:
        """Search memory."""
        return await self.run(lambda kernel: kernel.search(request))

    async def recall_by_id(self, turn_id: str) -> RecallResult:
        """One turn by id (an unknown id is an error value, not an exception)."""
        return await self.run(lambda kernel: kernel.recall_by_id(turn_id))

    async def turn(self, turn_id: str) -> Turn | None:
        """One turn by id, or None."""
        return (await self.recall_by_id(turn_id)).turn

    async def sessions(self) -> list[SessionInfo]:
        """Stored sessions, most recent first."""
        return await self.run(lambda kernel: kernel.sessions())

    async def count(self) -> int:
        """Number of stored turns."""
        return await self.run(lambda kernel: kernel.count())

    async def maintain(self) -> None:
        """Compaction and index refresh after writes, when due."""
        await self.run(lambda kernel: kernel.maintain() if kernel.needs_maintenance() else None)

    async def reindex(self) -> ReconcileReport:
        """Rebuild the index from the transcripts."""
        return await self.run(lambda kernel: kernel.reindex())

"""The UI's one way to memory and the LLM client, which load in the background.

Each service is a future resolved once its loader finishes. Every call waits for that
future, runs the kernel's blocking work in a thread, and raises the package's own error
(``KernelError``, ``ProviderError``) — also when the service failed to load — so screens
catch one type and never check for ``None``.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import TYPE_CHECKING, Generic, TypeVar

from huichat.memory.errors import KernelError
from huichat.providers.errors import ProviderError

if TYPE_CHECKING:
    from huichat.memory.kernel import MemoryKernel, ReconcileReport
    from huichat.memory.results import RecallResult, SearchRequest, SearchResults, SessionInfo
    from huichat.memory.turns import Turn
    from huichat.providers.llm import LLMClient

T = TypeVar("T")


class Loading(Generic[T]):
    """One service loading in the background: a future resolved once, with the service or with
    the package's own error (``error``) saying why it could not be loaded."""

    def __init__(self, error: type[KernelError] | type[ProviderError]) -> None:
        self._future: asyncio.Future[T] = asyncio.get_running_loop().create_future()
        self.error = error

    def loaded(self, service: T) -> None:
        """Called (on the event loop) when the service is ready."""
        if not self._future.done():
            self._future.set_result(service)

    def failed(self, reason: str) -> None:
        """Called (on the event loop) when the service could not be loaded."""
        if not self._future.done():
            self._future.set_exception(self.error(reason))

    @property
    def settled(self) -> bool:
        """True once the service loaded or failed."""
        return self._future.done()

    @property
    def ready(self) -> T | None:
        """The service if it is loaded now (for quitting without waiting), else None."""
        if self._future.done() and not self._future.cancelled() and self._future.exception() is None:
            return self._future.result()
        return None

    async def wait(self) -> T:
        """The service once loaded; raises ``error`` if it could not be."""
        return await asyncio.shield(self._future)


class Gateway:
    """The kernel and the LLM client as they load, and async calls that use them."""

    def __init__(self, start_llm: Callable[[], None] = lambda: None) -> None:
        self.memory: Loading[MemoryKernel] = Loading(KernelError)
        self.llm_client: Loading[LLMClient] = Loading(ProviderError)
        self._start_llm = start_llm
        """Starts building the LLM client if nobody has yet (it loads after memory unless asked for sooner)."""

    async def kernel(self) -> MemoryKernel:
        """The kernel once open; raises ``KernelError`` if it could not be."""
        return await self.memory.wait()

    async def llm(self) -> LLMClient:
        """The LLM client once built (its loading starts now if it had not); raises ``ProviderError`` if it could not be."""
        if not self.llm_client.settled:
            self._start_llm()
        return await self.llm_client.wait()

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

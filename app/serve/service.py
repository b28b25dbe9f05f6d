"""What every route shares: the runtime, the users' memories, the keys, the limiter, the LLM client."""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine
from typing import TYPE_CHECKING, Any

from fastapi import Request

from huichat.app.runtime import Runtime
from huichat.app.serve.conversations import Conversations
from huichat.app.serve.ratelimit import FailureLimiter, RateLimiter
from huichat.app.users.keys import KeyRing
from huichat.app.users.memories import Memory, Stores

if TYPE_CHECKING:
    from huichat.memory.kernel import MemoryKernel
    from huichat.providers.llm import LLMClient

_DRAIN_SECONDS = 0.5
"""How long replies in flight may go on at shutdown before they are stopped (their question is kept)."""
_CHECKS_AT_ONCE = 2


class Service:
    """The server's state, built once per app (``create_app``)."""

    def __init__(self, runtime: Runtime) -> None:
        self.runtime = runtime
        self.settings = runtime.loaded.config.serve
        self.stores = Stores(runtime)
        self.keys = KeyRing(runtime.loaded.paths.data_dir)
        self.limiter = RateLimiter(self.settings.requests_per_minute)
        self.key_checks = FailureLimiter(self.settings.key_checks_per_minute)
        """Failed argon2 checks per key id and per client address, admitted before they run."""
        self.checking = asyncio.Semaphore(_CHECKS_AT_ONCE)
        """argon2 (~0.4 s of CPU and 64 MiB each) runs in threads, this many at once."""
        self.conversations = Conversations(runtime)
        self._llm: LLMClient | None = None
        self._tasks: set[asyncio.Task[Any]] = set()

    def memory(self, user: str) -> Memory:
        """``user``'s memory (see ``app.stores``)."""
        return self.stores.memory(user)

    async def kernel(self, user: str) -> MemoryKernel:
        """``user``'s kernel, reopened first when degraded and due."""
        return await self.memory(user).kernel(self.settings.memory_retry_seconds)

    @property
    def llm(self) -> LLMClient:
        """The LLM client (built on first use); each reply names its provider."""
        if self._llm is None:
            self._llm = self.runtime.open_llm()
        return self._llm

    def keep(self, work: Coroutine[Any, Any, Any], name: str) -> asyncio.Task[Any]:
        """Run ``work`` to its end even if the client that asked for it goes away."""
        task = asyncio.create_task(work, name=name)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return task

    async def close(self) -> None:
        """Let replies in flight finish for a moment, stop the rest (what was asked is stored
        as a stopped turn), then close every memory."""
        if self._tasks:
            _, running = await asyncio.wait(set(self._tasks), timeout=_DRAIN_SECONDS)
            for task in running:
                task.cancel()
            if running:
                await asyncio.wait(running, timeout=_DRAIN_SECONDS)
        await self.stores.close()


def service_of(request: Request) -> Service:
    """The service of the app handling ``request``."""
    service = request.app.state.service
    assert isinstance(service, Service)
    return service

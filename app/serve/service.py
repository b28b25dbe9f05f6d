"""What every route shares: the runtime, the users' memories, the keys, the limiter, the LLM client."""

from __future__ import annotations

import asyncio
import contextlib
import os
import sys
import threading
from collections.abc import Coroutine
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING, Any

from fastapi import Request

from huichat.app.runtime import Runtime
from huichat.app.serve.conversations import Conversations
from huichat.app.serve.ratelimit import FailureLimiter, RateLimiter
from huichat.app.users.keys import KeyRing, KeyRingError
from huichat.app.users.memories import Memory, Stores

if TYPE_CHECKING:
    from huichat.memory.kernel import MemoryKernel
    from huichat.providers.llm import LLMClient

_DRAIN_SECONDS = 0.5
"""How long replies in flight may go on at shutdown before they are stopped (their question is kept)."""
_KEY_CHECK_NICENESS = 10
"""How much lower than the server's the priority of the key-check thread is (argon2's lanes
are threads it starts, and inherit it): a flood of wrong secrets takes the CPU that replies
leave, instead of all cores for 0.4 s each time. A first check of a right key waits as long."""


def _yield_cpu() -> None:
    """Lower this thread's priority (Linux: per thread; elsewhere a no-op rather than the process's)."""
    if sys.platform.startswith("linux"):
        with contextlib.suppress(OSError):
            thread = threading.get_native_id()
            os.setpriority(
                os.PRIO_PROCESS, thread, min(19, os.getpriority(os.PRIO_PROCESS, thread) + _KEY_CHECK_NICENESS)
            )


class Service:
    """The server's state, built once per app (``create_app``)."""

    def __init__(self, runtime: Runtime) -> None:
        self.runtime = runtime
        self.settings = runtime.loaded.config.serve
        self.stores = Stores(runtime)
        self.keys = KeyRing.configured(runtime.loaded)
        self.limiter = RateLimiter(self.settings.requests_per_minute)
        self.key_checks = FailureLimiter(self.settings.key_checks_per_minute)
        """Failed argon2 checks per key id and per client address, admitted before they run."""
        self.key_checker = ThreadPoolExecutor(1, "huichat-key-check", initializer=_yield_cpu)
        """argon2 (~0.4 s of CPU on every core and 64 MiB each) runs here, one check at a time (a
        check uses every core already), at a lower priority; one token resent while its check runs
        waits for that check and then finds it remembered, right or wrong."""
        self.conversations = Conversations(runtime, self.stores.shared)
        self._llm: asyncio.Future[LLMClient] | None = None
        self._tasks: set[asyncio.Task[Any]] = set()

    async def refresh_keys(self) -> None:
        """Keep keys held in the shared store fresh off the request path (none to do for the key file):
        a key revoked through another replica is refused here within ``refresh_seconds``."""
        if not self.keys.refresh_seconds:
            return
        while True:
            with contextlib.suppress(KeyRingError):  # a request reads them itself and says what failed
                await asyncio.to_thread(self.keys.refresh)
            await asyncio.sleep(self.keys.refresh_seconds / 2)

    def memory(self, user: str) -> Memory:
        """``user``'s memory (see ``app.stores``)."""
        return self.stores.memory(user)

    async def kernel(self, user: str) -> MemoryKernel:
        """``user``'s kernel, reopened first when degraded and due (with replicas: brought up to date)."""
        return await self.memory(user).fresh(self.settings.memory_retry_seconds)

    async def llm(self) -> LLMClient:
        """The LLM client; each reply names its provider. Built once, in a thread (started with the
        server): importing litellm takes seconds of CPU, and on the event loop every request —
        searches, health checks, other replies — would wait for it."""
        building = self._llm
        if building is None or (building.done() and (building.cancelled() or building.exception() is not None)):
            building = self._llm = asyncio.ensure_future(asyncio.to_thread(self.runtime.open_llm))
        return await asyncio.shield(building)

    async def warm_llm(self) -> None:
        """Build the LLM client now, before the first chat asks for it (that chat says why if it fails)."""
        with contextlib.suppress(Exception):
            await self.llm()

    def keep(self, work: Coroutine[Any, Any, Any], name: str) -> asyncio.Task[Any]:
        """Run ``work`` to its end even if the client that asked for it goes away."""
        task = asyncio.create_task(work, name=name)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return task

    async def stop_replies(self) -> None:
        """Let replies in flight finish for a moment, then stop the rest (what was asked is stored
        as a stopped turn, and its client is told the server is stopping). The server calls this
        as it starts to shut down, so every answer ends before its connection must close."""
        if self._tasks:
            _, running = await asyncio.wait(set(self._tasks), timeout=_DRAIN_SECONDS)
            for task in running:
                task.cancel()
            if running:
                await asyncio.wait(running, timeout=_DRAIN_SECONDS)

    async def close(self) -> None:
        """Stop the replies still running, then close every memory."""
        await self.stop_replies()
        self.key_checker.shutdown(wait=False, cancel_futures=True)
        await self.stores.close()


def service_of(request: Request) -> Service:
    """The service of the app handling ``request``."""
    service = request.app.state.service
    assert isinstance(service, Service)
    return service

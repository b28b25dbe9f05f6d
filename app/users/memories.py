"""Users and their memories, for the faces that serve other programs (HTTP and MCP).

The owner's memory is the terminal app's own (the configured data dir); every other user
has a folder of their own, ``<data_dir>/users/<name>/`` with its transcripts and index, so
nothing one user says can reach another's store. A ``Memory`` opens a user's kernel in
the background and degrades instead of failing: when the index cannot be opened or fails,
turns still go to the transcripts, searches say memory is unavailable, and the index is
reopened (and reconciled with what was written meanwhile) once it works again.
"""

from __future__ import annotations

import asyncio
import re
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

from huichat.app.config import USERS_DIR, LoadedConfig
from huichat.app.runtime import Runtime
from huichat.memory.errors import KernelError
from huichat.memory.lease import Lease, LeaseBusy, upkeep_lease
from huichat.memory.location import MemoryLocation
from huichat.memory.objectstore import ObjectStore, configured_store

if TYPE_CHECKING:
    from huichat.memory.embedding import Embedder
    from huichat.memory.kernel import MemoryKernel

T = TypeVar("T")
USER_NAME = re.compile(r"^[a-z0-9][a-z0-9_-]{0,31}$")
_EMBED_BATCH = 64


class UpkeepBusy(Exception):
    """Another replica holds this memory's upkeep lease: its job runs there now."""


class UnknownUser(Exception):
    """A user name that is malformed or has no memory."""


def check_user_name(name: str) -> str:
    """``name`` if it can name a user (and a folder): 1–32 of a-z, 0-9, '-', '_'."""
    if not USER_NAME.match(name or ""):
        raise UnknownUser(f"'{(name or '')[:40]}' is not a user name (1-32 of a-z, 0-9, '-' and '_')")
    return name


def stored_users(loaded: LoadedConfig, shared: ObjectStore | None) -> set[str]:
    """The owner and every user with a store (in ``shared``, the store replicas share, if any)."""
    found = {loaded.config.serve.owner}
    users_dir = loaded.paths.data_dir / USERS_DIR
    if shared is not None:
        found.update(name for name in shared.folders(USERS_DIR) if USER_NAME.match(name))
    elif users_dir.is_dir():
        found.update(p.name for p in users_dir.iterdir() if p.is_dir() and USER_NAME.match(p.name))
    return found


def user_memory(loaded: LoadedConfig, name: str) -> LoadedConfig:
    """``loaded`` reading ``name``'s memory (a command's ``--user``): the owner's, or that of a user
    of ``huichat serve`` who has one. ``UnknownUser`` names the users there are."""
    known = stored_users(loaded, configured_store(loaded.config.storage))
    if check_user_name(name) not in known:
        raise UnknownUser(f"no user '{name}' has a memory here (users: {', '.join(sorted(known))})")
    return replace(loaded, user=name)


class Memory:
    """One user's kernel: opened in a thread, degraded when the index fails, reopened when due."""

    def __init__(
        self,
        user: str,
        open_kernel: Callable[[], MemoryKernel],
        fallback: Callable[[str], MemoryKernel],
        lease: Lease | None = None,
    ) -> None:
        self.user = user
        self._lease = lease
        """With replicas: held while this process compacts the index or runs a lifecycle job on it, so
        only one replica does at a time."""
        self._open = open_kernel
        self._fallback = fallback
        self._kernel: MemoryKernel | None = None
        self._lock = asyncio.Lock()
        self._retry_at = 0.0
        self._embedding: asyncio.Task[None] | None = None
        self._maintaining: asyncio.Task[None] | None = None

    @property
    def opened(self) -> MemoryKernel | None:
        """The kernel if it was opened (degraded or not), else None."""
        return self._kernel

    def _open_or_degrade(self) -> MemoryKernel:
        try:
            return self._open()
        except KernelError as exc:
            return self._fallback(str(exc))

    async def kernel(self, retry_seconds: float) -> MemoryKernel:
        """The kernel; a degraded one is reopened first when ``retry_seconds`` passed since the last try."""
        async with self._lock:
            kernel = self._kernel
            if kernel is not None and (kernel.health.usable or time.monotonic() < self._retry_at):
                return kernel
            fresh = await asyncio.to_thread(self._open_or_degrade)
            if not fresh.health.usable:
                self._retry_at = time.monotonic() + retry_seconds
                if kernel is not None:
                    await asyncio.to_thread(fresh.close)
                    return kernel
            elif kernel is not None:
                await asyncio.to_thread(kernel.close)
            self._kernel = fresh
            self._embed_in_background(fresh)
            return fresh

    async def reopen(self) -> MemoryKernel:
        """Try to reopen a degraded memory now (``sync``)."""
        self._retry_at = 0.0
        return await self.kernel(0.0)

    async def fresh(self, retry_seconds: float) -> MemoryKernel:
        """The kernel, its transcripts brought up to date with what other replicas wrote (and its
        index read at the newest version): what every request of a replica starts from. Without
        a shared store it is ``kernel``."""
        kernel = await self.kernel(retry_seconds)
        if kernel.transcripts.shared is not None:
            await asyncio.to_thread(kernel.pull_shared)
        return kernel

    async def run(self, call: Callable[[MemoryKernel], T], retry_seconds: float) -> T:
        """``call(kernel)`` in a thread."""
        kernel = await self.fresh(retry_seconds)
        return await asyncio.to_thread(call, kernel)

    def wrote(self) -> None:
        """After a turn was stored: compact the index in the background when enough writes piled up."""
        kernel = self._kernel
        if kernel is None or not kernel.needs_maintenance():
            return
        if self._maintaining is None or self._maintaining.done():
            self._maintaining = asyncio.create_task(self._maintain(kernel), name=f"maintain {self.user}")

    async def _maintain(self, kernel: MemoryKernel) -> None:
        try:
            await self._leased(kernel.maintain)
        except UpkeepBusy:
            return  # another replica compacts this index now
        except KernelError:
            return  # the index or the store failed: memory is unavailable and will be reopened

    async def upkeep(self, call: Callable[[MemoryKernel], T], retry_seconds: float) -> T:
        """``call(kernel)`` in a thread as this memory's one upkeep job across the fleet (the lifecycle
        and consolidation jobs): with replicas, while this process holds the lease compaction takes
        too, ``UpkeepBusy`` while another one does. Without a shared store it is ``run``."""
        kernel = await self.fresh(retry_seconds)
        return await self._leased(lambda: call(kernel))

    async def _leased(self, work: Callable[[], T]) -> T:
        lease = self._lease
        if lease is None:
            return await asyncio.to_thread(work)

        def holding() -> T:
            with lease.held():  # renewed while the work runs, however long
                return work()

        try:
            return await asyncio.to_thread(holding)
        except LeaseBusy:
            raise UpkeepBusy(f"another replica runs the upkeep of {self.user}'s memory now") from None

    def _embed_in_background(self, kernel: MemoryKernel) -> None:
        if not kernel.pending_vectors:
            return
        if self._embedding is None or self._embedding.done():
            self._embedding = asyncio.create_task(self._embed(kernel), name=f"embed {self.user}")

    async def _embed(self, kernel: MemoryKernel) -> None:
        # turns reconciled at open are found by their words at once; their vectors follow here
        while kernel is self._kernel and kernel.health.usable:
            try:
                done = await asyncio.to_thread(kernel.embed_pending, _EMBED_BATCH)
            except KernelError:
                return
            if not done:
                return

    async def close(self) -> None:
        """Stop background embedding, flush statistics and release the store."""
        if self._embedding is not None:
            self._embedding.cancel()
        if self._maintaining is not None:
            await asyncio.wait([self._maintaining])
        async with self._lock:
            if self._kernel is not None:
                await asyncio.to_thread(self._kernel.close)
                self._kernel = None


class Stores:
    """Every user's memory location, and the open memories (one embedder shared by all)."""

    def __init__(self, runtime: Runtime) -> None:
        self.runtime = runtime
        self.owner = runtime.loaded.config.serve.owner
        self._embedder: Embedder | None = None
        self._embedder_lock = threading.Lock()
        self._memories: dict[str, Memory] = {}
        self.shared = configured_store(runtime.loaded.config.storage)
        """The store every replica shares (``storage.uri``), or None on one machine."""

    @property
    def users_dir(self) -> Path:
        """The folder holding every user but the owner."""
        return self.runtime.loaded.paths.data_dir / USERS_DIR

    def location(self, user: str) -> MemoryLocation:
        """Where ``user``'s transcripts and index live (``LoadedConfig.user_location``)."""
        if check_user_name(user) == self.owner:
            return self.runtime.loaded.location
        return self.runtime.loaded.user_location(user)

    def users(self, also: Iterable[str] = ()) -> list[str]:
        """The owner, every user with a store, and ``also`` (e.g. users holding a key), sorted."""
        return sorted({*stored_users(self.runtime.loaded, self.shared), *also})

    def _shared_embedder(self) -> Embedder:
        with self._embedder_lock:
            if self._embedder is None:
                self._embedder = self.runtime.open_embedder()
            return self._embedder

    def memory(self, user: str) -> Memory:
        """``user``'s memory (not opened until first used)."""
        location = self.location(user)
        if user not in self._memories:
            config = self.runtime.loaded.config

            def open_kernel() -> MemoryKernel:
                return self.runtime.open_kernel(self._shared_embedder(), embed=False, location=location)

            def fallback(reason: str) -> MemoryKernel:
                from huichat.memory.opening import open_transcripts_only

                return open_transcripts_only(location, config.retriever, self.runtime.zone.tz, reason)

            self._memories[user] = Memory(user, open_kernel, fallback, upkeep_lease(location))
        return self._memories[user]

    async def close(self) -> None:
        """Close every open memory."""
        for memory in list(self._memories.values()):
            await memory.close()

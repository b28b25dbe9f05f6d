"""What every face (the TUI, the CLI, the services, the benchmarks) receives from the composition root.

A ``Runtime`` carries the validated configuration, the time zone, the clock and the ways
to open the heavy services. Faces call these factories; only ``app.wiring`` builds them,
so nothing imports the composition root back and tests hand in their own.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, tzinfo
from typing import TYPE_CHECKING, Protocol

from huichat.app.config import LoadedConfig

if TYPE_CHECKING:
    from huichat.memory.catalogue import Catalogue
    from huichat.memory.embedding import Embedder
    from huichat.memory.kernel import MemoryKernel
    from huichat.memory.location import MemoryLocation
    from huichat.providers.llm import LLMClient


@dataclass(frozen=True)
class Zone:
    """The display and time-resolution zone, and its name."""

    tz: tzinfo
    name: str


class KernelOpener(Protocol):
    """Opens the memory kernel (see ``memory.opening.open_kernel``): the configured one, or ``location``'s."""

    def __call__(
        self,
        embedder: Embedder | None = None,
        *,
        reconcile: bool = True,
        embed: bool = True,
        for_rebuild: bool = False,
        location: MemoryLocation | None = None,
    ) -> MemoryKernel: ...


@dataclass(frozen=True)
class Runtime:
    """The configuration, the zone, the clock, and the factories of the heavy services."""

    loaded: LoadedConfig
    zone: Zone
    open_kernel: KernelOpener
    open_embedder: Callable[[], Embedder]
    open_llm: Callable[[], LLMClient]
    open_catalogue: Callable[[], Catalogue]
    """The transcripts' summary (sessions, where a turn is) — no index, no model."""
    clock: Callable[[], datetime]

"""The vectors of turns that wait for them, computed in the foreground of a command (import, reindex).

The catch-up runs in a worker thread and the main thread only waits, so Ctrl-C reaches the
command at once rather than after a batch (a signal is handled between Python steps, and an
embedding pass is seconds of native code): the kernel then stops the catch-up — the pass in
flight ends, every vector already finished is written — and the command says what is left.
Turns are committed in small batches, so a kill loses little work; a re-run computes only
the vectors not stored yet. A command goes before the chat's background catch-up on the same
memory (``memory.embedding_lease``): the chat finishes its batch and waits, and the command
counts what another process embedded as done.
"""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor
from concurrent.futures import TimeoutError as Waiting
from functools import partial
from typing import TYPE_CHECKING

from huichat.app.progress import ProgressReport

if TYPE_CHECKING:
    from rich.console import Console

    from huichat.app.cli.cluster import Cluster
    from huichat.memory.embedding import Embedder
    from huichat.memory.kernel import MemoryKernel

EXIT_INTERRUPTED = 130
"""A command's status when Ctrl-C stopped it (128 + SIGINT, as the shell reports it)."""
BATCH = 64
"""Turns per index commit: what a kill -9 can lose, and small enough that commits stay cheap."""
_POLL = 0.2
_ELSEWHERE_POLL = 1.0
"""Seconds between looks at the count of waiting turns while another process embeds them."""


def catch_up(kernel: MemoryKernel, console: Console, cluster: Cluster | None = None) -> bool:
    """Compute every waiting vector with progress (on ``cluster``'s workers when given); False when
    Ctrl-C stopped it (what was finished is kept)."""
    waiting = kernel.pending_vectors
    if not waiting:
        return True
    if cluster is None:
        return _embed_with_progress(kernel, console, waiting, None)
    with cluster.embedder(kernel, console) as embedder:
        return _embed_with_progress(kernel, console, waiting, embedder)


def _embed_with_progress(kernel: MemoryKernel, console: Console, waiting: int, embedder: Embedder | None) -> bool:
    stop = threading.Event()
    with (
        kernel.embedding_in_foreground(),
        ProgressReport(console, "embedding", waiting, "turns") as report,
        ThreadPoolExecutor(1, thread_name_prefix="embedding") as worker,
    ):
        running = worker.submit(_embed_all, kernel, report, embedder, stop)
        try:
            while True:
                try:
                    running.result(timeout=_POLL)
                    return True
                except Waiting:
                    report.tick()
        except KeyboardInterrupt:
            stop.set()
            kernel.stop_embedding()
            running.result()  # the pass in flight ends; what was finished is written
            return False


def _embed_all(kernel: MemoryKernel, report: ProgressReport, embedder: Embedder | None, stop: threading.Event) -> None:
    done = 0
    while not stop.is_set():
        batch = kernel.embed_pending(BATCH, partial(_advanced, report, done), embedder)
        if not batch and not kernel.embedding_elsewhere:
            return
        if not batch:  # another process's batch (the chat's): its vectors are done work here too
            stop.wait(_ELSEWHERE_POLL)
            left = kernel.recount_pending()
            done = max(done, report.total - left)
            if not left:
                return
        done += batch
        report.update(done)


def _advanced(report: ProgressReport, before: int, finished: int, _of: int) -> None:
    report.update(before + finished)

"""``huichat reindex``: rebuild the index from the transcripts (after changing the model, or a damaged index)."""

from __future__ import annotations

import argparse
import contextlib
import sys
from typing import TYPE_CHECKING

from huichat.app import visible
from huichat.app.cli import cluster
from huichat.app.cli.catch_up import EXIT_INTERRUPTED, catch_up
from huichat.app.errors import CommandError
from huichat.memory.lease import LeaseBusy, upkeep_lease

if TYPE_CHECKING:
    from huichat.app.runtime import Runtime

HELP = "rebuild the index from the transcripts (after changing the model)"


def add_parser(parser: argparse.ArgumentParser) -> None:
    """Where the vectors are computed."""
    cluster.add_option(parser)


def run(args: argparse.Namespace, runtime: Runtime) -> int:
    """Rebuild the index from the transcripts with a progress bar; with shared storage, while this
    process holds the memory's upkeep lease (renewed however long it takes)."""
    workers = cluster.Cluster.from_args(args, runtime)
    lease = upkeep_lease(runtime.loaded.location)
    try:
        with lease.held() if lease is not None else contextlib.nullcontext():
            return _rebuild(runtime, workers)
    except LeaseBusy:
        raise CommandError(
            "another process runs this memory's upkeep now (a compaction, a lifecycle job or a reindex "
            "on another replica): try again when it is done"
        ) from None


def _rebuild(runtime: Runtime, workers: cluster.Cluster | None) -> int:
    from rich.progress import Progress

    kernel = runtime.open_kernel(reconcile=False, for_rebuild=True)
    console = visible.console()
    try:
        with Progress(console=console, transient=True) as progress:
            # words first (every turn searchable in seconds), then the vectors
            task = progress.add_task("indexing turns", total=None)

            def advance(done: int, total: int) -> None:
                progress.update(task, completed=done, total=total)

            report = kernel.reindex(advance, embed=False)
        embedded = catch_up(kernel, console, workers)
    finally:
        kernel.close()
    print(
        f"reindexed {report.added + report.updated} turns from {report.files_checked} transcripts into {runtime.loaded.location.db_uri}"
    )
    for line in report.notices():  # every one: this is where "… and N more" sends the user
        print(f"huichat: {line}", file=sys.stderr)
    if not embedded:
        print(
            "huichat: embedding stopped; the vectors computed are kept, the rest is computed when huichat next opens",
            file=sys.stderr,
        )
        return EXIT_INTERRUPTED
    return 0

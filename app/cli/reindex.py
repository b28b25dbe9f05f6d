"""``huichat reindex``: rebuild the index from the transcripts (after changing the model, or a damaged index)."""

from __future__ import annotations

import argparse
import contextlib
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from huichat.app import visible
from huichat.app.cli import cluster
from huichat.app.cli.catch_up import EXIT_INTERRUPTED, catch_up
from huichat.app.errors import CommandError
from huichat.app.wording import plural
from huichat.memory.lease import LeaseBusy, upkeep_lease

if TYPE_CHECKING:
    from huichat.app.runtime import Runtime
    from huichat.memory.kernel import MemoryKernel

HELP = "rebuild the index from the transcripts (after changing the model)"
UNFINISHED = "reindex-unfinished.json"
"""In the data folder while a rebuild's vectors are not all computed: which table, which model."""


def add_parser(parser: argparse.ArgumentParser) -> None:
    """Where the vectors are computed, and whether an interrupted rebuild is continued."""
    cluster.add_option(parser)
    parser.add_argument(
        "--anew",
        action="store_true",
        help="rebuild from the transcripts even when an interrupted reindex could go on computing its vectors",
    )


def run(args: argparse.Namespace, runtime: Runtime) -> int:
    """Rebuild the index from the transcripts with a progress bar; with shared storage, while this
    process holds the memory's upkeep lease (renewed however long it takes)."""
    workers = cluster.Cluster.from_args(args, runtime)
    lease = upkeep_lease(runtime.loaded.location)
    try:
        with lease.held() if lease is not None else contextlib.nullcontext():
            return _rebuild(runtime, workers, anew=args.anew)
    except LeaseBusy:
        raise CommandError(
            "another process runs this memory's upkeep now (a compaction, a lifecycle job or a reindex "
            "on another replica): try again when it is done"
        ) from None


def _rebuild(runtime: Runtime, workers: cluster.Cluster | None, *, anew: bool) -> int:
    from rich.progress import Progress

    unfinished = runtime.loaded.location.data_dir / UNFINISHED
    kernel = runtime.open_kernel(reconcile=False, for_rebuild=True)
    console = visible.console()
    report = None
    try:
        if anew or not _goes_on(kernel, unfinished):
            with Progress(console=console, transient=True) as progress:
                # words first (every turn searchable in seconds), then the vectors
                task = progress.add_task("indexing turns", total=None)

                def advance(done: int, total: int) -> None:
                    progress.update(task, completed=done, total=total)

                report = kernel.reindex(advance, embed=False)
            _note(unfinished, _table_of(kernel))
        else:
            print(
                f"continuing the reindex that was stopped: {plural(kernel.pending_vectors, 'turn')} waiting for a vector"
            )
        embedded = catch_up(kernel, console, workers)
        if embedded:
            unfinished.unlink(missing_ok=True)
    finally:
        kernel.close()
    if report is not None:
        print(
            f"reindexed {plural(report.added + report.updated, 'turn')} from {plural(report.files_checked, 'transcript')} into "
            f"{runtime.loaded.location.db_uri}"
        )
        for line in report.notices():  # every one: this is where "… and N more" sends the user
            print(f"huichat: {line}", file=sys.stderr)
    elif embedded:
        print("the reindex is finished: every turn has its vector")
    if not embedded:
        print(
            "huichat: embedding stopped; the vectors computed are kept, the rest is computed when huichat next "
            "opens (or by `huichat reindex` again, which goes on where this one stopped)",
            file=sys.stderr,
        )
        return EXIT_INTERRUPTED
    return 0


def _table_of(kernel: MemoryKernel) -> dict[str, str]:
    """What says a rebuilt table is the one still to finish: its random name and the model of its vectors."""
    return {"instance": kernel.store.instance, "model": kernel.store.embedder_name}


def _note(path: Path, table: dict[str, str]) -> None:
    with contextlib.suppress(OSError):  # without the note a re-run rebuilds again: nothing is lost
        path.write_text(json.dumps(table), encoding="utf-8")


def _goes_on(kernel: MemoryKernel, path: Path) -> bool:
    """True when the last reindex rebuilt this very table for this model and stopped while computing
    vectors: running it again goes on computing them (a rebuild would move this table aside for nothing)."""
    from huichat.memory.health import IndexState

    try:
        noted = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    if kernel.health.state is not IndexState.OK or not kernel.pending_vectors:
        return False
    return isinstance(noted, dict) and bool(noted.get("instance")) and noted == _table_of(kernel)

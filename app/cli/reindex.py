"""``huichat reindex``: rebuild the index from the transcripts (after changing the model, or a damaged index)."""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING

from huichat.app import visible

if TYPE_CHECKING:
    from huichat.app.runtime import Runtime

HELP = "rebuild the index from the transcripts (after changing the model)"


def add_parser(parser: argparse.ArgumentParser) -> None:
    """No options."""


def run(args: argparse.Namespace, runtime: Runtime) -> int:
    """Rebuild the index from the transcripts with a progress bar."""
    from rich.progress import Progress

    kernel = runtime.open_kernel(reconcile=False, for_rebuild=True)
    with Progress(console=visible.console(), transient=True) as progress:
        # words first (every turn searchable in seconds), then the vectors
        task = progress.add_task("indexing turns", total=None)

        def advance(done: int, total: int) -> None:
            progress.update(task, completed=done, total=total)

        try:
            report = kernel.reindex(advance, embed=False)
            embedding = progress.add_task("embedding turns", total=kernel.pending_vectors)
            while batch := kernel.embed_pending(limit=256):
                progress.advance(embedding, batch)
        finally:
            kernel.close()
    print(
        f"reindexed {report.added + report.updated} turns from {report.files_checked} transcripts into {runtime.loaded.paths.db_uri}"
    )
    for line in report.notices():  # every one: this is where "… and N more" sends the user
        print(f"huichat: {line}", file=sys.stderr)
    return 0

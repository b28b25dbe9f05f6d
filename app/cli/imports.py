"""``huichat import PATH…``: other chat tools' histories into memory, with progress and an account.

Two passes over the input: the first only reads (it is the ``--dry-run`` summary), so a
malformed file stops the import before anything is written; the second imports, one
conversation at a time. Turns are searchable by their words as soon as they are written;
their vectors follow (``--no-embed`` leaves that to the next start of huichat).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

from rich.progress import (
    BarColumn,
    DownloadColumn,
    Progress,
    SpinnerColumn,
    TextColumn,
    TimeRemainingColumn,
)
from rich.table import Table
from rich.text import Text

from huichat.app import visible
from huichat.app.cli import cluster
from huichat.app.cli.catch_up import EXIT_INTERRUPTED, catch_up
from huichat.app.errors import CommandError
from huichat.app.progress import ProgressReport
from huichat.app.wording import plural
from huichat.memory.imports.model import ImportedConversation, ImportFormatError, SourceFormat
from huichat.memory.imports.reader import ImportReader
from huichat.memory.imports.summary import ImportSummary, SummaryBuilder

if TYPE_CHECKING:
    from rich.console import Console

    from huichat.app.runtime import Runtime
    from huichat.memory.imports.ingest import ImportTally
    from huichat.memory.imports.report import ReportRow
    from huichat.memory.kernel import MemoryKernel

HELP = "import chat history: ChatGPT, Claude, DeepSeek, llm, elia, chat JSONL, huichat"


def _checked(reader: ImportReader, builder: SummaryBuilder, console: Console) -> Iterator[ImportedConversation]:
    """The reading pass, with a line that says which file, how far in bytes and how many conversations."""
    with Progress(
        SpinnerColumn(),
        TextColumn("reading {task.description}"),
        BarColumn(),
        DownloadColumn(binary_units=True),
        TextColumn("{task.fields[conversations]:,} conversations"),
        TimeRemainingColumn(compact=True, elapsed_when_finished=True),
        console=console,
        transient=True,
    ) as progress:
        task = progress.add_task("", total=None, conversations=0)

        def read(label: str, done: int, size: int | None) -> None:
            progress.update(task, description=label, completed=done, total=size)

        reader.on_progress = read
        for number, conversation in enumerate(reader.conversations(), 1):
            builder.add(conversation)
            progress.update(task, conversations=number)
            yield conversation


def _table(title: str, rows: list[ReportRow]) -> Table:
    # what the rows say (file names, titles, reasons) is text, never markup: "[/INST]" raised
    table = Table(title=Text(title), show_header=False, title_justify="left")
    table.add_column(style="bold")
    table.add_column(justify="right")
    table.add_column(overflow="fold")
    for row in rows:
        table.add_row(Text(row.label), row.count, Text(row.detail))
    return table


def _show(
    console: Console, reader: ImportReader, summary: ImportSummary, tally: ImportTally, runtime: Runtime, dry: bool
) -> None:
    from huichat.memory.imports.report import report_rows

    for ignored in reader.ignored:
        # "unknown format: expected <every format>; found X" — what was found is the news
        reason = ignored.reason.rsplit("; found ", 1)[-1]
        console.print(f"passed over {ignored.label}: {reason}", style="dim", markup=False)
    title = "Dry run: nothing was written" if dry else "Import"
    console.print(_table(title, report_rows(summary, tally, runtime.zone.tz, dry_run=dry)))


def _embed(kernel: MemoryKernel, console: Console, workers: cluster.Cluster | None) -> int:
    """Compute the waiting vectors (Ctrl-C stops it, keeping every finished vector); the exit status."""
    waiting = kernel.pending_vectors
    if not waiting:
        return 0
    console.print(f"{plural(waiting, 'turn')} searchable by their words now; computing vectors (search by meaning)…")
    if catch_up(kernel, console, workers):
        console.print("Every imported turn is searchable by meaning too.")
        return 0
    print(
        f"huichat: embedding stopped; {waiting - kernel.pending_vectors:,} vectors computed are kept, "
        f"{plural(kernel.pending_vectors, 'turn')} still waiting (found by their words) — run the same command, "
        "or open huichat, to compute the rest",
        file=sys.stderr,
    )
    return EXIT_INTERRUPTED


def add_parser(parser: argparse.ArgumentParser) -> None:
    """The paths and how to read them."""
    parser.description = (
        "Import conversations from exports, databases and folders (the format is told by shape). "
        "Running it again adds only what is new; an interrupted import resumes where it stopped."
    )
    parser.add_argument("paths", nargs="+", type=Path, metavar="PATH", help="files, folders or zips")
    parser.add_argument(
        "--format", choices=[f.value for f in SourceFormat], default=None, help="read every file as this format"
    )
    parser.add_argument("--dry-run", action="store_true", help="show what would be imported; write nothing")
    parser.add_argument("--no-embed", action="store_true", help="do not compute vectors now (huichat does it later)")
    cluster.add_option(parser)


def run(args: argparse.Namespace, runtime: Runtime) -> int:
    """Check the input, import it, print the account, then embed."""
    from huichat.memory.imports.ingest import import_conversations, plan_conversations
    from huichat.memory.imports.stored import SessionLocator

    console = visible.console()
    workers = None if args.no_embed else cluster.Cluster.from_args(args, runtime)
    fmt = SourceFormat(args.format) if args.format else None
    builder = SummaryBuilder()
    limits = runtime.loaded.config.imports
    reader = ImportReader(args.paths, fmt, limits=limits)
    now = runtime.clock()
    try:
        if args.dry_run:
            locator = SessionLocator(runtime.loaded.paths.sessions_dir)
            tally = plan_conversations(locator, runtime.zone.tz, _checked(reader, builder, console), now)
            _show(console, reader, builder.build(), tally, runtime, dry=True)
            return 0
        for _ in _checked(reader, builder, console):
            pass
    except ImportFormatError as exc:
        raise CommandError(f"{exc}\nhuichat: nothing was imported") from None
    summary = builder.build()
    kernel = runtime.open_kernel(embed=False)
    try:
        with ProgressReport(console, "importing", summary.messages, "messages") as progress:
            again = ImportReader(args.paths, fmt, limits=limits)

            def step(conversation: ImportedConversation) -> None:
                progress.update(progress.done + len(conversation.messages))

            try:
                tally = import_conversations(kernel, again.conversations(), now, step)
            except KeyboardInterrupt:
                print(
                    "huichat: import interrupted; what was written is kept — run the same command to add the rest",
                    file=sys.stderr,
                )
                return EXIT_INTERRUPTED
        kernel.maintain(force=True)
        _show(console, reader, summary, tally, runtime, dry=False)
        if args.no_embed:
            if kernel.pending_vectors:
                console.print(
                    f"{plural(kernel.pending_vectors, 'turn')} searchable by their words now; huichat computes their "
                    "vectors in the background when it next opens (then they are found by meaning too)."
                )
            return 0
        return _embed(kernel, console, workers)
    finally:
        kernel.close()

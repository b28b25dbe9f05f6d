"""``huichat export``: memory out to Markdown, JSONL (imports back without loss) or a ChatGPT file."""

from __future__ import annotations

import argparse
import sys
from datetime import date, datetime, time, timedelta, tzinfo
from typing import TYPE_CHECKING

from rich.console import Console
from rich.progress import Progress, SpinnerColumn, TextColumn

from memory.exports import ExportFormat
from memory.exports.selection import Selection
from memory.exports.writer import export

if TYPE_CHECKING:
    from app.runtime import Runtime
    from memory.imports.stored import StoredSession

EXIT_FAIL = 1


def parse_bound(text: str, zone: tzinfo, *, end: bool) -> datetime:
    """A ``--since``/``--until`` value: a date (``--until`` takes its whole day) or a date-time."""
    try:
        if len(text.strip()) == 10:
            day = date.fromisoformat(text.strip())
            return datetime.combine(day + timedelta(days=1 if end else 0), time(), zone)
        moment = datetime.fromisoformat(text.strip())
    except ValueError:
        raise ValueError(f"not a date: {text!r} (expected 2024-01-31 or 2024-01-31T18:00)") from None
    return moment if moment.tzinfo else moment.replace(tzinfo=zone)


def run_export(args: argparse.Namespace, runtime: Runtime) -> int:
    """Write the chosen sessions and say where."""
    zone = runtime.zone.tz
    try:
        since = parse_bound(args.since, zone, end=False) if args.since else None
        until = parse_bound(args.until, zone, end=True) if args.until else None
    except ValueError as exc:
        print(f"huichat: error: {exc}", file=sys.stderr)
        return EXIT_FAIL
    redactor = None
    if args.redact:
        import os

        from providers.redact import redact

        keys = [
            os.environ.get(p.api_key_env, "") for p in runtime.loaded.config.providers.named.values() if p.api_key_env
        ]

        def redactor(text: str) -> str:
            return redact(text, keys)

    console = Console(stderr=True)
    with Progress(SpinnerColumn(), TextColumn("{task.description}"), console=console, transient=True) as progress:
        task = progress.add_task("exporting", total=None)

        def step(stored: StoredSession) -> None:
            progress.update(task, advance=1, description=f"exporting {stored.session_id}")

        report = export(
            runtime.loaded.paths.sessions_dir,
            ExportFormat(args.format),
            args.out,
            Selection(since, until, args.session),
            zone,
            redact=redactor,
            progress=step,
        )
    if not report.sessions:
        print("no session matches; nothing was written")
        return 0
    branches = f", {report.alternatives:,} messages of other branches" if report.alternatives else ""
    redacted = " (secrets redacted)" if args.redact else ""
    print(f"exported {report.sessions:,} sessions ({report.turns:,} turns{branches}) to {report.path}{redacted}")
    return 0

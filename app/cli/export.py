"""``huichat export``: memory out to Markdown, JSONL (imports back without loss) or a ChatGPT file."""

from __future__ import annotations

import argparse
from datetime import date, datetime, time, timedelta, tzinfo
from pathlib import Path
from typing import TYPE_CHECKING

from rich.progress import Progress, SpinnerColumn, TextColumn

from huichat.app import visible
from huichat.app.cli import add_user
from huichat.app.errors import CommandError
from huichat.app.wording import plural
from huichat.memory.exports import ExportFormat
from huichat.memory.exports.selection import Selection
from huichat.memory.exports.writer import export
from huichat.memory.shared_transcripts import pull_working_copy

if TYPE_CHECKING:
    from huichat.app.runtime import Runtime
    from huichat.memory.imports.stored import StoredSession

HELP = "export memory: markdown (readable), jsonl (every field; imports back), chatgpt (conversations.json)"


def add_parser(parser: argparse.ArgumentParser) -> None:
    """The format, where to, and which sessions."""
    add_user(parser)
    parser.description = (
        "Write stored sessions out. Sessions are exported whole; --since/--until pick the sessions "
        "with a turn in that range (dates in the configured time zone; --until includes its day)."
    )
    parser.add_argument("--format", required=True, choices=[f.value for f in ExportFormat])
    parser.add_argument(
        "--out", required=True, type=Path, metavar="PATH", help="a folder (markdown) or a file (jsonl, chatgpt)"
    )
    parser.add_argument("--since", metavar="DATE", help="sessions with a turn on or after this date (2024-01-31)")
    parser.add_argument("--until", metavar="DATE", help="sessions with a turn on or before this date")
    parser.add_argument("--session", metavar="ID", help="only this session")
    parser.add_argument("--redact", action="store_true", help="replace keys and tokens that look like secrets")


def parse_bound(text: str, zone: tzinfo, *, end: bool) -> datetime:
    """A ``--since``/``--until`` value: a date (``--until`` takes its whole day) or a date-time.

    Raises ``ValueError`` naming what was expected.
    """
    try:
        if len(text.strip()) == 10:
            day = date.fromisoformat(text.strip())
            return datetime.combine(day + timedelta(days=1 if end else 0), time(), zone)
        moment = datetime.fromisoformat(text.strip())
    except ValueError:
        raise ValueError(f"not a date: {text!r} (expected 2024-01-31 or 2024-01-31T18:00)") from None
    return moment if moment.tzinfo else moment.replace(tzinfo=zone)


def run(args: argparse.Namespace, runtime: Runtime) -> int:
    """Write the chosen sessions and say where."""
    zone = runtime.zone.tz
    try:
        since = parse_bound(args.since, zone, end=False) if args.since else None
        until = parse_bound(args.until, zone, end=True) if args.until else None
    except ValueError as exc:
        raise CommandError(str(exc)) from None
    redactor = None
    if args.redact:
        import os

        from huichat.providers.redact import redact

        keys = [
            os.environ.get(p.api_key_env, "") for p in runtime.loaded.config.providers.named.values() if p.api_key_env
        ]

        def redactor(text: str) -> str:
            return redact(text, keys)

    console = visible.console(stderr=True)
    with Progress(SpinnerColumn(), TextColumn("{task.description}"), console=console, transient=True) as progress:
        task = progress.add_task("exporting", total=None)

        def step(stored: StoredSession) -> None:
            progress.update(task, advance=1, description=f"exporting {stored.session_id}")

        location = runtime.loaded.location
        pull_working_copy(location)  # with storage.uri: what every replica wrote, first
        report = export(
            location.sessions_dir,
            ExportFormat(args.format),
            args.out,
            Selection(since, until, args.session),
            zone,
            redact=redactor,
            progress=step,
        )
    if not report.sessions and args.session:
        raise CommandError(f"no session '{args.session[:64]}' (huichat sessions lists them); nothing was written")
    if not report.sessions:
        print("no session matches; nothing was written")
        return 0
    branches = f", {plural(report.alternatives, 'message')} of other branches" if report.alternatives else ""
    redacted = " (secrets redacted)" if args.redact else ""
    print(
        f"exported {plural(report.sessions, 'session')} ({plural(report.turns, 'turn')}{branches}) "
        f"to {report.path}{redacted}"
    )
    return 0

"""Commands beside ``app.cli``, one module each: ``import`` and ``export`` (dispatched here),
``keys`` (the service's API keys), ``lifecycle``, ``consolidate`` and ``stats``.

The lifecycle modules have ``add_parser(commands)`` (their sub-command and options) and
``run(args, runtime)``; ``app.wiring`` registers them. Nothing heavy is imported at module level.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING

from memory.exports import ExportFormat
from memory.imports.model import SourceFormat

if TYPE_CHECKING:
    from app.runtime import Runtime

COMMANDS = ("import", "export")
"""Dispatched by ``run_command``."""
EXIT_FAIL = 1


def add_commands(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``import`` and ``export`` to the parser (light: the chat's start-up builds it too)."""
    parser = commands.add_parser(
        "import",
        help="import chat history: ChatGPT, Claude, DeepSeek, llm, elia, chat JSONL, huichat",
        description="Import conversations from exports, databases and folders (the format is told by shape). "
        "Running it again adds only what is new; an interrupted import resumes where it stopped.",
    )
    parser.add_argument("paths", nargs="+", type=Path, metavar="PATH", help="files, folders or zips")
    parser.add_argument(
        "--format", choices=[f.value for f in SourceFormat], default=None, help="read every file as this format"
    )
    parser.add_argument("--dry-run", action="store_true", help="show what would be imported; write nothing")
    parser.add_argument("--no-embed", action="store_true", help="do not compute vectors now (huichat does it later)")

    parser = commands.add_parser(
        "export",
        help="export memory: markdown (readable), jsonl (every field; imports back), chatgpt (conversations.json)",
        description="Write stored sessions out. Sessions are exported whole; --since/--until pick the sessions "
        "with a turn in that range (dates in the configured time zone; --until includes its day).",
    )
    parser.add_argument("--format", required=True, choices=[f.value for f in ExportFormat])
    parser.add_argument(
        "--out", required=True, type=Path, metavar="PATH", help="a folder (markdown) or a file (jsonl, chatgpt)"
    )
    parser.add_argument("--since", metavar="DATE", help="sessions with a turn on or after this date (2024-01-31)")
    parser.add_argument("--until", metavar="DATE", help="sessions with a turn on or before this date")
    parser.add_argument("--session", metavar="ID", help="only this session")
    parser.add_argument("--redact", action="store_true", help="replace keys and tokens that look like secrets")


def run_command(args: argparse.Namespace, runtime: Runtime) -> int:
    """Run ``import`` or ``export``; a memory error is one line, Ctrl-C exits 130."""
    from memory.errors import KernelError

    try:
        if args.command == "import":
            from app.commands.imports import run_import

            return run_import(args, runtime)
        from app.commands.export import run_export

        return run_export(args, runtime)
    except KernelError as exc:
        print(f"huichat: error: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130


Handler = Callable[[argparse.Namespace, "Runtime"], int]


def fail(message: str) -> int:
    """Print one clear line and return the failure status."""
    print(f"huichat: error: {message}", file=sys.stderr)
    return EXIT_FAIL


def guarded(handler: Handler, args: argparse.Namespace, runtime: Runtime) -> int:
    """Run a command; the kernel's errors become one line, Ctrl+C a quiet exit."""
    from memory.errors import KernelError

    try:
        return handler(args, runtime)
    except KernelError as exc:
        return fail(str(exc))
    except KeyboardInterrupt:
        return 130


def moment(text: str | None, runtime: Runtime) -> datetime:
    """``--now`` as an aware time (local when no zone is given), or the runtime's clock."""
    if not text:
        return runtime.clock()
    try:
        parsed = datetime.fromisoformat(text)
    except ValueError:
        raise ValueError(f"--now: not an ISO date-time: {text!r}") from None
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=runtime.zone.tz)


def add_now(parser: argparse.ArgumentParser) -> None:
    """The ``--now ISO`` option (run as if it were that moment)."""
    parser.add_argument("--now", metavar="ISO", help="act as if it were this moment (default: now)")

"""CLI commands beside ``app.cli``, one module each: ``lifecycle``, ``consolidate``, ``stats``.

Each module has ``add_parser(commands)`` (its sub-command and options) and ``run(args,
runtime)``; ``app.wiring`` registers them. Nothing heavy is imported at module level.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from datetime import datetime
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from app.runtime import Runtime

EXIT_FAIL = 1
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

"""The commands of ``huichat``: one module each, with ``HELP``, ``add_parser(parser)`` and ``run(args, runtime)``.

``huichat.app.wiring`` lists them (``COMMANDS``), imports a module only when its command
is named, and is the one place that turns errors into a line and an exit status: a
command raises ``CommandError`` (or lets ``KernelError`` and ``ProviderError`` through).
Nothing heavy is imported at a command module's top.
"""

from __future__ import annotations

import argparse
from datetime import datetime
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from huichat.app.runtime import Runtime


def moment(text: str | None, runtime: Runtime, option: str = "--now") -> datetime:
    """``--now`` as an aware time (in the configured zone when none is given), or the runtime's clock."""
    from huichat.app.errors import CommandError

    if not text:
        return runtime.clock()
    try:
        parsed = datetime.fromisoformat(text)
    except ValueError:
        raise CommandError(f"{option}: not an ISO date-time: {text!r}") from None
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=runtime.zone.tz)


def add_now(parser: argparse.ArgumentParser, help_text: str = "act as if it were this moment (default: now)") -> None:
    """The ``--now ISO`` option (run as if it were that moment)."""
    parser.add_argument("--now", metavar="ISO", help=help_text)


def add_user(parser: argparse.ArgumentParser) -> None:
    """The ``--user NAME`` option: read a user's memory of ``huichat serve`` instead of the chat's own."""
    parser.add_argument(
        "--user",
        dest="memory_user",
        metavar="NAME",
        help="whose memory: a user of huichat serve (default: serve.owner, the chat's own)",
    )

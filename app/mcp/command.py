"""``huichat mcp``: the command that serves memory to an MCP host over stdio."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from huichat.app.errors import CommandError

if TYPE_CHECKING:
    from huichat.app.runtime import Runtime

HELP = "serve memory to MCP hosts over stdio (Claude Desktop, Cursor, …)"


def add_parser(parser: argparse.ArgumentParser) -> None:
    """Whose memory, and whether the host may write."""
    parser.add_argument(
        "--user",
        metavar="NAME",
        help="whose memory (default serve.owner: the chat's own; an existing user unless --allow-write)",
    )
    parser.add_argument("--allow-write", action="store_true", help="also offer the remember tool")


def run(args: argparse.Namespace, runtime: Runtime) -> int:
    """Serve MCP on stdin/stdout until the host closes the pipe."""
    from huichat.app.mcp.server import EXIT_USAGE, run_mcp
    from huichat.app.users.memories import UnknownUser, check_user_name

    try:
        check_user_name(args.user or runtime.loaded.config.serve.owner)
    except UnknownUser as exc:
        raise CommandError(f"--user: {exc}", EXIT_USAGE) from None
    return run_mcp(runtime, args.user, args.allow_write)

"""``huichat correct``: attach a correction to a turn; it is recalled and searched with the turn."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from huichat.app.runtime import Runtime

HELP = "attach a correction to a turn (recalled with it, marked as a later correction)"


def add_parser(parser: argparse.ArgumentParser) -> None:
    """The turn id and the note."""
    parser.add_argument("turn_id", help="the turn's id, e.g. a3f2c7 or id:a3f2c7")
    parser.add_argument("text", help="what is right (kept in the turn's transcript, never replacing what was said)")


def run(args: argparse.Namespace, runtime: Runtime) -> int:
    """Append the correction to the turn's transcript and index the turn again with it."""
    kernel = runtime.open_kernel()
    try:
        turn_id = kernel.correct(args.turn_id, args.text, runtime.clock())
    finally:
        kernel.close()
    print(f"corrected turn {turn_id}")
    return 0

"""``huichat forget``: forget a turn (it leaves search, recall and exports at once), undo that, or purge it."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from huichat.app.runtime import Runtime

HELP = "forget a turn: it leaves search, recall and exports (--undo brings it back)"


def add_parser(parser: argparse.ArgumentParser) -> None:
    """The turn id, ``--undo``."""
    parser.add_argument("turn_id", help="the turn's id, e.g. a3f2c7 or id:a3f2c7")
    parser.add_argument("--undo", action="store_true", help="bring a forgotten turn back")


def run(args: argparse.Namespace, runtime: Runtime) -> int:
    """Forget (or restore) one turn: a tombstone in its transcript, the index in step before this returns."""
    kernel = runtime.open_kernel()
    try:
        turn_id, changed = kernel.forget(args.turn_id, runtime.clock(), restore=args.undo)
    finally:
        kernel.close()
    if args.undo:
        print(f"restored turn {turn_id}" if changed else f"turn {turn_id} was not forgotten")
    else:
        print(
            f"forgot turn {turn_id} (huichat forget --undo {turn_id} brings it back)"
            if changed
            else f"turn {turn_id} was already forgotten"
        )
    return 0

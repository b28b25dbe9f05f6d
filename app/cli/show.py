"""``huichat show``: one turn by its id, in the seed's format (or JSON)."""

from __future__ import annotations

import argparse
import json
import sys
from typing import TYPE_CHECKING

from huichat.app.cli import add_user
from huichat.app.errors import CommandError

if TYPE_CHECKING:
    from huichat.app.runtime import Runtime
    from huichat.memory.turns import Turn

HELP = "print one turn by its id"


def add_parser(parser: argparse.ArgumentParser) -> None:
    """The turn id and ``--json``."""
    add_user(parser)
    parser.add_argument("turn_id")
    parser.add_argument("--json", action="store_true", help="print JSON")


def run(args: argparse.Namespace, runtime: Runtime) -> int:
    """Print one turn by id: from its transcript, or with ``--json`` from the index (every field).

    A turn whose part of the transcript cannot be read is printed from its indexed copy, said on stderr.
    """
    from huichat.memory.results import format_turn, turn_record
    from huichat.memory.turns import not_a_turn_id, parse_turn_id

    turn_id = parse_turn_id(args.turn_id)
    if turn_id is None:
        raise CommandError(not_a_turn_id(args.turn_id))
    catalogue = runtime.open_catalogue()
    if (found := catalogue.locate(turn_id)) is not None and found[1]:
        raise CommandError(f"turn {turn_id} is forgotten (huichat forget --undo {turn_id} brings it back)")
    aside = found is not None and turn_id in catalogue.beside_ids(found[0])
    turn = catalogue.turn(turn_id, beside=True) if aside or not args.json else None
    if aside:  # the index holds the current branch only
        print(f"huichat: turn {turn_id} is on a branch kept beside the current one (← → in the chat)", file=sys.stderr)
    if turn is None:
        turn = _indexed(runtime, turn_id)
        if not args.json:
            # its part of the transcript cannot be read (torn, edited): the index kept a copy
            print(
                f"huichat: turn {turn_id} cannot be read from its transcript: this is its indexed copy", file=sys.stderr
            )
    if args.json:
        print(json.dumps(turn_record(turn, runtime.zone.tz), ensure_ascii=False, indent=2))
    else:
        print(format_turn(turn, runtime.zone.tz))
    return 0


def _indexed(runtime: Runtime, turn_id: str) -> Turn:
    """The turn as the index holds it (every field)."""
    kernel = runtime.open_kernel()
    try:
        found = kernel.recall_by_id(turn_id)
    finally:
        kernel.close()
    if found.turn is None:
        raise CommandError(found.error)
    return found.turn

"""``huichat forget``: forget a turn (it leaves search, recall and exports at once), undo that, or purge it."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from huichat.app.wording import recalled_later
from huichat.memory.errors import KernelError

if TYPE_CHECKING:
    from huichat.app.runtime import Runtime
    from huichat.memory.kernel import MemoryKernel

HELP = "forget a turn: it leaves search, recall and exports (--undo brings it back, --purge removes its text for good)"


def add_parser(parser: argparse.ArgumentParser) -> None:
    """The turn id, ``--undo`` or ``--purge``."""
    parser.add_argument("turn_id", help="the turn's id, e.g. a3f2c7 or id:a3f2c7")
    how = parser.add_mutually_exclusive_group()
    how.add_argument("--undo", action="store_true", help="bring a forgotten turn back")
    how.add_argument(
        "--purge",
        action="store_true",
        help="remove its text for good: from its transcript (its place stays), the index and its old versions, "
        "the import record, the prompt history and any other file under the data folder",
    )


def run(args: argparse.Namespace, runtime: Runtime) -> int:
    """Forget, restore or purge one turn; the index is in step before this returns."""
    kernel = runtime.open_kernel()
    try:
        if args.purge:
            return _purge(args.turn_id, runtime, kernel)
        turn_id, changed = kernel.forget(args.turn_id, runtime.clock(), restore=args.undo)
        if args.undo:
            print(f"restored turn {turn_id}" if changed else f"turn {turn_id} was not forgotten")
            return 0
        print(
            f"forgot turn {turn_id} (huichat forget --undo {turn_id} brings it back)"
            if changed
            else f"turn {turn_id} was already forgotten"
        )
        _say_recallers(kernel, turn_id)
    finally:
        kernel.close()
    return 0


def _say_recallers(kernel: MemoryKernel, turn_id: str, *, purge: bool = False) -> None:
    """The later turns that recalled the forgotten (``purge``: purged) one, in one line, with the
    commands that do the same to them."""
    try:
        ids = kernel.recalled_by(turn_id)
    except KernelError as exc:
        print(f"which later turns recalled it cannot be told now: {exc}")
        return
    command = "huichat forget --purge" if purge else "huichat forget"
    verb = ("purge", "purging") if purge else ("forget", "forgetting")
    line = recalled_later(ids, lambda shown: "; ".join(f"{command} {i}" for i in shown), verb)
    if line:
        print(line)


def _purge(turn_id: str, runtime: Runtime, kernel: MemoryKernel) -> int:
    """The kernel purges what memory keeps; then the prompt history and the other files under the data folder."""
    from huichat.app.prompt_history import FILE_NAME, PromptHistory
    from huichat.memory.purging import purge_turn, sweep

    cleaned, texts = purge_turn(kernel, turn_id)
    if not texts:
        print(f"turn {cleaned} was purged already")
        _say_recallers(kernel, cleaned, purge=True)
        return 0
    paths = runtime.loaded.paths
    history = paths.data_dir / FILE_NAME
    prompts = PromptHistory(history).drop(texts) if history.exists() else 0
    # what memory keeps was purged precisely above; another user's files are theirs
    skip = [paths.sessions_dir, paths.models_dir, paths.data_dir / "users", history]
    swept = sweep(paths.data_dir, texts, skip)
    more = [f"{prompts} prompt{'s' if prompts != 1 else ''} in the history"] if prompts else []
    more += (
        [f"{len(swept)} other file{'s' if len(swept) != 1 else ''} ({', '.join(p.name for p in swept[:3])})"]
        if swept
        else []
    )
    print(
        f"purged turn {cleaned}: its text is gone from its transcript and the index"
        + (f", and from {' and '.join(more)}" if more else "")
    )
    _say_recallers(kernel, cleaned, purge=True)  # a later reply may quote what was purged
    return 0

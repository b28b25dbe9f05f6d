"""Forgetting and correcting turns from the chat: the memory panel's, search's and the turn view's keys.

The kernel does the work (a tombstone or a note appended to the transcript, the index in step
before it returns); here it runs off the UI thread, and every view that shows the turn follows
at once: panels drop a forgotten turn, a turn view showing it closes, a corrected turn is shown
again with its correction.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from huichat.app.tui.screens.turn_detail import TurnDetailScreen
from huichat.app.tui.widgets.memory_panel import MemoryPanel
from huichat.app.wording import recalled_later
from huichat.memory.errors import KernelError

if TYPE_CHECKING:
    from huichat.app.tui.app import HuichatApp
    from huichat.memory.turns import Turn


async def forget(app: HuichatApp, turn_id: str, *, undo: bool = False) -> None:
    """Forget ``turn_id`` (``undo``: bring it back) and say so; a failure is one notification."""
    now = app.runtime.clock()
    try:
        cleaned, changed = await app.gateway.run(lambda kernel: kernel.forget(turn_id, now, restore=undo))
    except KernelError as exc:
        app.notify(str(exc), title="Forget", severity="error")
        return
    await app.chat_screen.update_memory_status()  # the turn count in the status line
    if undo:
        app.last_forgotten = None
        app.notify(f"Restored turn {cleaned}." if changed else f"Turn {cleaned} was not forgotten.", timeout=4)
        return
    app.last_forgotten = cleaned
    try:
        await app.chat_screen.reread_title()  # a title cut from the forgotten turn's words is cut anew
    except KernelError as exc:
        app.notify(str(exc), title="Forget", severity="warning")
    said = "Forgot" if changed else "Already forgot"
    app.notify(f"{said} turn {cleaned}: it is no longer searched or recalled. Palette: “Undo forget” brings it back.")
    _follow(app, cleaned, None)
    try:
        recallers = await app.gateway.run(lambda kernel: kernel.recalled_by(cleaned))
    except KernelError as exc:
        app.notify(f"Which later turns recalled it cannot be told now: {exc}", title="Forget", severity="warning")
        return
    if line := recalled_later(recallers, lambda _: "palette “Forget a turn…”"):
        app.notify(line, title="Forget", severity="warning", timeout=12)


async def correct(app: HuichatApp, turn_id: str) -> None:
    """Ask for the correction's text, attach it to ``turn_id`` and show the turn again with it."""
    from huichat.app.tui.screens.ask_path import AskPathScreen

    text = await app.push_screen_wait(
        AskPathScreen(f"Correction for turn {turn_id} (what was said stays):", "", enter="attaches it")
    )
    if text is None:
        return
    now = app.runtime.clock()
    try:
        cleaned = await app.gateway.run(lambda kernel: kernel.correct(turn_id, text, now))
        fresh = await app.gateway.turn(cleaned)
    except KernelError as exc:
        app.notify(str(exc), title="Correct", severity="error")
        return
    app.notify(f"Corrected turn {cleaned}: the note is recalled with it.", timeout=4)
    _follow(app, cleaned, fresh)


async def ask_turn_id(app: HuichatApp, what: str) -> str | None:
    """The palette's way in: ask which turn (``a3f2c7`` or ``id:a3f2c7``)."""
    from huichat.app.tui.screens.ask_path import AskPathScreen

    return await app.push_screen_wait(
        AskPathScreen(f"{what} which turn? (its id, e.g. a3f2c7)", "", enter="chooses it")
    )


def _follow(app: HuichatApp, turn_id: str, fresh: Turn | None) -> None:
    """Every open view of ``turn_id`` shows ``fresh`` (None: it was forgotten and goes)."""
    gone = frozenset() if fresh is not None else frozenset({turn_id})
    turns = {turn_id: fresh} if fresh is not None else {}
    for screen in app.screen_stack:
        for panel in screen.query(MemoryPanel):
            panel.replace_turns(turns, gone=gone)
        if isinstance(screen, TurnDetailScreen) and screen.turn is not None and screen.turn.id == turn_id:
            if fresh is None:
                screen.dismiss()
            else:
                screen.turn = fresh

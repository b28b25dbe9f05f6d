"""One turn in full, with its anchors; walk the linked list with single keys."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from datetime import tzinfo
from typing import TYPE_CHECKING

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical, VerticalScroll
from textual.reactive import reactive
from textual.screen import ModalScreen
from textual.widgets import Footer, Label, Markdown

from huichat.app.tui.widgets.chat_message import kept_line_breaks
from huichat.app.tui.widgets.memory_panel import MemoryPanel
from huichat.memory.transcript import format_local_time
from huichat.memory.turns import CORRECTION, anchor_line

if TYPE_CHECKING:
    from huichat.memory.turns import Turn


Fetch = Callable[[str], Awaitable["Turn | None"]]


TIER_NAMES = {"working": "working memory", "long_term": "long-term", "archive": "archive"}


def lifecycle_line(turn: Turn) -> str:
    """Tier, importance and its five parts, use and cluster: why this turn ranks where it does."""
    parts = [TIER_NAMES.get(turn.tier, turn.tier)]
    if turn.importance is not None:
        detail = ""
        if turn.importance_parts is not None:
            shown = turn.importance_parts.to_record()
            detail = " (" + " · ".join(f"{k} {'—' if v is None else f'{v:.2f}'}" for k, v in shown.items()) + ")"
        parts.append(f"importance {turn.importance:.2f}{detail}")
    if turn.access_count:
        parts.append(f"retrieved {turn.access_count}×")
    if turn.cluster_role in ("representative", "member"):
        parts.append(f"cluster {turn.cluster_id} ({turn.cluster_role})")
    return " · ".join(parts)


def turn_markdown(turn: Turn) -> str:
    """The turn's messages as Markdown, speakers in bold."""
    parts = []
    for message in turn.messages:
        if message.kind == CORRECTION:  # written later about this turn: its speaker is when
            parts.append(f"**✎ later correction** · {message.speaker[:10]}\n\n{message.text}")
            continue
        kind = "" if message.is_chat else f" · {message.kind}"
        parts.append(f"**{message.who}**{kind}\n\n{message.text}")
    return "\n\n---\n\n".join(parts)


class TurnDetailScreen(ModalScreen[None]):
    """Full text of a turn; ``p``/``n`` (or ←/→) walk prev/next, ``h`` returns to the hit, ``o`` opens its
    conversation in the chat (on this turn)."""

    BINDINGS = [
        Binding("p,left", "walk('prev')", "Prev turn"),
        Binding("n,right", "walk('next')", "Next turn"),
        Binding("h,home", "back_to_hit", "Back to hit"),
        Binding("o", "open_conversation", "Open conversation"),
        Binding("x", "forget", "Forget"),
        Binding("e", "correct", "Correct"),
        Binding("escape,q", "dismiss", "Close"),
    ]

    turn: reactive[Turn | None] = reactive(None)

    def __init__(self, turn: Turn, hit_id: str, fetch: Fetch, zone: tzinfo) -> None:
        super().__init__()
        self._first = turn
        self.hit_id = hit_id
        self.fetch = fetch
        self.zone = zone

    def compose(self) -> ComposeResult:
        with Vertical(id="detail"):
            yield Label("", id="anchors", markup=False)  # ids and topics are text ("[id:…]", "[/INST]")
            yield Label("", id="where", markup=False)
            yield Label("", id="lifecycle", markup=False)
            with VerticalScroll(id="detail-body"):
                # the record as it was written: a line break typed is a line break (Markdown joins lines)
                yield Markdown("", id="detail-text", parser_factory=kept_line_breaks)
            yield Footer()

    def on_mount(self) -> None:
        self.set_reactive(TurnDetailScreen.turn, self._first)
        self._show(self._first)

    def watch_turn(self, turn: Turn | None) -> None:
        if turn is not None:
            self._show(turn)

    def _show(self, turn: Turn) -> None:
        marker = "  ● the recalled hit" if turn.id == self.hit_id else ""
        self.query_one("#anchors", Label).update(anchor_line(turn.id, turn.prev_id, turn.next_id) + marker)
        local = format_local_time(turn.timestamp, self.zone)
        topic = f" · 话题: {turn.topic}" if turn.topic else ""
        failed = " · ⚠ failed reply" if turn.status != "ok" else ""
        self.query_one("#where", Label).update(f"{local}{topic}{failed}\n📁 {turn.session_file}")
        self.query_one("#lifecycle", Label).update(lifecycle_line(turn))
        self.query_one("#detail-text", Markdown).update(turn_markdown(turn))
        self.set_class(turn.id == self.hit_id, "-hit")

    async def action_walk(self, direction: str) -> None:
        """Move to the previous or next turn of the session."""
        current = self.turn
        if current is None:
            return
        target = current.prev_id if direction == "prev" else current.next_id
        if not target:
            self.notify(f"This is the {'first' if direction == 'prev' else 'last'} turn of its session.", timeout=2)
            return
        found = await self.fetch(target)
        if found is None:
            self.notify(f"Turn {target} is not in memory.", severity="error")
            return
        self.turn = found

    def action_open_conversation(self) -> None:
        """Read the turn shown in its conversation: the chat opens that session on it (the app does it)."""
        if self.turn is not None:
            self.post_message(MemoryPanel.OpenAsked(self.turn.session_id, self.turn.id))

    def action_forget(self) -> None:
        """Forget the turn shown (the app does it, then closes this view)."""
        if self.turn is not None:
            self.post_message(MemoryPanel.ForgetAsked(self.turn.id))

    def action_correct(self) -> None:
        """Attach a correction to the turn shown (it appears here once written)."""
        if self.turn is not None:
            self.post_message(MemoryPanel.CorrectAsked(self.turn.id))

    async def action_back_to_hit(self) -> None:
        """Return to the turn that was recalled."""
        found = await self.fetch(self.hit_id)
        if found is not None:
            self.turn = found

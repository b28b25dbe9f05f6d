"""The memory panel: what was recalled for the current reply, walkable from the keyboard."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import tzinfo
from typing import TYPE_CHECKING

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.message import Message
from textual.widgets import Label, OptionList, Static
from textual.widgets.option_list import Option

if TYPE_CHECKING:
    from memory.results import SearchHit


def hit_prompt(hit: SearchHit, zone: tzinfo, snippet_chars: int) -> Text:
    """Two lines for one recalled turn: role, similarity, time, topic, anchor; then a snippet."""
    turn = hit.turn
    local = turn.timestamp.astimezone(zone)
    head = Text()
    head.append("● hit " if hit.role == "hit" else "○ near ", style="bold" if hit.role == "hit" else "dim")
    head.append(f"{hit.similarity:.3f} " if hit.role == "hit" else "      ")
    head.append(f"{local:%Y-%m-%d %a %H:%M} ")
    head.append(f"[{turn.id}]", style="italic")
    if turn.topic:
        head.append(f" {turn.topic}", style="dim")
    snippet = " ".join(turn.text.split())
    if len(snippet) > snippet_chars:
        snippet = snippet[: snippet_chars - 1] + "…"
    head.append("\n")
    head.append(snippet)
    return head


class MemoryPanel(Vertical):
    """Recalled turns (hits and neighbours) with the time range that was understood."""

    @dataclass
    class TurnChosen(Message):
        """The user opened a recalled turn (Enter or click)."""

        turn_id: str
        hit_id: str

    def __init__(self, zone: tzinfo, snippet_chars: int = 160, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.zone = zone
        self.snippet_chars = snippet_chars
        self._hits: list[SearchHit] = []

    def compose(self) -> ComposeResult:
        yield Label("Memory", classes="title")
        yield Static("Nothing recalled yet.", classes="scope")
        yield OptionList(classes="hits")

    @property
    def hits(self) -> list[SearchHit]:
        """What the panel shows, in order."""
        return list(self._hits)

    def clear(self, scope: str = "Nothing recalled yet.") -> None:
        """Empty the list (a new reply or search starts)."""
        self._hits = []
        self.query_one(OptionList).clear_options()
        self.query_one(".scope", Static).update(scope)

    def show(self, hits: list[SearchHit], scope: str, *, append: bool = False) -> None:
        """Show ``hits`` under a ``scope`` line (time range, scan rounds, query)."""
        options = self.query_one(OptionList)
        if not append:
            self._hits = []
            options.clear_options()
        seen = {(h.turn.id, h.role) for h in self._hits}
        fresh = [h for h in hits if (h.turn.id, h.role) not in seen]
        self._hits.extend(fresh)
        options.add_options(
            [
                Option(hit_prompt(h, self.zone, self.snippet_chars), id=f"{len(self._hits) - len(fresh) + i}")
                for i, h in enumerate(fresh)
            ]
        )
        self.query_one(".scope", Static).update(scope)
        if options.highlighted is None and self._hits:
            options.highlighted = 0

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        index = int(event.option.id or 0)
        hit = self._hits[index]
        self.post_message(self.TurnChosen(hit.turn.id, hit.hit_id or hit.turn.id))

"""The memory panel: what was recalled for the current reply, walkable from the keyboard."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import tzinfo
from typing import TYPE_CHECKING

from rich.console import RenderableType
from rich.padding import Padding
from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.message import Message
from textual.widgets import Label, OptionList, Static
from textual.widgets.option_list import Option

from memory.results import hits_first

if TYPE_CHECKING:
    from memory.results import SearchHit


def hit_prompt(hit: SearchHit, zone: tzinfo, snippet_chars: int) -> RenderableType:
    """Two lines for one recalled turn: similarity, time, anchor, topic; then a snippet.

    A neighbour is indented under its hit, dimmed, and has no similarity of its own.
    """
    turn = hit.turn
    local = turn.timestamp.astimezone(zone)
    is_hit = hit.role == "hit"
    text = Text(style="" if is_hit else "dim")
    if is_hit:
        text.append("● by id " if hit.similarity is None else f"● {hit.similarity:.3f} ", style="bold")
    else:
        text.append(f"↳ context for {hit.hit_id} ")
    text.append(f"{local:%Y-%m-%d %a %H:%M} ")
    text.append(f"[{turn.id}]", style="italic")
    if turn.topic and is_hit:
        text.append(f" {turn.topic}", style="dim")
    snippet = " ".join(turn.text.split())
    if len(snippet) > snippet_chars:
        snippet = snippet[: snippet_chars - 1] + "…"
    text.append("\n" + snippet)
    return text if is_hit else Padding(text, (0, 0, 0, 4))


class MemoryPanel(Vertical):
    """Recalled turns (hits, each with its neighbours under it) and the time range that was understood."""

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

    @property
    def options(self) -> OptionList:
        return self.query_one(OptionList)

    def focus_list(self) -> None:
        """Move the keyboard into the list (↑ ↓ Enter)."""
        self.options.focus()

    def clear(self, scope: str = "Nothing recalled yet.") -> None:
        """Empty the list (a new reply or search starts)."""
        self._hits = []
        self.options.clear_options()
        self.query_one(".scope", Static).update(scope)

    def show(self, hits: list[SearchHit], scope: str, *, append: bool = False) -> None:
        """Show ``hits`` (hits first, neighbours under them) under a ``scope`` line."""
        options = self.options
        if not append:
            self._hits = []
            options.clear_options()
        seen = {(h.turn.id, h.role) for h in self._hits}
        fresh = [h for h in hits_first(hits) if (h.turn.id, h.role) not in seen]
        first = len(self._hits)
        self._hits.extend(fresh)
        options.add_options(
            [Option(hit_prompt(h, self.zone, self.snippet_chars), id=str(first + i)) for i, h in enumerate(fresh)]
        )
        self.query_one(".scope", Static).update(scope)
        if options.highlighted is None and self._hits:
            options.highlighted = 0

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        hit = self._hits[int(event.option.id or 0)]
        self.post_message(self.TurnChosen(hit.turn.id, hit.hit_id or hit.turn.id))

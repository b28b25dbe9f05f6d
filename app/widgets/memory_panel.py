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

if TYPE_CHECKING:
    from memory.results import SearchHit


def hits_first(results: list[SearchHit]) -> list[SearchHit]:
    """Hits in rank order, each followed by its own neighbours in conversation order.

    A neighbour is context for its hit: it is never shown above it, where it would read as
    belonging to the hit before.
    """
    hits = [r for r in results if r.role == "hit"]
    around: dict[str, list[SearchHit]] = {}
    for result in results:
        if result.role != "hit" and result.hit_id:
            around.setdefault(result.hit_id, []).append(result)
    ordered: list[SearchHit] = []
    for hit in hits:
        ordered.append(hit)
        ordered.extend(sorted(around.get(hit.turn.id, []), key=lambda n: n.turn.turn_index))
    return ordered


def hit_prompt(hit: SearchHit, zone: tzinfo, snippet_chars: int) -> RenderableType:
    """Two lines for one recalled turn: similarity, time, anchor, topic, which time matched; then a snippet.

    A neighbour is indented under its hit, dimmed, and has no similarity of its own.
    """
    from memory.results import placement  # memory is open once there are hits; the panel paints without it

    turn = hit.turn
    local = turn.timestamp.astimezone(zone)
    is_hit = hit.role == "hit"
    text = Text(style="" if is_hit else "dim")
    if is_hit:
        text.append(f"● {hit.similarity:.3f} ", style="bold")
    else:
        text.append("↳ context ")
    text.append(f"{local:%Y-%m-%d %a %H:%M} ")
    text.append(f"[{turn.id}]", style="italic")
    if turn.topic and is_hit:
        text.append(f" {turn.topic}", style="dim")
    matched = placement(hit, zone)
    if matched:
        text.append(f" · {matched}", style="yellow" if hit.outside else "cyan")
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

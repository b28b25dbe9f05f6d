"""The memory panel: what was recalled for the current reply, walkable from the keyboard."""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass, replace
from datetime import tzinfo
from typing import TYPE_CHECKING

from rich.console import RenderableType
from rich.padding import Padding
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.message import Message
from textual.widgets import Label, OptionList, Static
from textual.widgets.option_list import Option

if TYPE_CHECKING:
    from huichat.memory.results import SearchHit, SearchResults
    from huichat.memory.turns import Turn


def nearest_below(results: SearchResults) -> list[SearchHit]:
    """The nearest turn under the threshold of a search (of each of its queries) that found no hit:
    listed after the hits, marked, so it opens like one (the scope line named it and nothing opened it)."""
    parts = results.parts or (results,)
    found = {hit.turn.id for hit in results}
    nearest: list[SearchHit] = []
    for part in parts:
        below = part.below
        if below is not None and not part.hits and below.turn.id not in found:
            found.add(below.turn.id)
            nearest.append(below)
    return nearest


def hit_prompt(
    hit: SearchHit,
    zone: tzinfo,
    snippet_chars: int,
    *,
    similar_to: str = "",
    nearest: bool = False,
    wanted: Collection[str] = (),
) -> RenderableType:
    """Two lines for one recalled turn: similarity, time, anchor, topic, which time matched; then a snippet:
    the turn's start, or where it holds more of the query's terms ``wanted`` (``words.excerpt``).

    A hit kept under the threshold for the hit above it whose names it holds says which (``linked to``).
    A neighbour is indented under its hit, dimmed, and has no similarity of its own; so is a
    near-duplicate shown under its representative (``similar_to``). A representative says
    how many near-duplicates it stands for (``+N similar``; ``+`` shows them). The nearest turn
    of a search that found nothing (``nearest``) is dimmed and says it is not a hit.
    """
    from huichat.memory.results import placement  # memory is open once there are hits; the panel paints without it
    from huichat.memory.turns import STATUS_OK, STOPPED
    from huichat.memory.words import excerpt

    turn = hit.turn
    local = turn.timestamp.astimezone(zone)
    is_hit = hit.role == "hit" and not similar_to and not nearest
    text = Text(style="" if is_hit else "dim")
    if nearest:
        text.append(f"○ {hit.similarity or 0.0:.3f} nearest, below the threshold · ", style="bold")
    elif is_hit:
        text.append("● by id " if hit.similarity is None else f"● {hit.similarity:.3f} ", style="bold")
    else:
        text.append("≈ similar " if similar_to else f"↳ context for {hit.hit_id} ")
    text.append(f"{local:%Y-%m-%d %a %H:%M} ")
    text.append(f"[{turn.id}]", style="italic")
    if turn.topic and (is_hit or nearest):
        text.append(f" {turn.topic}", style="dim")
    matched = placement(hit, zone) if is_hit else ""
    if matched:
        text.append(f" · {matched}", style="yellow" if hit.outside else "cyan")
    if hit.linked_to and is_hit:  # under the threshold, kept for the hit whose names it holds
        text.append(f" · linked to {hit.linked_to} by {', '.join(hit.linked_by)}", style="magenta")
    if hit.similar:
        text.append(f" +{len(hit.similar)} similar", style="bold")
    if turn.status != STATUS_OK:  # found with ctrl+t: a reply stopped or failed says so, as in the chat
        text.append(" · ■ stopped" if dict(turn.extra).get("error") == STOPPED else " · ⚠ failed", style="red")
    text.append("\n" + excerpt(turn.text, wanted, snippet_chars))
    return text if is_hit or nearest else Padding(text, (0, 0, 0, 4))


class MemoryPanel(Vertical):
    """Recalled turns (hits, each with its neighbours under it) and the time range that was understood.

    A consolidation representative can be expanded (``+``) to list the near-duplicates it
    stands for under it; each opens like any other turn.
    """

    BINDINGS = [
        Binding("plus,equals_sign", "toggle_similar", "Similar", show=False),
        Binding("x", "forget", "Forget turn"),
        Binding("e", "correct", "Correct turn"),
    ]

    @dataclass
    class TurnChosen(Message):
        """The user opened a recalled turn (Enter or click)."""

        turn_id: str
        hit_id: str

    @dataclass
    class ForgetAsked(Message):
        """The user asked to forget a turn (``x`` here, in search or in the turn view)."""

        turn_id: str

    @dataclass
    class OpenAsked(Message):
        """The user asked to read a turn in its conversation (``o`` in the turn view)."""

        session_id: str
        turn_id: str

    @dataclass
    class CorrectAsked(Message):
        """The user asked to attach a correction to a turn (``e``)."""

        turn_id: str

    def __init__(self, zone: tzinfo, snippet_chars: int = 160, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.zone = zone
        self.snippet_chars = snippet_chars
        self._results: list[SearchHit] = []
        """What was recalled, hits first (neighbours under their hit)."""
        self._nearest: list[SearchHit] = []
        """Listed after them: the nearest turn of a search that found no hit (not a hit itself)."""
        self._expanded: set[str] = set()
        self._rows: list[tuple[SearchHit, str]] = []
        """What the list shows: each result, and the near-duplicates of an expanded one (with its id)."""
        self._wanted: dict[str, frozenset[str]] = {}
        """Per turn listed, the terms of the query that found it (its snippet shows where it holds them)."""

    def compose(self) -> ComposeResult:
        yield Label("Memory", classes="title")
        yield Static("Nothing recalled yet.", classes="scope", markup=False)  # ids print as [a3f2c7]
        yield OptionList(classes="hits")

    @property
    def hits(self) -> list[SearchHit]:
        """What the panel shows, in order."""
        return [hit for hit, _ in self._rows]

    @property
    def found(self) -> bool:
        """Something was recalled (a nearest turn below the threshold is not)."""
        return bool(self._results)

    @property
    def options(self) -> OptionList:
        return self.query_one(OptionList)

    def focus_list(self) -> None:
        """Move the keyboard into the list (↑ ↓ Enter)."""
        self.options.focus()

    def clear(self, scope: str = "Nothing recalled yet.") -> None:
        """Empty the list (a new reply or search starts)."""
        self._results = []
        self._nearest = []
        self._expanded = set()
        self._render_rows()
        self.query_one(".scope", Static).update(scope)

    def show(
        self,
        hits: list[SearchHit],
        scope: str,
        *,
        append: bool = False,
        nearest: list[SearchHit] | None = None,
        query: str = "",
    ) -> None:
        """Show ``hits`` (hits first, neighbours under them) under a ``scope`` line, then ``nearest``
        (see ``nearest_below``); each row's snippet where its turn holds ``query``'s words."""
        from huichat.memory.results import hits_first  # memory is open once there are hits; the panel paints without it
        from huichat.memory.words import content_terms

        if not append:
            self._results = []
            self._nearest = []
            self._expanded = set()
            self._wanted = {}
        wanted = content_terms(query) if query else frozenset()
        for hit in (*hits, *(nearest or ())):
            self._wanted.setdefault(hit.turn.id, wanted)
        seen = {(h.turn.id, h.role) for h in self._results}
        self._results.extend(h for h in hits_first(hits) if (h.turn.id, h.role) not in seen)
        listed = {h.turn.id for h in self._results} | {h.turn.id for h in self._nearest}
        self._nearest.extend(h for h in nearest or () if h.turn.id not in listed)
        self._render_rows(keep_highlight=append)
        self.query_one(".scope", Static).update(scope)

    def replace_turns(self, turns: dict[str, Turn], gone: set[str] | frozenset[str] = frozenset()) -> None:
        """Show newer versions of turns already listed (a transcript changed under them); ``gone``
        (forgotten, or removed from their transcript) are no longer listed."""
        self._results = [
            replace(h, turn=turns.get(h.turn.id, h.turn), similar=tuple(m for m in h.similar if m.id not in gone))
            for h in self._results
            if h.turn.id not in gone and h.hit_id not in gone  # context for a forgotten hit goes with it
        ]
        self._nearest = [replace(h, turn=turns.get(h.turn.id, h.turn)) for h in self._nearest if h.turn.id not in gone]
        self._render_rows()

    @property
    def shown_ids(self) -> set[str]:
        """Every turn the panel lists, near-duplicates included."""
        listed = [*self._results, *self._nearest]
        return {h.turn.id for h in listed} | {m.id for h in self._results for m in h.similar}

    def _render_rows(self, *, keep_highlight: bool = True) -> None:
        options = self.options
        highlighted = options.highlighted if keep_highlight else None
        rows: list[tuple[SearchHit, str]] = []
        for hit in self._results:
            rows.append((hit, ""))
            if hit.turn.id in self._expanded:
                rows.extend(
                    (replace(hit, turn=m, role="neighbor", hit_id=hit.turn.id, similar=()), hit.turn.id)
                    for m in hit.similar
                )
        first_nearest = len(rows)
        rows.extend((hit, "") for hit in self._nearest)
        self._rows = rows
        options.clear_options()
        options.add_options(
            [
                Option(
                    hit_prompt(
                        h,
                        self.zone,
                        self.snippet_chars,
                        similar_to=parent,
                        nearest=i >= first_nearest,
                        wanted=self._wanted.get(parent or h.turn.id) or self._wanted.get(h.hit_id or "", frozenset()),
                    ),
                    id=str(i),
                )
                for i, (h, parent) in enumerate(rows)
            ]
        )
        if rows:
            options.highlighted = min(highlighted, len(rows) - 1) if highlighted is not None else 0

    def action_toggle_similar(self) -> None:
        """Show or hide the near-duplicates of the highlighted representative."""
        index = self.options.highlighted
        if index is None or index >= len(self._rows):
            return
        hit, parent = self._rows[index]
        owner = parent or hit.turn.id
        owner_hit = next((h for h in self._results if h.turn.id == owner), None)
        if owner_hit is None or not owner_hit.similar:
            return
        self._expanded ^= {owner}
        self._render_rows()

    def _highlighted_id(self) -> str | None:
        index = self.options.highlighted
        return self._rows[index][0].turn.id if index is not None and index < len(self._rows) else None

    def action_forget(self) -> None:
        """Forget the highlighted turn: it leaves search, recall and the model's context."""
        if (turn_id := self._highlighted_id()) is not None:
            self.post_message(self.ForgetAsked(turn_id))

    def action_correct(self) -> None:
        """Attach a correction to the highlighted turn."""
        if (turn_id := self._highlighted_id()) is not None:
            self.post_message(self.CorrectAsked(turn_id))

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        hit, parent = self._rows[int(event.option.id or 0)]
        self.post_message(self.TurnChosen(hit.turn.id, parent or hit.hit_id or hit.turn.id))

"""Search memory directly: the same hits and neighbours the LLM sees, walkable the same way."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from datetime import tzinfo
from typing import TYPE_CHECKING

from textual import events, on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import Screen
from textual.widgets import Footer, Header, Input, OptionList

from huichat.app.tui.screens.turn_detail import TurnDetailScreen
from huichat.app.tui.widgets.memory_panel import MemoryPanel, nearest_below
from huichat.memory.errors import KernelError
from huichat.memory.turns import asked_turn_id

if TYPE_CHECKING:
    from huichat.memory.results import RecallResult, SearchResults
    from huichat.memory.turns import Turn


Search = Callable[[str, bool], Awaitable["SearchResults"]]
"""``search(query, include_failed)``."""

Recall = Callable[[str], Awaitable["RecallResult"]]
"""``recall(turn_id)``: the turn, or why there is none."""


def describe_results(results: SearchResults) -> str:
    """The scope line: what was searched, the time understood and what it held, scan rounds, counts;
    for one call that searched several queries, each query's own line joined by `` | ``."""
    from huichat.memory.results import time_summary  # memory is open by now; the screen paints without it

    if results.parts:
        return " | ".join(describe_results(part) for part in results.parts)
    parts = [f"“{results.keywords or '(any)'}”"]
    if results.time_range is not None:
        parts.append(f"{results.time_range.phrase} → {results.time_range.describe()}")
    if results.rounds:
        weeks = " · ".join(f"{r.label} ({len(r.found)})" for r in results.rounds)
        parts.append(f"scanned {len(results.rounds)} weeks: {weeks}")
    hits = len(results.hits)
    if any(hit.stands_out for hit in results.hits):  # what memory-first offered the model: no hit, one likely one
        parts.append("no hit above the threshold · the closest, far likelier than the rest, offered as uncertain")
    elif hits == 0:
        parts.append("no relevant memory")
        if results.below is not None:
            parts.append(
                f"nearest [{results.below.turn.id}] {results.below.similarity or 0.0:.3f} is below the threshold"
            )
    else:
        context = len(results) - hits
        count = time_summary(results, "range") or f"{hits} hit{'s' if hits != 1 else ''}"
        parts.append(count + (f", {context} around them" if context else ""))
    return " · ".join(parts)


class ResultsPanel(MemoryPanel, inherit_bindings=False):
    """The memory panel as search results: typing in them goes on in the query box, so the
    panel's letter keys (x forgets, e corrects) are Del and ctrl+e here — typing "x" never
    forgets a turn."""

    BINDINGS = [
        Binding("plus,equals_sign", "toggle_similar", "Similar", show=False),
        Binding("delete", "forget", "Forget turn"),
        Binding("ctrl+e", "correct", "Correct turn"),
    ]


class SearchScreen(Screen[None]):
    """Type a query (time words welcome) and press Enter; ↓ moves into the results, Enter opens one.

    The query box stays where typing goes: letters typed in the results go back to it.
    """

    BINDINGS = [
        Binding("escape", "app.pop_screen", "Back to chat"),
        Binding("ctrl+t", "toggle_failed", "Failed replies"),
    ]

    def __init__(
        self, search: Search, recall: Recall, zone: tzinfo, snippet_chars: int, cursor_blink: bool = True
    ) -> None:
        super().__init__()
        self.cursor_blink = cursor_blink
        self.search = search
        self.recall = recall
        self.zone = zone
        self.snippet_chars = snippet_chars
        self.include_failed = False

    @property
    def query_box(self) -> Input:
        return self.query_one("#query", Input)

    @property
    def results(self) -> MemoryPanel:
        return self.query_one("#results", MemoryPanel)

    def compose(self) -> ComposeResult:
        yield Header()
        with Vertical(id="search"):
            # typing after coming back from the results continues the query instead of replacing it
            query = Input(
                placeholder="Search memory — e.g. 上周三下午 部署, VPN last week", id="query", select_on_focus=False
            )
            query.cursor_blink = self.cursor_blink
            yield query
            yield ResultsPanel(self.zone, self.snippet_chars, id="results")
        yield Footer()

    def on_mount(self) -> None:
        self.results.clear("Type a query and press Enter · ↓ moves into the results · Esc goes back.")
        self.query_box.focus()

    @on(Input.Submitted, "#query")
    def _submitted(self, event: Input.Submitted) -> None:
        if event.value.strip():
            self.run_search(event.value)
        else:
            self.results.clear("Type something to search for (time words work: 上周三下午, last week).")

    def on_key(self, event: events.Key) -> None:
        focused = self.focused
        if focused is self.query_box and event.key == "down" and self.results.hits:
            event.stop()
            self.results.focus_list()
        elif (
            isinstance(focused, OptionList)
            and event.is_printable
            and event.character
            and event.key not in self.active_bindings
        ):
            # typing in the results goes on in the query box
            event.stop()
            self.query_box.focus()
            self.query_box.insert_text_at_cursor(event.character)

    def action_toggle_failed(self) -> None:
        """Include (or leave out) failed replies — turns whose answer never came."""
        self.include_failed = not self.include_failed
        state = "included" if self.include_failed else "left out"
        self.notify(f"Failed replies are {state}.", timeout=2)
        if self.query_box.value.strip():
            self.run_search(self.query_box.value)

    @work(exclusive=True, group="search", exit_on_error=False)
    async def run_search(self, query: str) -> None:
        """Open the turn when the query is the id of one, else search in the background and show the results.

        A bare id is also a word (``python`` has the shape of one): when no turn has it, it is searched for.
        """
        asked = asked_turn_id(query)
        if asked is not None:
            turn_id, explicit = asked
            found = await self.recall(turn_id)
            if found.turn is not None:
                self.results.clear(f"Turn {turn_id} opened · Esc comes back here.")
                await self.app.push_screen(TurnDetailScreen(found.turn, found.turn.id, self.fetch, self.zone))
                return
            if explicit:  # unknown, or kept beside the current branch: the kernel says which
                self.results.clear(f"{found.error[:1].upper()}{found.error[1:]}.")
                return
        self.results.clear("Searching…")
        try:
            results = await self.search(query, self.include_failed)
        except KernelError as exc:
            self.results.clear(f"⚠ {exc}")
            return
        self.results.show(
            list(results), describe_results(results), nearest=nearest_below(results), query=results.keywords
        )

    async def fetch(self, turn_id: str) -> Turn | None:
        """A turn by id, or None (the turn view walks prev / next with it)."""
        return (await self.recall(turn_id)).turn

    async def on_memory_panel_turn_chosen(self, event: MemoryPanel.TurnChosen) -> None:
        turn = await self.fetch(event.turn_id)
        if turn is not None:
            await self.app.push_screen(TurnDetailScreen(turn, event.hit_id, self.fetch, self.zone))

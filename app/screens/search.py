"""Search memory directly: the same hits and neighbours the LLM sees, walkable the same way."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from datetime import tzinfo
from typing import TYPE_CHECKING

from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import Screen
from textual.widgets import Footer, Header, Input

from app.screens.turn_detail import Fetch, TurnDetailScreen
from app.widgets.memory_panel import MemoryPanel

if TYPE_CHECKING:
    from memory.results import SearchResults


Search = Callable[[str], Awaitable["SearchResults"]]


def describe_results(results: SearchResults) -> str:
    """The scope line: what was searched, the time understood, scan rounds, counts."""
    parts = [f"“{results.keywords or '(any)'}”"]
    if results.time_range is not None:
        parts.append(f"{results.time_range.phrase} → {results.time_range.describe()}")
    if results.rounds:
        weeks = " · ".join(f"{r.label} ({len(r.found)})" for r in results.rounds)
        parts.append(f"scanned {len(results.rounds)} weeks: {weeks}")
    hits = len(results.hits)
    parts.append(f"{hits} hit{'s' if hits != 1 else ''}, {len(results) - hits} nearby")
    return " · ".join(parts)


class SearchScreen(Screen[None]):
    """Type a query (time words welcome); Enter searches; ↓ and Enter open a turn."""

    BINDINGS = [Binding("escape", "app.pop_screen", "Back to chat")]

    def __init__(
        self, search: Search, fetch: Fetch, zone: tzinfo, snippet_chars: int, cursor_blink: bool = True
    ) -> None:
        super().__init__()
        self.cursor_blink = cursor_blink
        self.search = search
        self.fetch = fetch
        self.zone = zone
        self.snippet_chars = snippet_chars

    def compose(self) -> ComposeResult:
        yield Header()
        with Vertical(id="search"):
            query = Input(placeholder="Search memory — e.g. 上周三下午 部署, VPN last week", id="query")
            query.cursor_blink = self.cursor_blink
            yield query
            yield MemoryPanel(self.zone, self.snippet_chars, id="results")
        yield Footer()

    def on_mount(self) -> None:
        self.query_one("#results", MemoryPanel).clear("Type a query and press Enter.")
        self.query_one("#query", Input).focus()

    @on(Input.Submitted, "#query")
    def _submitted(self, event: Input.Submitted) -> None:
        if event.value.strip():
            self.run_search(event.value)

    @work(exclusive=True, group="search")
    async def run_search(self, query: str) -> None:
        """Search in the background and show the results."""
        panel = self.query_one("#results", MemoryPanel)
        panel.clear("Searching…")
        results = await self.search(query)
        panel.show(list(results), describe_results(results))
        if results.results:
            panel.query_one("OptionList").focus()

    async def on_memory_panel_turn_chosen(self, event: MemoryPanel.TurnChosen) -> None:
        turn = await self.fetch(event.turn_id)
        if turn is not None:
            await self.app.push_screen(TurnDetailScreen(turn, event.hit_id, self.fetch, self.zone))

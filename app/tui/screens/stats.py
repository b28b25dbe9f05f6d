"""The statistics screen: the seed's dashboard in the terminal, with real charts (textual-plotext)."""

from __future__ import annotations

import math
from collections.abc import Awaitable, Callable
from datetime import tzinfo
from typing import TYPE_CHECKING, Any

from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Grid, Vertical
from textual.content import Content
from textual.screen import Screen
from textual.widgets import Footer, Header, Label, OptionList, Static
from textual.widgets.option_list import Option
from textual_plotext import PlotextPlot

from huichat.app.tui.screens.turn_detail import TIER_NAMES, Fetch, TurnDetailScreen
from huichat.app.wording import plural
from huichat.memory.errors import KernelError

if TYPE_CHECKING:
    from huichat.memory.stats import MemoryItem, MemoryStats

Load = Callable[[], Awaitable["MemoryStats"]]
_WEEKS_SHOWN = 26


def summary(stats: MemoryStats) -> str:
    """The headline figures, one line each."""
    tiers = " · ".join(f"{TIER_NAMES.get(t, t)} {n}" for t, n in stats.tiers.items())
    languages = " · ".join(f"{k} {v}" for k, v in sorted(stats.languages.items(), key=lambda kv: -kv[1])) or "—"
    return (
        f"{plural(stats.total_turns, 'turn')} in {plural(stats.total_sessions, 'session')} · {tiers}\n"
        f"average importance {stats.avg_importance:.2f} · {plural(stats.total_accesses, 'access')} · "
        f"{plural(stats.clusters, 'cluster')} ({plural(stats.clustered_turns, 'turn')} behind a representative) · "
        f"languages {languages} · {stats.disk_size} on disk"
    )


class StatsScreen(Screen[None]):
    """Tiers, importance, turns per week and what was retrieved lately; Enter opens a turn."""

    BINDINGS = [
        Binding("escape,q,f3", "dismiss", "Close"),
        Binding("r", "reload", "Refresh"),
    ]

    def __init__(self, load: Load, fetch: Fetch, zone: tzinfo) -> None:
        super().__init__()
        self.load = load
        self.fetch = fetch
        self.zone = zone
        self._items: list[MemoryItem] = []

    def compose(self) -> ComposeResult:
        yield Header()
        yield Static("Collecting statistics…", id="stats-summary", markup=False)
        with Grid(id="stats-grid"):
            yield PlotextPlot(id="tier-chart")
            yield PlotextPlot(id="importance-chart")
            yield PlotextPlot(id="weeks-chart")
            with Vertical(id="recent"):
                yield Label("Recently retrieved · Enter opens", classes="title")
                yield OptionList(id="recent-list")
        yield Footer()

    def on_mount(self) -> None:
        self.action_reload()

    @work(group="stats", exclusive=True, exit_on_error=False)
    async def action_reload(self) -> None:
        """Collect the statistics off the UI thread and draw them."""
        try:
            stats = await self.load()
        except KernelError as exc:
            self.query_one("#stats-summary", Static).update(f"Statistics unavailable: {exc}")
            return
        self.show(stats)

    def show(self, stats: MemoryStats) -> None:
        """Draw every chart and list from ``stats``."""
        self.query_one("#stats-summary", Static).update(summary(stats))
        names = [TIER_NAMES.get(t, t) for t in stats.tiers]
        self._bars("#tier-chart", "Turns per tier", names, list(stats.tiers.values()))
        deciles = [f"{i / 10:.1f}" for i in range(len(stats.importance_histogram))]
        self._bars("#importance-chart", "Importance (turns per decile)", deciles, list(stats.importance_histogram))
        weeks = stats.turns_per_week[-_WEEKS_SHOWN:]
        self._timeline([w[5:] for w, _ in weeks], [n for _, n in weeks])
        self._items = list(stats.recent_accesses)
        listed = self.query_one("#recent-list", OptionList)
        listed.clear_options()
        listed.add_options(
            [
                Option(
                    # plain text: "[w0gwxj]" as markup was a style tag and vanished, "[/INST]" in a snippet raised
                    Content(
                        (f"{i.last_accessed_at.astimezone(self.zone):%m-%d %H:%M} " if i.last_accessed_at else "")
                        + f"[{i.id}] {TIER_NAMES.get(i.tier, i.tier)} · {i.access_count}× · {i.snippet}"
                    ),
                    id=str(n),
                )
                for n, i in enumerate(self._items)
            ]
            or [Option("Nothing retrieved yet.", disabled=True)]
        )

    def _bars(self, selector: str, title: str, labels: list[str], values: list[int]) -> None:
        chart = self.query_one(selector, PlotextPlot)
        plt = chart.plt
        plt.clear_data()
        plt.clear_figure()
        plt.title(title)
        plt.bar(labels, values)
        _whole_ticks(plt, max(values, default=0))
        chart.refresh()

    def _timeline(self, labels: list[str], values: list[int]) -> None:
        chart = self.query_one("#weeks-chart", PlotextPlot)
        plt = chart.plt
        plt.clear_data()
        plt.clear_figure()
        plt.title(f"Turns per week (last {len(labels)})")
        if labels:
            positions = [float(i) for i in range(len(labels))]
            # filled down to a y axis from zero: a first week alone is one point, drawn as a line it was one dot
            plt.plot(positions, values, marker="braille", fillx=True)
            plt.ylim(0, max(max(values), 1))
            _whole_ticks(plt, max(values))
            step = max(1, len(labels) // 6)
            plt.xticks(positions[::step], labels[::step])
        chart.refresh()

    @on(OptionList.OptionSelected, "#recent-list")
    async def _open(self, event: OptionList.OptionSelected) -> None:
        item = self._items[int(event.option.id or 0)]
        turn = await self.fetch(item.id)
        if turn is None:
            self.notify(f"Turn {item.id} is not in memory.", severity="error")
            return
        await self.app.push_screen(TurnDetailScreen(turn, turn.id, self.fetch, self.zone))


def _whole_ticks(plt: Any, top: int) -> None:
    """Whole numbers on a count's axis, at most six of them (plotext's own ticks read 5.8, 4.7, …)."""
    step = max(1, math.ceil(max(top, 1) / 5))
    plt.yticks(list(range(0, max(top, 1) + step, step)))

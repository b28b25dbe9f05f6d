"""The nearest turn of a search that found nothing: named on the scope line, and opened like a hit."""

from __future__ import annotations

from pathlib import Path

from huichat.app.tui.screens.search import SearchScreen
from huichat.app.tui.screens.turn_detail import TurnDetailScreen
from tests.app.tui_helpers import build_app, deterministic_kernel, loaded_config, ready, seed_memory, wait_until


async def test_the_nearest_turn_below_the_threshold_opens_from_the_search_results(tmp_path: Path) -> None:
    kernel = deterministic_kernel(tmp_path, min_similarity=0.999)  # nothing the hash embedder finds passes
    seed_memory(kernel)
    app = build_app(tmp_path, loaded_config(), kernel=kernel)
    async with app.run_test(size=(140, 40)) as pilot:
        await ready(pilot)
        await pilot.press("ctrl+f")
        await wait_until(pilot, lambda: isinstance(app.screen, SearchScreen))
        search = app.screen
        await pilot.press(*"推理 快不快", "enter")
        await wait_until(pilot, lambda: "below the threshold" in str(search.results.query_one(".scope").render()))
        scope = str(search.results.query_one(".scope").render())
        nearest = scope.split("nearest [")[1][:6]
        assert [hit.turn.id for hit in search.results.hits] == [nearest]  # listed, marked, not as a hit
        assert "nearest, below the threshold" in str(search.results.options.get_option_at_index(0).prompt)
        await pilot.press("down")
        assert search.results.options.has_focus
        await pilot.press("enter")
        await wait_until(pilot, lambda: isinstance(app.screen, TurnDetailScreen))
        assert app.screen.turn is not None and app.screen.turn.id == nearest

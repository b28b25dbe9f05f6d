"""Forgetting and correcting from the chat (Pilot): the panel's, search's and the turn view's keys, the palette."""

from __future__ import annotations

from pathlib import Path

from benchmarks.fakellm import FakeLLM
from huichat.app.tui.screens.ask_path import AskPathScreen
from huichat.app.tui.screens.search import SearchScreen
from huichat.app.tui.screens.turn_detail import TurnDetailScreen
from huichat.app.tui.widgets.memory_panel import MemoryPanel
from huichat.memory.results import SearchRequest
from tests.app.tui_helpers import (
    build_app,
    deterministic_kernel,
    fake_providers,
    loaded_config,
    memory_model,
    ready,
    said,
    seed_memory,
    wait_until,
)
from tests.conftest import NOW


async def test_x_in_the_memory_panel_forgets_the_turn_and_the_model_no_longer_sees_it(
    tmp_path: Path, fake_llm: FakeLLM
) -> None:
    kernel = deterministic_kernel(tmp_path)
    ids = seed_memory(kernel)
    fake_llm.responder = memory_model
    app = build_app(tmp_path, loaded_config(fake_providers(fake_llm)), kernel=kernel)
    async with app.run_test(size=(140, 40)) as pilot:
        await ready(pilot)
        await pilot.press(*"上周三我们用什么部署的？", "enter")
        await wait_until(pilot, lambda: not app.chat_screen.replying and len(said(app)) == 2)
        [asked] = kernel.session_turns(app.chat_screen.session_id or "")
        panel = app.chat_screen.query_one(MemoryPanel)
        assert panel.hits[0].turn.id == ids[1] and ids[1] in asked.recalled_ids
        await pilot.press("f2")
        assert panel.options.has_focus and "x" in app.screen.active_bindings
        await pilot.press("x")
        await wait_until(pilot, lambda: ids[1] not in panel.shown_ids)
        assert app.chat_screen.prompt.text == ""  # the key forgot the turn; it was not typed into the prompt
        # the reply that recalled it may quote it: it is named, and how to forget it too (it is said, not done)
        warning = f"1 later turn recalled it and may quote it: {asked.id}. To forget it too: palette “Forget a turn…”"
        await wait_until(pilot, lambda: any(n.message == warning for n in app._notifications))
        assert [n.message for n in app._notifications][-2].startswith(f"Forgot turn {ids[1]}: ")
        assert kernel.recall_by_id(asked.id).turn is not None
        assert app.last_forgotten == ids[1]
        assert kernel.recall_by_id(ids[1]).turn is None
        # the model's tool results no longer hold it: the next search finds its neighbours, not it
        await pilot.press("escape", *"上周三我们用什么部署的？", "enter")
        await wait_until(pilot, lambda: not app.chat_screen.replying and len(said(app)) == 4)
        assert all(f"[id:{ids[1]}" not in m.get("content", "") for m in fake_llm.requests[-1]["messages"])
        # the palette brings it back
        await pilot.press("ctrl+p")
        await pilot.pause(0.3)
        await pilot.press(*"undo forget")
        await pilot.pause(0.5)
        await pilot.press("enter")
        await wait_until(pilot, lambda: app.last_forgotten is None)
        assert kernel.recall_by_id(ids[1]).turn is not None


async def test_del_in_search_results_and_x_in_the_turn_view_forget_and_e_corrects(tmp_path: Path) -> None:
    kernel = deterministic_kernel(tmp_path)
    ids = seed_memory(kernel)
    app = build_app(tmp_path, loaded_config(), kernel=kernel)
    async with app.run_test(size=(140, 40)) as pilot:
        await ready(pilot)
        await pilot.press("ctrl+f")
        await wait_until(pilot, lambda: isinstance(app.screen, SearchScreen))
        search = app.screen
        await pilot.press(*"显存 8G", "enter")
        panel = search.query_one(MemoryPanel)
        await wait_until(pilot, lambda: bool(panel.hits))
        first = panel.hits[0].turn.id
        await pilot.press("down", "x")  # a letter typed in the results goes on in the query
        assert search.query_box.value == "显存 8Gx" and first in panel.shown_ids
        await pilot.press("backspace", "down", "delete")  # Del is the results' forget key
        await wait_until(pilot, lambda: first not in panel.shown_ids)
        assert search.query_box.value == "显存 8G"
        assert first not in {h.turn.id for h in kernel.search(SearchRequest("显存 8G", NOW, top_k=10)).results}

        # e on a turn: a correction, shown in the turn view, recalled with the turn
        other = next(i for i in ids if i != first)
        await pilot.press("escape", "escape")  # back to the chat
        await wait_until(pilot, lambda: not isinstance(app.screen, SearchScreen))
        await pilot.press("ctrl+f", *other, "enter")
        await wait_until(pilot, lambda: isinstance(app.screen, TurnDetailScreen))
        detail = app.screen
        await pilot.press("e")
        await wait_until(pilot, lambda: isinstance(app.screen, AskPathScreen))
        await pilot.press(*"其实是 12G 显存", "enter")
        await wait_until(pilot, lambda: detail.turn is not None and "其实是 12G 显存" in detail.turn.text)
        assert "✎ later correction" in kernel.format_turn(kernel.recall_by_id(other).turn)  # type: ignore[arg-type]
        # x in the turn view forgets it and closes the view
        await pilot.press("x")
        await wait_until(pilot, lambda: app.screen is not detail)
        assert kernel.recall_by_id(other).turn is None

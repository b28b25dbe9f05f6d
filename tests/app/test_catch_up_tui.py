"""While turns wait for their vectors: the status line shows the catch-up's pace, and the app answers at once."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import pytest

from benchmarks.fakellm import FakeLLM
from huichat.app.tui.screens.stats import StatsScreen
from huichat.app.tui.widgets.status_line import StatusLine
from huichat.memory.config import RetrieverConfig
from huichat.memory.kernel import MemoryKernel
from huichat.memory.location import MemoryLocation
from huichat.memory.opening import open_kernel
from huichat.memory.results import SearchRequest
from tests.app.tui_helpers import build_app, counter_ids, fake_providers, loaded_config, ready, said, wait_until
from tests.conftest import NOW, ZONE
from tests.memory.test_catch_up import GatedEmbedder, waiting_turns


async def test_the_status_shows_the_catch_ups_pace_and_the_app_answers_while_it_runs(
    tmp_path: Path, fake_llm: FakeLLM
) -> None:
    embedder = GatedEmbedder(gate_at=2)  # the second part of the catch-up waits until the test is done
    config = RetrieverConfig(timezone="Asia/Shanghai", min_similarity=0.0)
    kernel = open_kernel(MemoryLocation.under(tmp_path), embedder, config, ZONE, now=NOW, id_source=counter_ids())
    waiting_turns(kernel, 40, 1_500)  # parts of 8 turns
    app = build_app(tmp_path, loaded_config(fake_providers(fake_llm)), kernel=kernel)
    try:
        async with app.run_test(size=(120, 36)) as pilot:
            await ready(pilot)
            await wait_until(pilot, embedder.waiting.is_set)
            status = app.chat_screen
            await wait_until(pilot, lambda: "embedding 8 of 40 turns · " in status.catch_up_status)
            assert status.busy and status.query_one(StatusLine).has_class("-busy")  # this app computes them
            assert "turns/s · about" in status.catch_up_status and "left" in status.catch_up_status
            # on a line of 120 columns the provider, the turn count and the progress all show
            line = str(status.query_one(StatusLine).render())
            assert line.lstrip().startswith("local") and "memory: 40 turns" in line and "embedding 8 of 40" in line
            # the catch-up is mid-way: searches, the chat and the screens do not wait for it
            later = NOW + timedelta(hours=1)
            found = await app.gateway.search(SearchRequest("keepalive", later, 5, mode="text"))
            assert len(found.hits) == 5
            await pilot.press(*"hello", "enter")
            await wait_until(pilot, lambda: len(said(app)) == 2)
            await pilot.press("f3")
            await wait_until(pilot, lambda: isinstance(app.screen, StatsScreen))
            await pilot.press("escape")
            await wait_until(pilot, lambda: not isinstance(app.screen, StatsScreen))
            await pilot.press("ctrl+q")
            await wait_until(pilot, lambda: not app.is_running)
    finally:
        embedder.gate.set()  # the catch-up's thread ends with the test


def _chat_and_command(root: Path) -> tuple[GatedEmbedder, MemoryKernel, MemoryKernel]:
    """The chat's memory (its counting embedder) and a second kernel on the same folder: `huichat import`
    in another terminal."""
    config = RetrieverConfig(timezone="Asia/Shanghai", min_similarity=0.0)
    embedder = GatedEmbedder(gate_at=10**6)
    kernel = open_kernel(MemoryLocation.under(root), embedder, config, ZONE, now=NOW, id_source=counter_ids())
    command = open_kernel(MemoryLocation.under(root), GatedEmbedder(gate_at=10**6), config, ZONE, now=NOW)
    return embedder, kernel, command


async def test_while_an_import_computes_the_vectors_the_chat_says_so_and_computes_none_of_them(
    tmp_path: Path, fake_llm: FakeLLM
) -> None:
    # a trial: the chat opened during `huichat import` embedded the importer's batches again, at a
    # third of the import's pace, and its count of turns left kept growing
    embedder, kernel, command = _chat_and_command(tmp_path)
    waiting_turns(kernel, 12, 10)
    app = build_app(tmp_path, loaded_config(fake_providers(fake_llm)), kernel=kernel)
    try:
        with command.embedding_in_foreground():  # `huichat import` computing the vectors
            async with app.run_test(size=(120, 36)) as pilot:
                await ready(pilot)
                status = app.chat_screen
                await wait_until(
                    pilot, lambda: "another huichat process is at work · 12 turns wait" in status.catch_up_status
                )
                assert embedder.embedded == 0
                # it waits on the other process: this app is not shown busy (a second reader saw the
                # busy look stay on for as long as the import ran, though the chat computed nothing)
                line = status.query_one(StatusLine)
                assert not status.busy and not line.has_class("-busy")
                assert command.embed_pending() == 12  # the import's batch
                await wait_until(pilot, lambda: status.catch_up_status == "")  # it looked again: none wait
                assert embedder.embedded == 0
                assert not status.busy and not line.has_class("-busy")
                await pilot.press("ctrl+q")
    finally:
        command.close()


@pytest.mark.parametrize("with_vectors", [False, True], ids=["import --no-embed", "import"])
async def test_turns_another_process_imports_are_counted_and_embedded_by_the_open_chat(
    tmp_path: Path, fake_llm: FakeLLM, with_vectors: bool
) -> None:
    # a trial: after `huichat import --no-embed` the open chat kept its turn count and computed no vector
    # until it was started again (the import's files are indexed already: no change to reconcile); after
    # `huichat import` (the import computes the vectors) it kept "memory: 21 turns" until the next message
    embedder, kernel, command = _chat_and_command(tmp_path)
    app = build_app(tmp_path, loaded_config(fake_providers(fake_llm)), kernel=kernel)
    try:
        async with app.run_test(size=(120, 36)) as pilot:
            await ready(pilot)
            status = app.chat_screen
            await wait_until(pilot, lambda: "memory: 0 turns" in status.memory_status)
            waiting_turns(command, 6, 10)  # `huichat import --no-embed` in another terminal
            if with_vectors:
                assert command.embed_pending() == 6  # or `huichat import`: it computes them itself
            app.sync_memory()  # what the transcripts' watcher does a moment after the files change
            computed = 0 if with_vectors else 6
            await wait_until(pilot, lambda: "memory: 6 turns" in status.memory_status and embedder.embedded == computed)
            await wait_until(pilot, lambda: status.catch_up_status == "")
            assert command.recount_pending() == 0
            await pilot.press("ctrl+q")
    finally:
        command.close()

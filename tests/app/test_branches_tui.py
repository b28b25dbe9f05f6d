"""Branches in the real app, driven by Pilot: regenerate a good answer, edit a message and send
it again, switch between the branches, and what the model, search and a reopened session see."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

from textual.widgets import Label

from benchmarks.fakellm import FakeLLM, Reply
from huichat.app.tui.app import HuichatApp
from huichat.app.tui.widgets.chat_message import ChatMessage
from huichat.memory.kernel import MemoryKernel
from huichat.memory.results import SearchRequest
from tests.app.tui_helpers import (
    build_app,
    deterministic_kernel,
    fake_providers,
    loaded_config,
    ready,
    said,
    wait_until,
)
from tests.conftest import NOW


def _label(message: ChatMessage) -> str:
    return str(message.query_one(".label", Label).render())


def _context(request: dict[str, Any]) -> str:
    """Everything the model was given before the new message."""
    return "\n".join(str(m["content"]) for m in request["messages"][:-1])


@contextlib.asynccontextmanager
async def _chat(
    tmp_path: Path, fake_llm: FakeLLM, *replies: Reply
) -> AsyncIterator[tuple[Any, HuichatApp, MemoryKernel]]:
    """The app on a deterministic memory, ready, with the model's ``replies`` queued."""
    fake_llm.push(*replies)
    kernel = deterministic_kernel(tmp_path)
    app = build_app(tmp_path, loaded_config(fake_providers(fake_llm)), kernel=kernel)
    async with app.run_test(size=(120, 36)) as pilot:
        await ready(pilot)
        yield pilot, app, kernel


async def _ask(pilot: Any, app: HuichatApp, text: str, answer: str) -> None:
    await pilot.press(*text)
    await pilot.press("enter")
    await wait_until(pilot, lambda: not app.chat_screen.replying and said(app)[-1].text == answer)


def _found(kernel: MemoryKernel, query: str) -> list[str]:
    return [hit.turn.text for hit in kernel.search(SearchRequest(query, NOW.replace(year=2027)))]


async def test_regenerate_keeps_the_good_answer_beside_the_new_one_and_switching_changes_the_context(
    tmp_path: Path, fake_llm: FakeLLM
) -> None:
    async with _chat(
        tmp_path,
        fake_llm,
        Reply(text="部署在 alpha 机器"),
        Reply(text="部署在 beta 机器"),
        Reply(text="好的"),
        Reply(text="明白"),
    ) as (pilot, app, kernel):
        screen = app.chat_screen
        await _ask(pilot, app, "部署在哪", "部署在 alpha 机器")
        await pilot.press("f4")  # a good answer, asked again
        await wait_until(pilot, lambda: not screen.replying and said(app)[-1].text == "部署在 beta 机器")
        await wait_until(pilot, lambda: "‹ 2/2 ›" in _label(said(app)[-1]))
        assert [m.text for m in said(app)] == ["部署在哪", "部署在 beta 机器"]  # the new branch replaced it on screen
        assert "alpha" not in _context(fake_llm.requests[1])  # the answer asked again is not its own context
        session_id = screen.session_id
        assert session_id is not None
        # one fact, one turn: the branch left is not searched
        assert [t.messages[-1].text for t in kernel.session_turns(session_id)] == ["部署在 beta 机器"]
        assert not any("alpha" in text for text in _found(kernel, "部署"))
        # back to the first answer: ← on the message
        await pilot.press("ctrl+up")
        await pilot.press("left")
        await wait_until(pilot, lambda: said(app) and said(app)[-1].text == "部署在 alpha 机器")
        await wait_until(pilot, lambda: "‹ 1/2 ›" in _label(said(app)[-1]))
        assert [t.messages[-1].text for t in kernel.session_turns(session_id)] == ["部署在 alpha 机器"]
        assert any("alpha" in text for text in _found(kernel, "部署"))
        assert not any("beta" in text for text in _found(kernel, "部署"))
        # the model's context is the branch shown
        screen.prompt.focus()
        await _ask(pilot, app, "那就这样", "好的")
        assert "alpha" in _context(fake_llm.requests[-1]) and "beta" not in _context(fake_llm.requests[-1])
        # reopened, the session shows its current branch and where it branched
        await pilot.press("ctrl+n")
        await screen.open_session(session_id)
        await pilot.pause()
        assert [m.text for m in said(app)] == ["部署在哪", "部署在 alpha 机器", "那就这样", "好的"]
        assert "‹ 1/2 ›" in _label(said(app)[1]) and "‹" not in _label(said(app)[3])


async def test_an_edited_message_is_sent_as_a_new_branch_and_the_earlier_turns_are_kept(
    tmp_path: Path, fake_llm: FakeLLM
) -> None:
    async with _chat(tmp_path, fake_llm, Reply(text="一号回答"), Reply(text="二号回答"), Reply(text="改后的回答")) as (
        pilot,
        app,
        kernel,
    ):
        screen = app.chat_screen
        await _ask(pilot, app, "第一句", "一号回答")
        await _ask(pilot, app, "第二句", "二号回答")
        first_turns = kernel.session_turns(screen.session_id or "")
        await pilot.press("ctrl+up", "up")  # onto "第二句"
        assert app.focused is said(app)[2]
        await pilot.press("e")
        assert screen.prompt.text == "第二句" and app.focused is screen.prompt
        await pilot.press(*"改")
        await pilot.press("enter")
        await wait_until(pilot, lambda: not screen.replying and said(app)[-1].text == "改后的回答")
        assert [m.text for m in said(app)] == ["第一句", "一号回答", "第二句改", "改后的回答"]
        await wait_until(pilot, lambda: "‹ 2/2 ›" in _label(said(app)[-1]))
        request = fake_llm.requests[-1]
        assert request["messages"][-1]["content"].endswith("第二句改")
        assert "一号回答" in _context(request) and "二号回答" not in _context(request)
        session_id = screen.session_id or ""
        turns = kernel.session_turns(session_id)
        assert [t.id for t in turns[:1]] == [first_turns[0].id]  # the kept turn keeps its id
        assert [t.messages[0].text for t in turns] == ["第一句", "第二句改"]
        parsed = kernel.read_session(turns[0].session_file)
        assert [t.id for t in parsed.beside] == [first_turns[1].id]  # the earlier branch, kept under its id


async def test_esc_cancels_an_edit_and_the_text_is_sent_as_a_new_message(tmp_path: Path, fake_llm: FakeLLM) -> None:
    async with _chat(tmp_path, fake_llm, Reply(text="一号回答"), Reply(text="又一句的回答")) as (pilot, app, kernel):
        await _ask(pilot, app, "第一句", "一号回答")
        await pilot.press("ctrl+up", "e")
        assert app.chat_screen.prompt.text == "第一句"
        await pilot.press("escape")
        assert app.chat_screen.editing is None
        await pilot.press(*"又")
        await pilot.press("enter")
        await wait_until(pilot, lambda: not app.chat_screen.replying and said(app)[-1].text == "又一句的回答")
        assert len(kernel.session_turns(app.chat_screen.session_id or "")) == 2


async def test_what_was_being_typed_comes_back_after_an_edit_is_cancelled_or_sent(
    tmp_path: Path, fake_llm: FakeLLM
) -> None:
    async with _chat(tmp_path, fake_llm, Reply(text="一号回答"), Reply(text="改后的回答")) as (pilot, app, _kernel):
        screen = app.chat_screen
        await _ask(pilot, app, "第一句", "一号回答")
        await pilot.press(*"my unsent draft")
        await pilot.press("ctrl+up", "up", "e")  # the first message, into the prompt
        assert screen.prompt.text == "第一句" and screen.editing is not None
        await pilot.press("escape")
        assert screen.prompt.text == "my unsent draft" and screen.editing is None
        await pilot.press("ctrl+up", "up", "e")
        await pilot.press(*"改")
        await pilot.press("enter")
        await wait_until(pilot, lambda: not screen.replying and said(app)[-1].text == "改后的回答")
        assert [m.text for m in said(app)] == ["第一句改", "改后的回答"]
        assert screen.prompt.text == "my unsent draft"  # the edit went; the draft waits to be sent


async def test_regenerate_with_nothing_to_regenerate_says_so(tmp_path: Path, fake_llm: FakeLLM) -> None:
    app = build_app(tmp_path, loaded_config(fake_providers(fake_llm)))
    async with app.run_test(size=(120, 36)) as pilot:
        await ready(pilot)
        await pilot.press("f4")
        await pilot.pause()
        assert any("Nothing to regenerate" in str(n.message) for n in app._notifications)
        assert fake_llm.requests == []


async def test_switching_to_a_longer_branch_updates_the_turn_count_in_the_status_line(
    tmp_path: Path, fake_llm: FakeLLM
) -> None:
    async with _chat(
        tmp_path,
        fake_llm,
        Reply(text="一号回答"),
        Reply(text="二号回答"),
        Reply(text="三号回答"),
        Reply(text="改后的回答"),
    ) as (pilot, app, _kernel):
        screen = app.chat_screen
        for text, answer in (("第一句", "一号回答"), ("第二句", "二号回答"), ("第三句", "三号回答")):
            await _ask(pilot, app, text, answer)
        await pilot.press("ctrl+up", "up", "up", "up", "e")  # "第二句", edited: the branch is two turns long
        await pilot.press(*"改")
        await pilot.press("enter")
        await wait_until(pilot, lambda: not screen.replying and "memory: 2 turns" in screen.memory_status)
        await pilot.press("ctrl+up", "left")  # back to the three turns
        await wait_until(pilot, lambda: said(app)[-1].text == "三号回答")
        await wait_until(pilot, lambda: "memory: 3 turns" in screen.memory_status)


async def test_a_reply_asked_again_and_stopped_is_marked_as_a_branch_at_once(tmp_path: Path, fake_llm: FakeLLM) -> None:
    long = "这是一个很长的回答，" * 40
    async with _chat(
        tmp_path, fake_llm, Reply(text="部署在 alpha 机器"), Reply(text=long, chunk_chars=2, chunk_delay=0.05)
    ) as (pilot, app, _kernel):
        screen = app.chat_screen
        await _ask(pilot, app, "部署在哪", "部署在 alpha 机器")
        await pilot.press("f4")  # asked again, and stopped while it streams
        await wait_until(pilot, lambda: said(app)[-1].text.startswith("这是"))
        await pilot.press("escape")
        await wait_until(pilot, lambda: not screen.replying)
        assert said(app)[-1].state == "stopped"
        # the stopped reply is a branch beside the good one: ← can reach it, so the label says so
        await wait_until(pilot, lambda: "‹ 2/2 ›" in _label(said(app)[-1]))


async def test_the_id_of_a_reply_asked_again_in_search_says_where_that_turn_is(
    tmp_path: Path, fake_llm: FakeLLM
) -> None:
    from huichat.app.tui.screens.search import SearchScreen

    async with _chat(tmp_path, fake_llm, Reply(text="部署在 alpha 机器"), Reply(text="部署在 beta 机器")) as (
        pilot,
        app,
        _kernel,
    ):
        screen = app.chat_screen
        await _ask(pilot, app, "部署在哪", "部署在 alpha 机器")
        earlier = said(app)[-1].turn_id
        await pilot.press("f4")
        await wait_until(pilot, lambda: not screen.replying and said(app)[-1].text == "部署在 beta 机器")
        await pilot.press("ctrl+f")
        await wait_until(pilot, lambda: isinstance(app.screen, SearchScreen))
        await pilot.press(*f"id:{earlier}", "enter")
        search = app.screen
        assert isinstance(search, SearchScreen)
        # the turn exists beside the current branch: "No turn with id" told the user it was lost
        scope = search.results.query_one(".scope")
        await wait_until(pilot, lambda: "branch kept beside" in str(scope.render()))

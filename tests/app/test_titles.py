"""Session titles through app/session.py: the model writes them over real HTTP, beside the conversation."""

from __future__ import annotations

import asyncio
import logging
import threading
from datetime import datetime, timedelta
from typing import Any

import pytest

from benchmarks.fakellm import FakeLLM, Reply
from huichat.app.config import ChatConfig
from huichat.app.prompts import uses_chinese
from huichat.app.runtime import Zone
from huichat.app.session import ChatSession, ReplyCompleted, SessionEvent
from huichat.app.titles import clean_title, title_due
from huichat.memory.kernel import MemoryKernel
from huichat.memory.turns import SessionTitle, derive_topic
from huichat.providers.config import ProviderConfig, ProvidersConfig
from huichat.providers.llm import LLMClient
from tests.conftest import NOW, ZONE


def is_title_request(body: dict[str, Any]) -> bool:
    """The fake model's way to tell a title request from a chat one (its system prompt)."""
    first = str(body["messages"][0]["content"])
    return "起标题" in first or "You name conversations" in first


def _session(kernel: MemoryKernel, server: FakeLLM, **chat: Any) -> ChatSession:
    config = ProviderConfig(model="openai/fake", api_base=server.base_url)
    providers = ProvidersConfig(named={"fake": config}, max_retries=0)
    clock_state = {"now": NOW}

    def clock() -> datetime:
        clock_state["now"] += timedelta(minutes=1)
        return clock_state["now"]

    llm = LLMClient(providers, env={})
    return ChatSession(kernel=kernel, llm=llm, config=ChatConfig(**chat), clock=clock, zone=Zone(ZONE, "Asia/Shanghai"))


async def _reply(session: ChatSession, text: str) -> list[SessionEvent]:
    return [event async for event in session.reply(text)]


@pytest.mark.parametrize(
    ("text", "title"),
    [
        ("本地模型部署用什么？我有 8G 显存", "本地模型部署用什么"),
        ("你好！我上周三下午在杭州部署了 Qwen，顺便问下 VPN", "我上周三下午在杭州部署了 Qwen"),
        ("Hi, my VPN keeps dropping at night", "my VPN keeps dropping…"),
        ("x" * 100, "x" * 23 + "…"),
        ("hello", "hello"),
    ],
)
def test_the_local_title_is_the_first_clause_that_says_something(text: str, title: str) -> None:
    assert derive_topic(text) == title


@pytest.mark.parametrize(
    ("answer", "title"),
    [
        ("标题：「VPN 夜间断线排查」。", "VPN 夜间断线排查"),
        ('"Fixing a VPN that drops at night"\n\nThis title…', "Fixing a VPN that drops at night"),
        ("<think>the user asks about a VPN</think>\n**VPN drops**", "VPN drops"),
        ("Title: " + "word " * 20, "word " * 7 + "word…"),
        ("   \n", ""),
    ],
)
def test_only_the_title_is_kept_of_the_models_answer(answer: str, title: str) -> None:
    assert clean_title(answer) == title


def test_a_session_is_titled_after_its_first_exchange_then_every_n_turns() -> None:
    assert not title_due(0, None, 8)
    assert title_due(1, None, 8)
    assert not title_due(8, 1, 8) and title_due(9, 1, 8)
    assert not title_due(100, 1, 0)


async def test_the_model_titles_the_session_in_the_users_language_and_nothing_of_it_is_stored_as_a_turn(
    kernel: MemoryKernel, fake_llm: FakeLLM
) -> None:
    fake_llm.responder = lambda body: Reply(
        text="标题：「VPN 夜间断线排查」" if is_title_request(body) else "把 keepalive 设成 25 秒。"
    )
    session = _session(kernel, fake_llm)
    events = await _reply(session, "你好！我上周三下午在杭州部署了 Qwen，顺便问下 VPN 晚上总断怎么办")
    done = events[-1]
    assert isinstance(done, ReplyCompleted) and done.turn.topic == "我上周三下午在杭州部署了 Qwen"
    assert len(fake_llm.requests) == 1  # the reply never waits for a title

    title = await session.refresh_title()

    assert title == SessionTitle("VPN 夜间断线排查", "model", 1)
    asked = fake_llm.requests[-1]
    assert "tools" not in asked and "起标题" in asked["messages"][0]["content"]
    assert "VPN 晚上总断怎么办" in asked["messages"][1]["content"]
    assert [t.topic for t in kernel.session_turns(done.turn.session_id)] == ["VPN 夜间断线排查"]
    assert [(s.title, s.title_source) for s in kernel.sessions()] == [("VPN 夜间断线排查", "model")]
    # the request and its answer are not memory: one turn, and nothing of the request is found
    assert kernel.count() == 1
    stored = [kernel.sessions_dir / s.session_file for s in kernel.sessions()]
    assert all("起标题" not in path.read_text(encoding="utf-8") for path in stored)
    assert all("起标题" not in str(t.to_record()) for t in kernel.store.where(None))
    assert await session.refresh_title() is None  # not due again
    later = await _reply(session, "设置完还是断")
    assert isinstance(later[-1], ReplyCompleted) and later[-1].turn.topic == "VPN 夜间断线排查"


async def test_an_english_session_is_titled_in_english(kernel: MemoryKernel, fake_llm: FakeLLM) -> None:
    fake_llm.responder = lambda body: Reply(text="VPN drops at night" if is_title_request(body) else "Try keepalive.")
    session = _session(kernel, fake_llm)
    await _reply(session, "My VPN keeps dropping every evening")
    assert await session.refresh_title() == SessionTitle("VPN drops at night", "model", 1)
    assert "You name conversations" in fake_llm.requests[-1]["messages"][0]["content"]


async def test_a_session_begun_in_english_about_a_chinese_name_is_titled_in_english(
    kernel: MemoryKernel, fake_llm: FakeLLM
) -> None:
    # the session's prompts are English (language_of_message); its title is asked for in the same language
    fake_llm.responder = lambda body: Reply(text="What Li Xue said" if is_title_request(body) else "She said yes.")
    session = _session(kernel, fake_llm)
    await _reply(session, "What did 李雪 say about the trip?")
    assert not uses_chinese(str(fake_llm.requests[0]["messages"][0]["content"]))  # the chat's own prompt
    assert await session.refresh_title() == SessionTitle("What Li Xue said", "model", 1)
    assert "You name conversations" in fake_llm.requests[-1]["messages"][0]["content"]


async def test_a_failed_title_request_leaves_the_local_title_quietly(
    kernel: MemoryKernel, fake_llm: FakeLLM, caplog: pytest.LogCaptureFixture
) -> None:
    fake_llm.push(Reply(text="用 llama.cpp。"), Reply(status=500, error_message="overloaded"))
    session = _session(kernel, fake_llm)
    await _reply(session, "本地模型部署用什么？我有 8G 显存")
    with caplog.at_level(logging.INFO):
        title = await session.refresh_title()
    assert title == SessionTitle("本地模型部署用什么", "local", 1)
    assert [(s.title, s.title_source) for s in kernel.sessions()] == [("本地模型部署用什么", "local")]
    assert not [r for r in caplog.records if r.levelno >= logging.WARNING]
    assert any("no title from the model" in r.getMessage() for r in caplog.records)


async def test_the_model_looks_again_when_the_conversation_moved_on(kernel: MemoryKernel, fake_llm: FakeLLM) -> None:
    titles = iter(["本地模型部署", "本地模型部署", "VPN 断线排查"])
    fake_llm.responder = lambda body: Reply(text=next(titles) if is_title_request(body) else "好的。")
    session = _session(kernel, fake_llm, retitle_every=2)
    await _reply(session, "本地模型部署用什么")
    assert (await session.refresh_title()) == SessionTitle("本地模型部署", "model", 1)
    await _reply(session, "显存够吗")
    assert await session.refresh_title() is None  # one turn later: not due
    await _reply(session, "换个话题：VPN 晚上总断")
    assert await session.refresh_title() is None  # asked, and the model kept its title
    assert "现在的标题是「本地模型部署」" in fake_llm.requests[-1]["messages"][1]["content"]
    await _reply(session, "keepalive 设多少")
    await _reply(session, "还是断")
    assert (await session.refresh_title()) == SessionTitle("VPN 断线排查", "model", 5)
    assert {t.topic for t in kernel.session_turns(session.handle.session_id if session.handle else "")} == {
        "VPN 断线排查"
    }


async def test_a_reply_never_waits_for_a_title(kernel: MemoryKernel, fake_llm: FakeLLM) -> None:
    released = threading.Event()

    def respond(body: dict[str, Any]) -> Reply:
        if is_title_request(body):
            released.wait(30)  # the model is slow to title
            return Reply(text="VPN 断线")
        return Reply(text="好的。")

    fake_llm.responder = respond
    session = _session(kernel, fake_llm)
    await _reply(session, "VPN 晚上总断")
    titling = asyncio.create_task(session.refresh_title())
    events = await _reply(session, "设置完还是断")  # answered while the title request hangs
    assert isinstance(events[-1], ReplyCompleted) and not titling.done()
    released.set()
    assert await titling == SessionTitle("VPN 断线", "model", 1)
    assert {t.topic for t in kernel.session_turns(events[-1].turn.session_id)} == {"VPN 断线"}


async def test_a_continued_session_keeps_its_title(kernel: MemoryKernel, fake_llm: FakeLLM) -> None:
    fake_llm.responder = lambda body: Reply(text="VPN 断线" if is_title_request(body) else "好的。")
    first = _session(kernel, fake_llm)
    await _reply(first, "VPN 晚上总断")
    await first.refresh_title()
    again = _session(kernel, fake_llm)
    await again.resume(first.handle.session_id if first.handle else "")
    assert again.title == SessionTitle("VPN 断线", "model", 1) and again.topic == "VPN 断线"
    asked = len(fake_llm.requests)
    await _reply(again, "还是断")
    assert await again.refresh_title() is None and len(fake_llm.requests) == asked + 1


async def test_a_title_the_user_gave_is_never_replaced_by_the_models(kernel: MemoryKernel, fake_llm: FakeLLM) -> None:
    fake_llm.responder = lambda body: Reply(text="VPN 断线" if is_title_request(body) else "好的。")
    first = _session(kernel, fake_llm, retitle_every=1)
    await _reply(first, "VPN 晚上总断")
    assert await first.refresh_title() == SessionTitle("VPN 断线", "model", 1)

    assert await first.rename("家里的 WireGuard") == SessionTitle("家里的 WireGuard", "user", 1)
    assert first.topic == "家里的 WireGuard"
    await _reply(first, "还是断")
    asked = len(fake_llm.requests)
    assert await first.refresh_title() is None and len(fake_llm.requests) == asked  # not even asked
    # nor in the session continued later
    again = _session(kernel, fake_llm, retitle_every=1)
    await again.resume(first.handle.session_id if first.handle else "")
    await _reply(again, "keepalive 设多少")
    assert await again.refresh_title() is None
    assert [(s.title, s.title_source) for s in kernel.sessions()] == [("家里的 WireGuard", "user")]
    assert {t.topic for t in kernel.session_turns(again.handle.session_id if again.handle else "")} == {
        "家里的 WireGuard"
    }

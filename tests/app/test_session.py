"""A whole conversation through app/session.py — no UI — over real HTTP and a real index."""

from __future__ import annotations

import re
from datetime import datetime, timedelta
from typing import Any

import pytest

from app.config import ChatConfig
from app.session import (
    ChatSession,
    RecallFinished,
    RecallStarted,
    ReplyCompleted,
    ReplyFailed,
    SessionEvent,
    ToolCalled,
    derive_topic,
)
from memory.kernel import MemoryKernel
from memory.transcript import TurnChunker
from memory.turns import Message, TurnDraft
from providers.config import ProviderConfig, ProvidersConfig
from providers.events import TextDelta
from providers.llm import LLMClient
from tests.conftest import NOW, ZONE
from tests.fakellm import FakeLLM, Reply, ToolCall


def _session(kernel: MemoryKernel, server: FakeLLM, **chat: Any) -> ChatSession:
    providers = ProvidersConfig(
        named={"fake": ProviderConfig(model="openai/fake", api_base=server.base_url)}, max_retries=0
    )
    clock_state = {"now": NOW}

    def clock() -> datetime:
        clock_state["now"] += timedelta(minutes=1)
        return clock_state["now"]

    return ChatSession(kernel, LLMClient(providers, env={}), ChatConfig(**chat), clock, ZONE, "Asia/Shanghai")


async def _reply(session: ChatSession, text: str) -> list[SessionEvent]:
    return [event async for event in session.reply(text)]


def _memory_answerer(body: dict[str, Any]) -> Reply:
    """Behaves like a tool-using model: search first, then answer citing what was found."""
    last = body["messages"][-1]
    if last["role"] == "tool":
        ids = re.findall(r"\[id:([a-z0-9]{6})", last["content"])
        return Reply(text=f"根据记忆 {ids[0] if ids else 'none'}，你用的是 llama.cpp。")
    return Reply(tool_calls=[ToolCall("recall_memory", {"query": last["content"], "top_k": 3})])


@pytest.fixture
def remembered(kernel: MemoryKernel) -> str:
    old = kernel.new_session(NOW - timedelta(days=7))
    turn = kernel.append_turn(
        old,
        TurnDraft(
            (Message("user", "本地模型部署用什么"), Message("assistant", "用 llama.cpp")), NOW - timedelta(days=7)
        ),
    )
    kernel.maintain(force=True)
    return turn.id


async def test_a_whole_conversation_is_stored_with_anchors_and_tool_trace(
    kernel: MemoryKernel, fake_llm: FakeLLM, remembered: str
) -> None:
    fake_llm.responder = _memory_answerer
    session = _session(kernel, fake_llm)
    events = await _reply(session, "本地模型部署用什么？")
    kinds = [type(e).__name__ for e in events]
    assert kinds[:3] == ["ToolCalled", "RecallStarted", "RecallFinished"]
    finished = next(e for e in events if isinstance(e, RecallFinished))
    assert finished.results is not None and finished.results.hits[0].turn.id == remembered
    text = "".join(e.text for e in events if isinstance(e, TextDelta))
    assert text == f"根据记忆 {remembered}，你用的是 llama.cpp。"
    done = events[-1]
    assert isinstance(done, ReplyCompleted) and done.turn.recalled_ids == (remembered,)

    later = [await _reply(session, "本地模型部署要多少显存？"), await _reply(session, "速度呢？")]
    turns = kernel.session_turns(session.handle.session_id if session.handle else "")
    assert [t.turn_index for t in turns] == [0, 1, 2]
    assert [t.prev_id for t in turns] == [None, turns[0].id, turns[1].id]
    assert [t.next_id for t in turns] == [turns[1].id, turns[2].id, None]
    assert turns[0].messages == (Message("user", "本地模型部署用什么？"), Message("assistant", text))
    for turn, reply in zip(turns[1:], later, strict=True):
        hits = [h.turn.id for e in reply if isinstance(e, RecallFinished) and e.results for h in e.results.hits]
        assert turn.recalled_ids == tuple(hits)
    assert remembered in turns[1].recalled_ids
    assert turns[0].topic == "本地模型部署用什么"
    parsed = TurnChunker(kernel.sessions_dir).chunk_file(kernel.sessions_dir / turns[0].session_file)
    assert [t.id for t in parsed] == [t.id for t in turns]
    assert parsed[0].recalled_ids == (remembered,)
    # the second request carried the first turn as context, and the system prompt's memory rules
    second_request = next(r for r in fake_llm.requests if r["messages"][-1]["content"] == "本地模型部署要多少显存？")
    assert second_request["messages"][0]["role"] == "system"
    assert "recall_memory" in second_request["messages"][0]["content"]
    assert any(m["content"] == "本地模型部署用什么？" for m in second_request["messages"][1:-1])


async def test_tool_errors_go_back_to_the_model(kernel: MemoryKernel, fake_llm: FakeLLM) -> None:
    fake_llm.push(
        Reply(tool_calls=[ToolCall("recall_memory", {"query": "x", "filter_expr": "timestamp >= 'yesterday'; DROP"})]),
        Reply(tool_calls=[ToolCall("recall_by_id", {"turn_id": "nope!!"})]),
        Reply(text="I could not find it."),
    )
    events = await _reply(_session(kernel, fake_llm), "find it")
    tool_messages = [m for m in fake_llm.requests[-1]["messages"] if m["role"] == "tool"]
    assert "错误 (error)" in tool_messages[0]["content"] and "unexpected text" in tool_messages[0]["content"]
    assert "not a turn id" in tool_messages[1]["content"]
    assistant = [m for m in fake_llm.requests[1]["messages"] if m["role"] == "assistant"]
    assert assistant[0]["content"] == ""  # never null
    assert isinstance(events[-1], ReplyCompleted)


async def test_a_tool_call_printed_as_json_text_is_executed(
    kernel: MemoryKernel, fake_llm: FakeLLM, remembered: str
) -> None:
    fake_llm.push(
        Reply(text=f'```json\n{{"name": "recall_by_id", "arguments": {{"turn_id": "{remembered}"}}}}\n```'),
        Reply(text="找到了。"),
    )
    events = await _reply(_session(kernel, fake_llm), "看看那一轮")
    shown = "".join(e.text for e in events if isinstance(e, TextDelta))
    assert shown == "找到了。"  # the JSON never reached the screen
    called = [e for e in events if isinstance(e, ToolCalled)]
    assert called and called[0].from_text
    finished = [e for e in events if isinstance(e, RecallFinished)]
    assert finished[0].turn is not None and finished[0].turn.id == remembered
    follow_up = fake_llm.requests[1]["messages"][-1]
    assert follow_up["role"] == "user" and f"[id:{remembered}" in follow_up["content"]


async def test_the_tool_loop_is_bounded(kernel: MemoryKernel, fake_llm: FakeLLM) -> None:
    fake_llm.responder = lambda body: (
        Reply(tool_calls=[ToolCall("recall_memory", {"query": "again"})]) if body.get("tools") else Reply(text="final")
    )
    events = await _reply(_session(kernel, fake_llm, max_tool_rounds=2), "loop forever")
    assert len(fake_llm.requests) == 3
    assert "tools" not in fake_llm.requests[-1]
    assert isinstance(events[-1], ReplyCompleted) and events[-1].text == "final"


async def test_a_failed_reply_keeps_the_users_message(kernel: MemoryKernel, fake_llm: FakeLLM) -> None:
    fake_llm.push(Reply(text="partial answer that breaks", cut_after_chunks=3))
    session = _session(kernel, fake_llm)
    events = await _reply(session, "请记住这句话")
    failed = events[-1]
    assert isinstance(failed, ReplyFailed) and "cut off" in failed.message
    assert failed.turn is not None and failed.turn.status == "failed"
    stored = kernel.recall_by_id(failed.turn.id).turn
    assert stored is not None and stored.messages[0].text == "请记住这句话"
    fake_llm.push(Reply(text="好的，记住了。"))
    retried = await _reply(session, failed.user_text)
    assert isinstance(retried[-1], ReplyCompleted)
    assert retried[-1].turn.prev_id == failed.turn.id


async def test_auto_recall_injects_memory_for_models_without_tools(
    kernel: MemoryKernel, fake_llm: FakeLLM, remembered: str
) -> None:
    fake_llm.push(Reply(text="用 llama.cpp。"))
    events = await _reply(_session(kernel, fake_llm, auto_recall=True), "本地模型部署")
    assert isinstance(events[0], RecallStarted) and events[0].source == "auto"
    injected = [m for m in fake_llm.requests[0]["messages"] if m["role"] == "system"][1]["content"]
    assert f"[id:{remembered}" in injected


def test_topics_are_short() -> None:
    assert derive_topic("本地模型部署用什么？我有 8G 显存") == "本地模型部署用什么"
    assert len(derive_topic("x" * 100)) == 24

"""A whole conversation through app/session.py — no UI — over real HTTP and a real index."""

from __future__ import annotations

import asyncio
import contextlib
import json
import re
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from benchmarks.fakellm import TEXT_FORMS, FakeLLM, Reply, ToolCall, print_call
from huichat.app.config import ChatConfig
from huichat.app.prompts import ALREADY_HAVE, ANSWER_NOW, CUT_SHORT, NO_ANSWER
from huichat.app.runtime import Zone
from huichat.app.session import (
    ChatSession,
    RecallFinished,
    RecallStarted,
    ReplyCompleted,
    ReplyFailed,
    SessionEvent,
    ToolCalled,
)
from huichat.memory.kernel import MemoryKernel
from huichat.memory.results import SearchRequest
from huichat.memory.transcript import TurnChunker
from huichat.memory.turns import Message, TurnDraft
from huichat.providers.config import ProviderConfig, ProvidersConfig
from huichat.providers.events import TextDelta
from huichat.providers.llm import LLMClient
from tests.conftest import NOW, ZONE, open_kernel

MARKUP = re.compile(r"<tool_call>|</?tools>|<function=|\"arguments\"|\"name\"\s*:")


def _session(kernel: MemoryKernel, server: FakeLLM, provider: dict[str, Any] | None = None, **chat: Any) -> ChatSession:
    # the scripted model stands for one that searches: the tool loop, unless a test says otherwise
    config = ProviderConfig(
        model="openai/fake", api_base=server.base_url, **{"memory_mode": "tools", **(provider or {})}
    )
    providers = ProvidersConfig(named={"fake": config}, max_retries=0)
    clock_state = {"now": NOW}

    def clock() -> datetime:
        clock_state["now"] += timedelta(minutes=1)
        return clock_state["now"]

    llm = LLMClient(providers, env={})
    return ChatSession(kernel=kernel, llm=llm, config=ChatConfig(**chat), clock=clock, zone=Zone(ZONE, "Asia/Shanghai"))


async def _reply(session: ChatSession, text: str) -> list[SessionEvent]:
    return [event async for event in session.reply(text)]


def _shown(events: list[SessionEvent]) -> str:
    return "".join(e.text for e in events if isinstance(e, TextDelta))


def _results_in(message: dict[str, Any]) -> str:
    """The tool results a request carries last (tool messages or an observation block), else ''."""
    content = str(message.get("content") or "")
    if message["role"] == "tool" or "<tool_response>" in content:
        return content
    return ""


def _memory_answerer(form: str = "structured") -> Any:
    """A tool-using model: search first (structured or printed in ``form``), then answer citing the first id."""

    def respond(body: dict[str, Any]) -> Reply:
        last = body["messages"][-1]
        results = next((_results_in(m) for m in reversed(body["messages"]) if _results_in(m)), "")
        if _results_in(last) or not body.get("tools"):
            found = re.findall(r"\[id:([a-z0-9]{6})", results)
            return Reply(text=f"根据记忆 {found[0] if found else 'none'}，你用的是 llama.cpp。")
        query = last["content"].split("\n", 1)[-1]
        call = ToolCall("recall_memory", {"query": query, "top_k": 3})
        if form == "structured":
            return Reply(tool_calls=[call])
        return Reply(text=print_call(form, [call]), chunk_chars=3)

    return respond


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
    fake_llm.responder = _memory_answerer()
    session = _session(kernel, fake_llm)
    events = await _reply(session, "本地模型部署用什么？")
    kinds = [type(e).__name__ for e in events]
    assert kinds[:3] == ["ToolCalled", "RecallStarted", "RecallFinished"]
    finished = next(e for e in events if isinstance(e, RecallFinished))
    assert finished.results is not None and finished.results.hits[0].turn.id == remembered
    text = _shown(events)
    assert text == f"根据记忆 {remembered}，你用的是 llama.cpp。"
    done = events[-1]
    assert isinstance(done, ReplyCompleted) and done.turn.recalled_ids == (remembered,) and done.rounds == 1

    later = [await _reply(session, "本地模型部署要多少显存？"), await _reply(session, "速度呢？")]
    turns = kernel.session_turns(session.handle.session_id if session.handle else "")
    assert [t.turn_index for t in turns] == [0, 1, 2]
    assert [t.prev_id for t in turns] == [None, turns[0].id, turns[1].id]
    assert [t.next_id for t in turns] == [turns[1].id, turns[2].id, None]
    first = turns[0].messages
    assert [m.kind for m in first] == ["text", "tool_call", "tool_result", "text"]
    assert first[0] == Message("user", "本地模型部署用什么？") and first[-1] == Message("assistant", text)
    assert first[1].speaker == "recall_memory" and json.loads(first[1].text.split(" ", 1)[1])["top_k"] == 3
    assert first[2].text.startswith("1 hit: ") and remembered in first[2].text
    assert turns[0].text == f"user: 本地模型部署用什么？\nassistant: {text}"  # the trace is not searchable text
    for turn, reply in zip(turns[1:], later, strict=True):
        hits = [h.turn.id for e in reply if isinstance(e, RecallFinished) and e.results for h in e.results.hits]
        assert turn.recalled_ids == tuple(hits)
    assert remembered in turns[1].recalled_ids
    assert turns[0].topic == "本地模型部署用什么"
    parsed = TurnChunker(kernel.sessions_dir).chunk_file(kernel.sessions_dir / turns[0].session_file)
    assert [t.id for t in parsed] == [t.id for t in turns]
    assert parsed[0].recalled_ids == (remembered,)
    assert parsed[0].messages == first  # the trace comes back when the session is reopened
    # who answered is kept with the turn, in the transcript too (the reply is labelled with it when reopened)
    assert dict(parsed[0].extra)["provider"] == "fake" and dict(parsed[0].extra)["model"]
    # the second request carried the first turn as context (its chat only), and the system prompt's rules
    second = next(r for r in fake_llm.requests if r["messages"][-1]["content"].endswith("本地模型部署要多少显存？"))
    assert second["messages"][0]["role"] == "system" and "recall_memory" in second["messages"][0]["content"]
    history = second["messages"][1:-1]
    assert history == [
        {"role": "user", "content": "本地模型部署用什么？"},
        {"role": "assistant", "content": text},
    ]


async def test_the_system_prompt_is_the_same_for_every_request_and_the_time_comes_last(
    kernel: MemoryKernel, fake_llm: FakeLLM
) -> None:
    session = _session(kernel, fake_llm)
    await _reply(session, "你好")
    await _reply(session, "And in English?")
    first, second = fake_llm.requests
    assert first["messages"][0] == second["messages"][0]  # language kept from the session's first message
    assert second["messages"][1:3] == [{"role": "user", "content": "你好"}, {"role": "assistant", "content": "ok"}]
    assert second["messages"][-1]["content"].startswith(
        "[现在是 2026-11-25 周三 15:02（Asia/Shanghai）；本周一是 2026-11-23"
    )
    assert second["messages"][-1]["content"].endswith("\nAnd in English?")
    system = first["messages"][0]["content"]
    for example in ("a3f2c7", "k7f2a1", "d2n7p3", "chat_xxx", "本地模型部署", "AI 意识", "2026"):
        assert example not in system
    assert first["tool_choice"] == "auto"


@pytest.mark.parametrize("form", TEXT_FORMS)
async def test_a_call_printed_as_text_in_any_form_is_run_and_never_shown(
    kernel: MemoryKernel, fake_llm: FakeLLM, remembered: str, form: str
) -> None:
    fake_llm.responder = _memory_answerer(form)
    events = await _reply(_session(kernel, fake_llm), "本地模型部署用什么？")
    shown = _shown(events)
    assert not MARKUP.search(shown)
    assert shown.endswith(f"根据记忆 {remembered}，你用的是 llama.cpp。")
    assert "（猜测）" not in shown  # text after a printed call is the model guessing: never shown
    called = [e for e in events if isinstance(e, ToolCalled)]
    assert len(called) == 1 and called[0].from_text
    done = events[-1]
    assert isinstance(done, ReplyCompleted) and done.text == shown and done.rounds == 1
    follow_up = fake_llm.requests[1]["messages"]
    assistant, result = follow_up[-2], follow_up[-1]
    assert assistant["role"] == "assistant" and assistant["tool_calls"][0]["function"]["name"] == "recall_memory"
    assert not MARKUP.search(assistant["content"])
    assert result["role"] == "tool" and result["tool_call_id"] == assistant["tool_calls"][0]["id"]
    assert f"[id:{remembered}" in result["content"]


async def test_results_go_back_as_an_observation_block_when_configured(
    kernel: MemoryKernel, fake_llm: FakeLLM, remembered: str
) -> None:
    fake_llm.responder = _memory_answerer("tool_call")
    events = await _reply(_session(kernel, fake_llm, {"tool_results": "observation"}), "本地模型部署用什么？")
    assert isinstance(events[-1], ReplyCompleted) and remembered in events[-1].text
    assistant, observation = fake_llm.requests[1]["messages"][-2:]
    assert set(assistant) == {"role", "content"} and assistant["content"].startswith("<tool_call>")
    assert observation["role"] == "user" and observation["content"].startswith("<tool_response>\n[id:")
    assert observation["content"].endswith("</tool_response>")


async def test_a_call_that_cannot_be_read_goes_back_as_a_tool_error(kernel: MemoryKernel, fake_llm: FakeLLM) -> None:
    fake_llm.push(
        Reply(text='<tool_call>{"name": "recall_memory", "arguments": {"query": "VPN"]}</tool_call>'),
        Reply(tool_calls=[ToolCall("recall_memory", {"query": "VPN"})]),
        Reply(text="没有找到相关记忆。"),
    )
    events = await _reply(_session(kernel, fake_llm), "我的 VPN 怎么配的？")
    assert _shown(events) == "没有找到相关记忆。"
    error = fake_llm.requests[1]["messages"][-1]
    assert error["role"] == "tool" and "could not be read" in error["content"]
    finished = [e for e in events if isinstance(e, RecallFinished)]
    assert finished[0].error and not finished[1].error
    done = events[-1]
    assert isinstance(done, ReplyCompleted) and done.rounds == 2
    assert "could not be read" in done.turn.messages[2].text and done.turn.messages[2].kind == "tool_result"


async def test_the_same_call_is_never_run_twice_in_one_reply(
    kernel: MemoryKernel, fake_llm: FakeLLM, remembered: str
) -> None:
    again = ToolCall("recall_memory", {"query": "本地模型部署"})
    fake_llm.push(
        Reply(tool_calls=[again]),
        Reply(text=print_call("tools", [ToolCall("recall_memory", {"query": "本地模型部署", "top_k": None})])),  # type: ignore[dict-item]
        Reply(text=f"用 llama.cpp（{remembered}）。"),
    )
    events = await _reply(_session(kernel, fake_llm), "本地模型部署用什么？")
    assert [e.repeated for e in events if isinstance(e, ToolCalled)] == [False, True]
    assert len([e for e in events if isinstance(e, RecallStarted)]) == 1
    third = fake_llm.requests[2]
    assert third["messages"][-2] == {"role": "tool", "tool_call_id": "call_1_0", "content": ALREADY_HAVE}
    assert third["messages"][-1] == {"role": "user", "content": ANSWER_NOW["zh"]}
    assert "tools" not in third  # told to answer, without tools
    assert isinstance(events[-1], ReplyCompleted) and events[-1].text == f"用 llama.cpp（{remembered}）。"


async def test_a_tool_result_copied_under_the_answer_is_cut_from_screen_and_store(
    kernel: MemoryKernel, fake_llm: FakeLLM, remembered: str
) -> None:
    # Qwen2.5-Coder-1.5B answered with the hit's text and then pasted the result's blocks under it
    def echoing(body: dict[str, Any]) -> Reply:
        last = body["messages"][-1]
        if last["role"] != "tool":
            return Reply(tool_calls=[ToolCall("recall_memory", {"query": "本地模型部署"})])
        first_block = last["content"].split("\n---\n")[0]
        return Reply(text=f"用 llama.cpp（{remembered}）。\n---\n{first_block}", chunk_chars=2)

    fake_llm.responder = echoing
    events = await _reply(_session(kernel, fake_llm), "本地模型部署用什么？")
    shown = "".join(e.text for e in events if isinstance(e, TextDelta))
    assert shown.rstrip() == f"用 llama.cpp（{remembered}）。"
    done = events[-1]
    assert isinstance(done, ReplyCompleted) and done.text.rstrip() == f"用 llama.cpp（{remembered}）。"
    stored = kernel.store.get([done.turn.id])[done.turn.id]
    assert "[id:" not in stored.text and "📁" not in stored.text


async def test_a_failing_call_is_not_run_again_either(kernel: MemoryKernel, fake_llm: FakeLLM) -> None:
    example = ToolCall(
        "recall_by_id", {"turn_id": "a3f2c7"}
    )  # the seed schema's example id, as a small model copies it
    fake_llm.push(Reply(tool_calls=[example]), Reply(tool_calls=[example]), Reply(text="没有找到。"))
    events = await _reply(_session(kernel, fake_llm), "我家里的 VPN 用的什么协议？")
    assert [e.repeated for e in events if isinstance(e, ToolCalled)] == [False, True]
    first_result = fake_llm.requests[1]["messages"][-1]["content"]
    assert "a3f2c7" in first_result and "use an id that a recall_memory result showed" in first_result
    assert fake_llm.requests[2]["messages"][-1] == {"role": "user", "content": ANSWER_NOW["zh"]}
    assert isinstance(events[-1], ReplyCompleted) and events[-1].rounds == 2


async def test_a_model_that_never_stops_calling_gets_no_answer_stored(kernel: MemoryKernel, fake_llm: FakeLLM) -> None:
    count = iter(range(100))
    fake_llm.responder = lambda body: Reply(
        text=print_call("tool_call", [ToolCall("recall_memory", {"query": f"VPN {next(count)}"})])
    )
    session = _session(kernel, fake_llm, max_tool_rounds=2)
    events = await _reply(session, "我的 VPN 怎么配的？")
    assert len(fake_llm.requests) == 3
    assert "tools" not in fake_llm.requests[-1]
    assert fake_llm.requests[-1]["messages"][-1] == {"role": "user", "content": ANSWER_NOW["zh"]}
    assert _shown(events) == ""
    failed = events[-1]
    assert isinstance(failed, ReplyFailed) and failed.message == NO_ANSWER["zh"] and failed.rounds == 2
    assert failed.turn is not None and failed.turn.status == "failed"
    assert failed.turn.messages[-1] == Message("assistant", NO_ANSWER["zh"])
    assert "<tool_call>" not in failed.turn.text
    found = kernel.search(SearchRequest("我的 VPN 怎么配的", NOW, record_access=False))
    assert failed.turn.id not in [h.turn.id for h in found.hits]  # recall ignores it


@pytest.mark.parametrize(
    ("arguments", "error"),
    [
        ({"type": "object", "properties": {"query": {"type": "string"}}, "required": ["query"]}, "schema"),
        ({"query": "VPN", "top_k": 500}, "top_k must be between 1 and 20"),
        ({"query": "VPN", "top_k": 0}, "top_k must be between 1 and 20"),
        ({"query": "VPN", "top_k": "many"}, "top_k must be a whole number"),
        ({"query": "VPN", "limit": 3}, "has no parameter limit"),
        ({"query": ""}, "query is empty"),
        ({"query": "搜索关键词或问题"}, "description"),
        ({"query": '{"type": "string"}'}, "not JSON"),
        ({"query": [{"q": "VPN"}]}, "query must be a string"),  # a list of strings is several searches
        ({"query": "???"}, "no words"),
    ],
)
async def test_tool_arguments_are_checked_against_the_schema(
    kernel: MemoryKernel, fake_llm: FakeLLM, arguments: dict[str, Any], error: str
) -> None:
    fake_llm.push(Reply(tool_calls=[ToolCall("recall_memory", arguments)]), Reply(text="I could not search."))
    events = await _reply(_session(kernel, fake_llm), "find it")
    result = fake_llm.requests[1]["messages"][-1]
    assert result["role"] == "tool" and result["content"].startswith("错误 (error): ") and error in result["content"]
    assert isinstance(events[-1], ReplyCompleted)


async def test_tool_errors_go_back_to_the_model(kernel: MemoryKernel, fake_llm: FakeLLM) -> None:
    fake_llm.push(
        Reply(tool_calls=[ToolCall("recall_memory", {"query": "x", "filter_expr": "timestamp >= 'yesterday'; DROP"})]),
        Reply(tool_calls=[ToolCall("recall_by_id", {"turn_id": "nope!!"})]),
        Reply(tool_calls=[ToolCall("delete_memory", {})]),
        Reply(text="I could not find it."),
    )
    events = await _reply(_session(kernel, fake_llm), "find it")
    tool_messages = [m for m in fake_llm.requests[-1]["messages"] if m["role"] == "tool"]
    assert "错误 (error)" in tool_messages[0]["content"] and "unexpected text" in tool_messages[0]["content"]
    assert "not a turn id" in tool_messages[1]["content"]
    assert "unknown tool 'delete_memory'" in tool_messages[2]["content"]
    assistant = [m for m in fake_llm.requests[1]["messages"] if m["role"] == "assistant"]
    assert assistant[0]["content"] == ""  # never null
    assert isinstance(events[-1], ReplyCompleted)


async def test_an_exception_in_a_tool_becomes_a_tool_error(
    kernel: MemoryKernel, fake_llm: FakeLLM, monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken(request: SearchRequest) -> None:
        raise OverflowError("date value out of range")

    monkeypatch.setattr(kernel, "search", broken)
    fake_llm.push(Reply(tool_calls=[ToolCall("recall_memory", {"query": "x"})]), Reply(text="Search is broken."))
    events = await _reply(_session(kernel, fake_llm), "find it")
    result = fake_llm.requests[1]["messages"][-1]
    assert "the tool failed (OverflowError: date value out of range)" in result["content"]
    assert isinstance(events[-1], ReplyCompleted) and events[-1].text == "Search is broken."


async def test_turns_already_in_the_context_are_never_recalled(
    kernel: MemoryKernel, fake_llm: FakeLLM, remembered: str
) -> None:
    fake_llm.responder = _memory_answerer()
    session = _session(kernel, fake_llm)
    first = await _reply(session, "本地模型部署用什么？")
    assert isinstance(first[-1], ReplyCompleted)
    second = await _reply(session, "本地模型部署用什么？再说一遍")
    hits = [h.turn.id for e in second if isinstance(e, RecallFinished) and e.results for h in e.results]
    assert remembered in hits and first[-1].turn.id not in hits


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
    retry_request = fake_llm.requests[-1]["messages"]
    assert all("请记住这句话" not in m["content"] for m in retry_request[:-1])  # the failed turn is not context


async def test_an_unexpected_exception_never_escapes_the_reply(
    kernel: MemoryKernel, fake_llm: FakeLLM, monkeypatch: pytest.MonkeyPatch
) -> None:
    session = _session(kernel, fake_llm)

    def broken(*args: Any, **kwargs: Any) -> None:
        raise RuntimeError("boom")

    monkeypatch.setattr(session.llm, "stream", broken)
    events = await _reply(session, "这句话不能丢")
    failed = events[-1]
    assert isinstance(failed, ReplyFailed) and failed.message == "unexpected error (RuntimeError: boom)"
    assert failed.turn is not None and failed.turn.messages[0].text == "这句话不能丢"


async def test_when_even_storing_fails_the_text_goes_back(
    kernel: MemoryKernel, fake_llm: FakeLLM, monkeypatch: pytest.MonkeyPatch
) -> None:
    def full_disk(*args: Any) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(kernel, "append_turn", full_disk)
    events = await _reply(_session(kernel, fake_llm), "这句话不能丢")
    failed = events[-1]
    assert isinstance(failed, ReplyFailed) and failed.turn is None and failed.user_text == "这句话不能丢"
    assert "No space left on device" in failed.message
    assert _shown(events) == "ok"


@pytest.mark.parametrize("how", ["reader gone", "task cancelled"])
async def test_a_stopped_reply_keeps_the_users_message(kernel: MemoryKernel, fake_llm: FakeLLM, how: str) -> None:
    fake_llm.push(Reply(text="a long answer that is still streaming when the app closes", chunk_delay=0.2))
    session = _session(kernel, fake_llm)
    first_delta = asyncio.Event()

    async def read() -> None:
        async for event in session.reply("关掉之前这句话要留下"):
            if isinstance(event, TextDelta):
                first_delta.set()
                if how == "reader gone":
                    break

    task = asyncio.create_task(read())
    await first_delta.wait()
    if how == "task cancelled":
        task.cancel()
    with contextlib.suppress(asyncio.CancelledError):
        await task
    await asyncio.sleep(0)  # let an abandoned generator be closed
    if how == "reader gone":
        await asyncio.get_running_loop().shutdown_asyncgens()
    turns = kernel.session_turns(session.handle.session_id if session.handle else "")
    assert [(t.status, t.messages[0].text) for t in turns] == [("failed", "关掉之前这句话要留下")]
    assert turns[0].messages[-1].text == "a lo"  # what was shown before the stop
    assert dict(turns[0].extra)["error"] == "the reply was stopped"


async def test_a_stopped_reply_stays_in_later_context_marked_as_cut_short(
    kernel: MemoryKernel, fake_llm: FakeLLM
) -> None:
    fake_llm.push(Reply(text="第一部分，后面还有很多", chunk_chars=5, chunk_delay=0.2), Reply(text="好的"))
    session = _session(kernel, fake_llm)

    async def read() -> None:  # as the chat screen reads it: closed at once on a stop
        async with contextlib.aclosing(session.reply("讲一个长故事")) as events:
            async for event in events:
                if isinstance(event, TextDelta):
                    raise asyncio.CancelledError  # the user stopped it after the first words

    with contextlib.suppress(asyncio.CancelledError):
        await read()
    await _reply(session, "接着说")
    context = fake_llm.requests[-1]["messages"][1:-1]
    assert [m["role"] for m in context] == ["user", "assistant"]
    assert context[0]["content"] == "讲一个长故事"
    assert context[1]["content"] == f"第一部分，\n\n{CUT_SHORT['zh']}"  # what arrived, said to be cut short


async def test_a_surrogate_pair_split_across_chunks_is_stored_whole(kernel: MemoryKernel, fake_llm: FakeLLM) -> None:
    fake_llm.push(Reply(chunks=["好的", "\ud83d", "\ude00", "！"]))
    session = _session(kernel, fake_llm)
    events = await _reply(session, "笑一个")
    done = events[-1]
    assert isinstance(done, ReplyCompleted) and done.text == "好的😀！"
    parsed = TurnChunker(kernel.sessions_dir).chunk_file(kernel.sessions_dir / done.turn.session_file)
    assert parsed[0].messages[-1].text == "好的😀！"


async def test_a_server_that_needs_tool_choice_and_cannot_stream_tool_rounds(
    kernel: MemoryKernel, remembered: str
) -> None:
    """llama-cpp-python's chatml-function-calling: tools only with tool_choice, tool rounds only unstreamed."""
    with FakeLLM(responder=_memory_answerer(), needs_tool_choice=True, stream_tools="fail") as server:
        session = _session(kernel, server)
        events = await _reply(session, "本地模型部署用什么？")
        await _reply(session, "还有呢？")
    assert isinstance(events[-1], ReplyCompleted) and remembered in events[-1].text
    assert [bool(r.get("stream")) for r in server.requests] == [True, False, False, False, False]


async def test_a_server_that_cannot_write_text_while_tools_are_offered_is_asked_again_without_them(
    kernel: MemoryKernel, remembered: str
) -> None:
    """llama-cpp-python's chatml-function-calling: with tools offered, its grammar allows only a call or nothing."""

    def chatml_model(body: dict[str, Any]) -> Reply:
        if not body.get("tools"):
            return _memory_answerer()(body)
        if _results_in(body["messages"][-1]):
            return Reply(text="")  # the grammar allows a function name or the end, never an answer
        return Reply(tool_calls=[ToolCall("recall_memory", {"query": "本地模型部署"})])

    with FakeLLM(responder=chatml_model, needs_tool_choice=True, stream_tools="fail") as server:
        session = _session(kernel, server, {"tool_results": "observation"})
        events = await _reply(session, "本地模型部署用什么？")
    done = events[-1]
    assert isinstance(done, ReplyCompleted) and done.text == f"根据记忆 {remembered}，你用的是 llama.cpp。"
    assert done.rounds == 1
    assert [(bool(r.get("stream")), bool(r.get("tools"))) for r in server.requests] == [
        (True, True),  # the call cannot be streamed: 500
        (False, True),  # the call, unstreamed
        (False, True),  # nothing
        (True, False),  # without tools: the answer
    ]
    assert server.requests[-1]["messages"][-1] == {"role": "user", "content": ANSWER_NOW["zh"]}


async def test_auto_recall_injects_memory_for_models_without_tools(
    kernel: MemoryKernel, fake_llm: FakeLLM, remembered: str
) -> None:
    fake_llm.push(Reply(text="用 llama.cpp。"))
    events = await _reply(_session(kernel, fake_llm, auto_recall=True), "本地模型部署")
    assert isinstance(events[0], RecallStarted) and events[0].source == "auto"
    injected = [m for m in fake_llm.requests[0]["messages"] if m["role"] == "system"][1]["content"]
    assert f"[id:{remembered}" in injected


@pytest.mark.parametrize("copied", ["whole", "only", "as a list"])
async def test_the_time_line_the_app_wrote_is_never_searched_for(
    kernel: MemoryKernel, fake_llm: FakeLLM, remembered: str, copied: str
) -> None:
    # models pass the newest message as the query, time line and all: read as time words it
    # confined the search to today and hid every older memory
    def respond(body: dict[str, Any]) -> Reply:
        last = body["messages"][-1]
        if _results_in(last):
            return Reply(text="ok")
        query = {
            "whole": last["content"],
            "only": last["content"].split("\n", 1)[0],
            "as a list": last["content"].split("\n", 1),  # several searches: the time line one of them
        }[copied]
        return Reply(tool_calls=[ToolCall("recall_memory", {"query": query})])

    fake_llm.responder = respond
    events = await _reply(_session(kernel, fake_llm), "本地模型部署用什么")
    finished = [e for e in events if isinstance(e, RecallFinished)]
    result = fake_llm.requests[1]["messages"][-1]["content"]
    if copied != "only":
        assert finished[0].results is not None and finished[0].results.time_range is None
        assert remembered in [h.turn.id for h in finished[0].results.hits]
    else:  # nothing but the time line: not a search of today, an error the model can correct
        assert result.startswith("错误 (error): ") and "query is empty" in result


@pytest.mark.parametrize("weeks", [True, False])
@pytest.mark.parametrize("language", ["en", "zh"])
def test_the_time_line_is_taken_out_of_a_query_whole_or_cut_short(language: str, weeks: bool) -> None:
    from huichat.app.prompts import time_note, without_time_note

    note = time_note(language, NOW, "Asia/Shanghai", weeks=weeks)
    assert without_time_note(f"{note}\nwhat did I say about Rust?") == "what did I say about Rust?"
    assert without_time_note(note) == without_time_note(note[:30]) == without_time_note(note[1:-1]) == ""
    assert without_time_note("It is now time to talk about Rust") == "It is now time to talk about Rust"


async def test_auto_recall_searches_the_message_itself_and_shows_what_it_found(
    kernel: MemoryKernel, fake_llm: FakeLLM, remembered: str
) -> None:
    # auto-recall is no call of the model's: a message the tool would refuse as a model's query
    # (here an echo of the schema's placeholder) is searched as it is
    fake_llm.push(Reply(text="用 llama.cpp。"))
    events = await _reply(_session(kernel, fake_llm, auto_recall=True, auto_recall_top_k=2), "query 本地模型部署")
    started, finished = events[0], events[1]
    assert isinstance(started, RecallStarted) and started.arguments == {"query": "query 本地模型部署", "top_k": 2}
    assert isinstance(finished, RecallFinished) and finished.source == "auto" and finished.error == ""
    assert finished.results is not None and [h.turn.id for h in finished.results.hits] == [remembered]
    fake_llm.push(Reply(text="好的。"))
    events = await _reply(_session(kernel, fake_llm, auto_recall=True), "keywords")
    finished = events[1]
    assert isinstance(finished, RecallFinished) and finished.error == "" and finished.results is not None


async def test_a_turn_forgotten_mid_conversation_leaves_the_models_context(
    kernel: MemoryKernel, fake_llm: FakeLLM, tmp_path: Path
) -> None:
    session = _session(kernel, fake_llm)
    await _reply(session, "我的银行卡密码是 4711")
    await _reply(session, "今天天气不错")
    secret = session.turns[0].id
    elsewhere = open_kernel(tmp_path)  # another huichat (the CLI) forgets it while this one goes on
    elsewhere.forget(secret, NOW)
    elsewhere.close()
    await _reply(session, "还有别的吗")
    sent = [m["content"] for m in fake_llm.requests[-1]["messages"]]
    assert not any("4711" in content for content in sent)
    assert any(content == "今天天气不错" for content in sent)  # the rest of the conversation stays


async def test_asked_again_the_reply_being_replaced_is_no_memory_for_its_replacement(
    kernel: MemoryKernel, fake_llm: FakeLLM, remembered: str
) -> None:
    # F4 on "本地模型部署用什么？": the turn being replaced was still on the current branch in the
    # index until the new one was written, and the search for the same words found it first
    fake_llm.responder = _memory_answerer()
    session = _session(kernel, fake_llm)
    await _reply(session, "本地模型部署用什么？")
    assert session.handle is not None
    replaced = kernel.session_turns(session.handle.session_id)[0]
    await session.branch_before(replaced.id)
    events = await _reply(session, "本地模型部署用什么？")
    found = [h.turn.id for e in events if isinstance(e, RecallFinished) and e.results for h in e.results]
    assert found and replaced.id not in found and remembered in found
    done = events[-1]
    assert isinstance(done, ReplyCompleted) and done.turn.id != replaced.id
    # the next reply searches as usual: the new branch's turn is in context, the old one beside it
    later = await _reply(session, "本地模型部署用什么？")
    found = [h.turn.id for e in later if isinstance(e, RecallFinished) and e.results for h in e.results]
    assert replaced.id not in found and done.turn.id not in found

"""litellm's real HTTP path against the scripted OpenAI-compatible server on 127.0.0.1."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from benchmarks.fakellm import FakeLLM, Reply, ToolCall
from huichat.providers.config import ProviderConfig, ProvidersConfig
from huichat.providers.errors import ProviderError
from huichat.providers.events import ReplyDone, TextDelta
from huichat.providers.llm import LLMClient
from huichat.providers.textcalls import CallSieve, calls_in_text

TOOLS = ("recall_memory", "recall_by_id")
MESSAGES = [{"role": "user", "content": "你好"}]


def _client(*servers: FakeLLM, retries: int = 0, timeout: float = 10.0, **extra: Any) -> LLMClient:
    names = ["main", "backup", "third"]
    named = {
        names[i]: ProviderConfig(
            model=f"openai/model-{names[i]}",
            api_base=server.base_url,
            timeout=timeout,
            fallbacks=tuple(names[1 : len(servers)]) if i == 0 else (),
            **extra,
        )
        for i, server in enumerate(servers)
    }
    return LLMClient(ProvidersConfig(named=named, max_retries=retries), env={})


async def _collect(client: LLMClient, **kwargs: Any) -> tuple[list[str], ReplyDone]:
    deltas: list[str] = []
    done = None
    async for event in client.stream(MESSAGES, **kwargs):
        if isinstance(event, TextDelta):
            deltas.append(event.text)
        elif isinstance(event, ReplyDone):
            done = event
    assert done is not None
    return deltas, done


async def test_a_plain_reply_streams_in_pieces(fake_llm: FakeLLM) -> None:
    fake_llm.push(Reply(text="你好！我记得你上周问过部署的事。", chunk_chars=3))
    deltas, done = await _collect(_client(fake_llm))
    assert len(deltas) > 3
    assert "".join(deltas) == "你好！我记得你上周问过部署的事。"
    assert done.finish_reason == "stop" and done.tool_calls == ()
    assert fake_llm.requests[0]["model"] == "model-main"
    assert fake_llm.requests[0]["stream"] is True


async def test_streamed_parallel_tool_calls_are_assembled(fake_llm: FakeLLM) -> None:
    fake_llm.push(
        Reply(
            tool_calls=[
                ToolCall("recall_memory", {"query": "本地模型部署", "top_k": 3}),
                ToolCall("recall_by_id", {"turn_id": "a3f2c7"}),
            ]
        )
    )
    tools = [{"type": "function", "function": {"name": n, "parameters": {"type": "object"}}} for n in TOOLS]
    _, done = await _collect(_client(fake_llm), tools=tools)
    assert [(c.name, c.arguments) for c in done.tool_calls] == [
        ("recall_memory", {"query": "本地模型部署", "top_k": 3}),
        ("recall_by_id", {"turn_id": "a3f2c7"}),
    ]
    assert {c.id for c in done.tool_calls} == {"call_0", "call_1"}
    assert fake_llm.requests[0]["tools"][0]["function"]["name"] == "recall_memory"


async def test_401_is_one_line_and_not_retried(fake_llm: FakeLLM) -> None:
    fake_llm.push(Reply(status=401, error_message="Incorrect API key provided"))
    with pytest.raises(ProviderError) as caught:
        await _collect(_client(fake_llm, retries=2))
    assert str(caught.value) == "main: authentication failed"
    assert not caught.value.transient
    assert len(fake_llm.requests) == 1


async def test_429_then_success_is_retried(fake_llm: FakeLLM) -> None:
    fake_llm.push(Reply(status=429, error_message="slow down", retry_after=0), Reply(text="after the wait"))
    deltas, _ = await _collect(_client(fake_llm, retries=2))
    assert "".join(deltas) == "after the wait"
    assert len(fake_llm.requests) == 2


async def test_429_forever_becomes_a_rate_limit_error(fake_llm: FakeLLM) -> None:
    fake_llm.push(*[Reply(status=429, error_message="slow down", retry_after=0)] * 3)
    with pytest.raises(ProviderError, match="rate limited") as caught:
        await _collect(_client(fake_llm, retries=1))
    assert caught.value.transient


async def test_a_timeout_is_reported_with_its_limit(fake_llm: FakeLLM) -> None:
    fake_llm.push(Reply(text="too late", delay=3.0))
    with pytest.raises(ProviderError, match=r"main: no answer within 1 s"):
        await _collect(_client(fake_llm, timeout=1.0))


async def test_a_stream_cut_off_midway_is_an_error_after_the_text_so_far(fake_llm: FakeLLM) -> None:
    fake_llm.push(Reply(text="this answer will be cut off somewhere", chunk_chars=4, cut_after_chunks=4))
    seen: list[str] = []
    with pytest.raises(ProviderError, match="cut off") as caught:
        async for event in _client(fake_llm).stream(MESSAGES):
            if isinstance(event, TextDelta):
                seen.append(event.text)
    assert "".join(seen) == "this answer "
    assert caught.value.transient


_SLOW_SERVER = """
import sys, time
from benchmarks.fakellm import FakeLLM, Reply
server = FakeLLM()
server.responder = lambda body: Reply(text="slow answer " * 40, chunk_chars=4, chunk_delay=0.2)
server.__enter__()
print(server.base_url, flush=True)
time.sleep(120)
"""


async def test_a_server_killed_mid_reply_is_a_lost_connection_not_one_never_made() -> None:
    # tried as a user: killing the model's server while it streamed said "cannot connect to …"
    root = Path(__file__).resolve().parents[2]
    server = subprocess.Popen(
        [sys.executable, "-c", _SLOW_SERVER], stdout=subprocess.PIPE, text=True, cwd=root, env={**os.environ}
    )
    try:
        assert server.stdout is not None
        config = ProvidersConfig(
            default="main",
            named={"main": ProviderConfig(model="openai/fake", api_base=server.stdout.readline().strip())},
            max_retries=0,
        )
        seen: list[str] = []
        with pytest.raises(ProviderError) as caught:
            async for event in LLMClient(config, env={}).stream(MESSAGES):
                if isinstance(event, TextDelta):
                    seen.append(event.text)
                    if len(seen) == 2:
                        server.kill()
        assert "".join(seen) == "slow ans"
        assert "was lost mid-reply" in str(caught.value) and "cannot connect" not in str(caught.value)
        assert caught.value.transient
    finally:
        server.kill()
        server.wait()


async def test_fallback_to_a_second_provider_when_the_first_is_down(fake_llm: FakeLLM) -> None:
    with FakeLLM() as dead:
        dead.push(Reply(status=503, error_message="overloaded"))
        fake_llm.push(Reply(text="backup answers"))
        deltas, done = await _collect(_client(dead, fake_llm))
    assert "".join(deltas) == "backup answers"
    assert fake_llm.requests[0]["model"] == "model-backup"
    assert done.model.endswith("model-backup")


async def test_connection_refused_is_named(fake_llm: FakeLLM) -> None:
    client = LLMClient(
        ProvidersConfig(named={"gone": ProviderConfig(model="openai/x", api_base="http://127.0.0.1:9/v1")}), env={}
    )
    with pytest.raises(ProviderError, match=r"gone: cannot connect to http://127.0.0.1:9/v1"):
        await _collect(client)


async def test_each_request_goes_to_the_provider_it_names(fake_llm: FakeLLM) -> None:
    with FakeLLM() as other:
        client = _client(fake_llm, other)
        await _collect(client, provider="backup")
        assert other.requests[0]["model"] == "model-backup" and not fake_llm.requests
        await _collect(client)  # none named: the configured default
        assert fake_llm.requests[0]["model"] == "model-main" and len(other.requests) == 1
    with pytest.raises(ProviderError, match=r"unknown provider 'nope' \(configured: main, backup\)"):
        await _collect(client, provider="nope")


async def test_a_missing_key_variable_is_explained_before_any_request(fake_llm: FakeLLM) -> None:
    config = ProvidersConfig(
        named={"ds": ProviderConfig(model="deepseek/deepseek-chat", api_key_env="HUICHAT_TEST_KEY")}
    )
    client = LLMClient(config, env={})
    assert client.problem() == "provider 'ds' needs its API key in $HUICHAT_TEST_KEY, which is not set"
    with pytest.raises(ProviderError, match=r"\$HUICHAT_TEST_KEY"):
        await _collect(client)


async def test_the_key_comes_from_the_named_variable(fake_llm: FakeLLM) -> None:
    config = ProvidersConfig(
        named={"p": ProviderConfig(model="openai/m", api_base=fake_llm.base_url, api_key_env="HUICHAT_TEST_KEY")}
    )
    await _collect(LLMClient(config, env={"HUICHAT_TEST_KEY": "sk-secret-123"}))
    assert fake_llm.requests[0]["_headers"]["authorization"] == "Bearer sk-secret-123"


async def test_tools_are_offered_with_tool_choice_auto(fake_llm: FakeLLM) -> None:
    tools = [{"type": "function", "function": {"name": "recall_memory", "parameters": {"type": "object"}}}]
    await _collect(_client(fake_llm), tools=tools)
    await _collect(_client(fake_llm))
    assert fake_llm.requests[0]["tool_choice"] == "auto"
    assert "tool_choice" not in fake_llm.requests[1] and "tools" not in fake_llm.requests[1]


def _calling_model(body: dict[str, Any]) -> Reply:
    """Calls the tool whenever it sees one (the needs_tool_choice server hides them without tool_choice)."""
    if body.get("tools"):
        return Reply(tool_calls=[ToolCall("recall_memory", {"query": "VPN"})])
    return Reply(text="I answer without tools.")


@pytest.mark.parametrize("refusal", ["fail", "empty"])
async def test_a_server_that_cannot_stream_tool_rounds_gets_them_unstreamed(refusal: str) -> None:
    tools = [{"type": "function", "function": {"name": "recall_memory", "parameters": {"type": "object"}}}]
    with FakeLLM(responder=_calling_model, needs_tool_choice=True, stream_tools=refusal) as server:  # type: ignore[arg-type]
        client = _client(server)
        assert client.streams_tool_rounds("main")
        _, done = await _collect(client, tools=tools, tool_names=TOOLS)
        assert [(c.name, c.arguments) for c in done.tool_calls] == [("recall_memory", {"query": "VPN"})]
        assert [r.get("stream", False) for r in server.requests] == [True, False]
        assert not client.streams_tool_rounds("main")
        await _collect(client, tools=tools, tool_names=TOOLS)  # remembered: no streamed attempt
        deltas, _ = await _collect(client, tool_names=TOOLS)  # a round without tools still streams
    assert [r.get("stream", False) for r in server.requests] == [True, False, False, True]
    assert "".join(deltas) == "I answer without tools."


async def test_a_failing_server_is_not_mistaken_for_one_that_cannot_stream(fake_llm: FakeLLM) -> None:
    fake_llm.push(Reply(status=401, error_message="bad key"))
    tools = [{"type": "function", "function": {"name": "recall_memory", "parameters": {"type": "object"}}}]
    client = _client(fake_llm)
    with pytest.raises(ProviderError, match="authentication failed"):
        await _collect(client, tools=tools)
    assert len(fake_llm.requests) == 1 and client.streams_tool_rounds("main")


async def test_when_the_unstreamed_round_fails_too_its_error_is_raised(fake_llm: FakeLLM) -> None:
    fake_llm.stream_tools = "fail"
    fake_llm.responder = lambda body: (
        Reply(tool_calls=[ToolCall("recall_memory", {"query": "x"})])
        if body.get("stream")
        else Reply(status=500, error_message="out of memory")
    )
    tools = [{"type": "function", "function": {"name": "recall_memory", "parameters": {"type": "object"}}}]
    client = _client(fake_llm)
    with pytest.raises(ProviderError, match="out of memory"):
        await _collect(client, tools=tools)
    assert [r.get("stream", False) for r in fake_llm.requests] == [True, False]
    assert client.streams_tool_rounds("main")


async def test_a_surrogate_pair_split_across_chunks_is_joined(fake_llm: FakeLLM) -> None:
    fake_llm.push(Reply(chunks=["笑", "\ud83d", "\ude00", "!"]))
    deltas, done = await _collect(_client(fake_llm), tool_names=TOOLS)
    assert "".join(deltas) == "笑😀!" == done.text
    for piece in deltas:
        piece.encode("utf-8")  # every piece can be shown and written


async def test_a_lone_surrogate_becomes_a_replacement_character(fake_llm: FakeLLM) -> None:
    fake_llm.push(Reply(chunks=["a", "\ud83d"]))
    deltas, _ = await _collect(_client(fake_llm))
    assert "".join(deltas) == "a\ufffd"


async def test_a_call_printed_as_text_is_read_and_never_streamed(fake_llm: FakeLLM) -> None:
    fake_llm.push(
        Reply(text='好的。\n<tools>\n{"name": "recall_memory", "arguments": {"query": "VPN"}}\n</tools>', chunk_chars=2)
    )
    deltas, done = await _collect(_client(fake_llm), tool_names=TOOLS)
    assert "".join(deltas) == "好的。\n"
    assert [(c.name, c.arguments, c.from_text) for c in done.tool_calls] == [("recall_memory", {"query": "VPN"}, True)]
    assert "<tools>" in done.text


PROBE = [{"role": "user", "content": "What is today's secret word? Only the get_secret_word tool knows it."}]
SECRET_TOOL: dict[str, Any] = {
    "type": "function",
    "function": {
        "name": "get_secret_word",
        "description": "Returns today's secret word.",
        "parameters": {"type": "object", "properties": {"language": {"type": "string"}}, "required": ["language"]},
    },
}


@pytest.mark.parametrize(
    ("answer", "probe"),
    [
        (Reply(tool_calls=[ToolCall("get_secret_word", {"language": "en"})]), "yes (structured)"),
        (Reply(text='<tool_call>{"name": "get_secret_word", "arguments": {"language": "en"}}</tool_call>'), "yes (text)"),
        (Reply(text="The secret word is banana."), "no"),
    ],
)  # fmt: skip
async def test_the_tool_probe_says_how_a_provider_calls_tools(fake_llm: FakeLLM, answer: Reply, probe: str) -> None:
    fake_llm.push(answer)
    assert await _client(fake_llm).probe_tools("main", PROBE, [SECRET_TOOL], ["get_secret_word"]) == probe
    assert fake_llm.requests[0]["tools"][0]["function"]["name"] == "get_secret_word"


async def test_the_tool_probe_notices_a_server_that_cannot_stream_tool_rounds() -> None:
    def model(body: dict[str, Any]) -> Reply:
        if body.get("tools"):
            return Reply(tool_calls=[ToolCall("get_secret_word", {"language": "en"})])
        return Reply(text="I do not know the secret word.")

    with FakeLLM(responder=model, needs_tool_choice=True, stream_tools="fail") as server:
        assert await _client(server).probe_tools("main", PROBE, [SECRET_TOOL], ["get_secret_word"]) == (
            "yes (structured, unstreamed)"
        )
        assert server.requests[0]["tool_choice"] == "auto"


CALL = '{"name": "recall_memory", "arguments": {"query": "VPN"}}'
VPN = [("recall_memory", {"query": "VPN"}, "")]


@pytest.mark.parametrize(
    ("text", "shown", "expected"),
    [
        (f"<tool_call>\n{CALL}\n</tool_call>", "", VPN),
        (f"<tools>\n{CALL}\n</tools>", "", VPN),
        ('<function=recall_memory>{"query": "VPN"}</function>', "", VPN),
        (f"```json\n{CALL}\n```", "", VPN),
        (f"```\n{CALL}\n```", "", VPN),
        (CALL, "", VPN),
        (f"  {CALL}  ", "  ", VPN),
        (f"我来查一下。\n<tool_call>{CALL}</tool_call>\n结果应该是……", "我来查一下。\n", VPN),
        (f"Let me check: {CALL} and then answer", "Let me check: ", VPN),
        ('{"name": "recall_memory", "arguments": "{\\"query\\": \\"VPN\\"}"}', "", VPN),
        ('{"function": {"name": "recall_memory", "arguments": {"query": "VPN"}}}', "", VPN),
        ('{"type": "function", "function": {"name": "recall_memory", "arguments": "{\\"query\\": \\"VPN\\"}"}}', "", VPN),
        ('{"tool": "recall_memory", "parameters": {"query": "VPN"}}', "", VPN),
        ('{"function": "recall_memory", "args": {"query": "VPN"}}', "", VPN),
        ("{'name': 'recall_memory', 'arguments': {'query': 'VPN'}}", "", VPN),
        ('{"name": "recall_memory", "arguments": {"query": "VPN"}', "", VPN),
        (f"<tool_call>{CALL}", "", VPN),
        (f'[{CALL}, {{"name": "recall_by_id", "arguments": {{"turn_id": "b"}}}}]', "", [*VPN, ("recall_by_id", {"turn_id": "b"}, "")]),
        (f"<tool_call>{CALL}</tool_call>\n<tool_call>{CALL}</tool_call>", "", VPN * 2),
        (f"<tool_call>\n```json\n{CALL}\n```\n</tool_call>", "", VPN),
        # Qwen2.5-Coder-0.5B wrote its calls as XML named after the tool
        ("<recall_memory><query>VPN</query></recall_memory>", "", VPN),
        ("我查一下。\n<recall_memory>\n  <query>VPN</query>\n  <top_k>3</top_k>\n</recall_memory>", "我查一下。\n", [("recall_memory", {"query": "VPN", "top_k": 3}, "")]),
        ('<recall_memory>{"query": "VPN"}</recall_memory>', "", VPN),
        ("<recall_by_id><turn_id>b</turn_id></recall_by_id>", "", [("recall_by_id", {"turn_id": "b"}, "")]),
        ('functions.recall_memory:\n{"query": "VPN"}', "", VPN),
        ('好的。\nfunctions.recall_memory:{"query": "VPN"}\n然后', "好的。\n", VPN),
        ("functions.recall_memory:", "", [("recall_memory", {}, "")]),
        ("for example, functions.recall_memory: is a tool", "for example, functions.recall_memory: is a tool", []),
        ("f", "f", []),
        ('{"name": "delete_everything", "arguments": {}}', "", [("delete_everything", {}, "")]),
        ("Here is JSON: {\"a\": 1} and <b>bold</b>.", "Here is JSON: {\"a\": 1} and <b>bold</b>.", []),
        ('{"name": "Alice", "age": 3}', '{"name": "Alice", "age": 3}', []),
        ("```python\nx = {\"name\": \"a\", \"arguments\": 1}\n```\nDone.", "```python\nx = {\"name\": \"a\", \"arguments\": 1}\n```\nDone.", []),
        ("See [the docs](https://x.org) or `code`.", "See [the docs](https://x.org) or `code`.", []),
        ("普通的回答", "普通的回答", []),
        ("", "", []),
    ],
)  # fmt: skip
@pytest.mark.parametrize("step", [1, 3, 1000])
def test_calls_printed_as_text_in_every_form(
    text: str, shown: str, expected: list[tuple[str, dict[str, Any], str]], step: int
) -> None:
    sieve = CallSieve(TOOLS)
    released = [sieve.feed(text[i : i + step]) for i in range(0, len(text), step)]
    sifted = sieve.finish()
    assert "".join(released) + sifted.tail == shown
    assert [(c.name, c.arguments, c.error) for c in sifted.calls] == expected
    assert all(c.from_text for c in sifted.calls)


@pytest.mark.parametrize(
    "text",
    [
        '<tool_call>{"name": "recall_memory", "arguments": {"query": "VPN"]}</tool_call>',
        "<tool_call>recall_memory(query='VPN')</tool_call>",
        '<tools>{"name": recall_memory}</tools>',
        '```json\n{"name": "recall_memory", "arguments": {"query": "VPN"]}\n```',
        '{"name": "recall_memory", "arguments": {"query": "VPN"]}',
        "<recall_memory><query>VPN</recall_memory>",
    ],
)
def test_a_call_that_cannot_be_read_is_an_error_never_text(text: str) -> None:
    sieve = CallSieve(TOOLS)
    released = "".join(sieve.feed(text[i : i + 2]) for i in range(0, len(text), 2))
    sifted = sieve.finish()
    assert released + sifted.tail == ""
    assert len(sifted.calls) == 1 and sifted.calls[0].error
    assert "could not be read" in sifted.calls[0].error or "not valid JSON" in sifted.calls[0].error


def test_ordinary_text_is_released_as_it_streams() -> None:
    sieve = CallSieve(TOOLS)
    text = "Your VPN was set up with WireGuard on port 51820; see [docs](x) and `wg show`."
    released = [sieve.feed(ch) for ch in text]
    held_back = sum(1 for piece in released if not piece)
    assert held_back <= 4  # "[", "`" wait for the next character, nothing longer
    assert "".join(released) + sieve.finish().tail == text


def test_text_that_may_become_a_call_is_held_until_it_is_decided() -> None:
    sieve = CallSieve(TOOLS)
    assert sieve.feed("好的 <tool") == "好的 "
    assert sieve.feed("_call>{") == ""
    assert sieve.feed('"name": "recall_memory", "arguments": {}}</tool_call> 然后') == ""
    assert [c.name for c in sieve.finish().calls] == ["recall_memory"]
    other = CallSieve(TOOLS)
    assert other.feed("a <to") == "a "
    assert other.feed("ml>") == "<toml>"


def test_calls_in_text() -> None:
    assert [c.name for c in calls_in_text(f"<tool_call>{CALL}</tool_call>", TOOLS)] == ["recall_memory"]
    assert calls_in_text("普通的回答", TOOLS) == []


def test_a_dotenv_file_near_the_process_is_not_loaded_into_its_environment(tmp_path: Path) -> None:
    """litellm's import loads a ``.env`` found from the working directory up (its "DEV" mode): keys a
    user keeps there for other tools would silently become huichat's. The providers module turns it off."""
    (tmp_path / ".env").write_text("HUICHAT_DOTENV_PROBE=leaked\nOPENAI_API_KEY=sk-from-dotenv\n", encoding="utf-8")
    code = (
        "import os, huichat.providers.llm\n"
        "print(os.environ.get('HUICHAT_DOTENV_PROBE'), os.environ.get('OPENAI_API_KEY'))"
    )
    env = {k: v for k, v in os.environ.items() if k not in ("OPENAI_API_KEY", "LITELLM_MODE")}
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120, check=True
    )
    assert done.stdout.split() == ["None", "None"]

"""litellm's real HTTP path against the scripted OpenAI-compatible server on 127.0.0.1."""

from __future__ import annotations

from typing import Any

import pytest

from providers.config import ProviderConfig, ProvidersConfig
from providers.errors import ProviderError
from providers.events import ReplyDone, TextDelta
from providers.llm import LLMClient
from providers.toolcalls import calls_in_text, may_be_text_call
from tests.fakellm import FakeLLM, Reply, ToolCall

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


async def test_switching_provider_changes_the_model_of_the_next_request(fake_llm: FakeLLM) -> None:
    with FakeLLM() as other:
        client = _client(fake_llm, other)
        client.switch("backup")
        await _collect(client)
    assert other.requests[0]["model"] == "model-backup" and not fake_llm.requests
    with pytest.raises(ProviderError, match="unknown provider 'nope'"):
        client.switch("nope")


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


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('{"name": "recall_memory", "arguments": {"query": "VPN"}}', [("recall_memory", {"query": "VPN"})]),
        ('```json\n{"name": "recall_by_id", "arguments": {"turn_id": "a3f2c7"}}\n```', [("recall_by_id", {"turn_id": "a3f2c7"})]),
        ('<tool_call>\n{"name": "recall_memory", "arguments": "{\\"query\\": \\"部署\\"}"}\n</tool_call>', [("recall_memory", {"query": "部署"})]),
        ('[{"name": "recall_memory", "parameters": {"query": "a"}}, {"function": {"name": "recall_by_id", "arguments": {"turn_id": "b"}}}]',
         [("recall_memory", {"query": "a"}), ("recall_by_id", {"turn_id": "b"})]),
        ('{"name": "delete_everything", "arguments": {}}', []),
        ("Here is JSON: {\"name\": \"recall_memory\"}", []),
        ('{"answer": 42}', []),
        ("普通的回答", []),
    ],
)  # fmt: skip
def test_tool_calls_printed_as_text(text: str, expected: list[tuple[str, dict[str, Any]]]) -> None:
    calls = calls_in_text(text, TOOLS)
    assert [(c.name, c.arguments) for c in calls] == expected
    assert all(c.from_text for c in calls)


@pytest.mark.parametrize(
    ("prefix", "maybe"),
    [
        ("", True),
        ("  {", True),
        ("```", True),
        ("```js", True),
        ("<tool", True),
        ("Hello", False),
        ("```python", False),
        ("我", False),
    ],
)
def test_holding_back_text_that_may_be_a_call(prefix: str, maybe: bool) -> None:
    assert may_be_text_call(prefix) is maybe

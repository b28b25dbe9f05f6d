"""Chat through the real server process: the official openai client, raw SSE, takeover memory, continuity."""

from __future__ import annotations

import json
import signal
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx
import openai
import pytest

from benchmarks.fakellm import FakeLLM
from huichat.app.users.keys import KeyRing
from tests.serve.conftest import Server, free_port, model, start_server, stop_server, write_config

pytestmark = pytest.mark.slow


def _sse(response: httpx.Response) -> list[dict[str, object] | str]:
    events: list[dict[str, object] | str] = []
    for line in response.iter_lines():
        if line.startswith("data: "):
            data = line.removeprefix("data: ")
            events.append(data if data == "[DONE]" else json.loads(data))
    return events


def test_the_openai_client_chats_plain_and_streaming(server: Server) -> None:
    client = openai.OpenAI(base_url=f"{server.url}/v1", api_key=server.key("carol"), max_retries=0)
    assert [m.id for m in client.models.list()] == ["fake", "other"]
    reply = client.chat.completions.create(model="fake", messages=[{"role": "user", "content": "你好，我是 Carol"}])
    assert reply.choices[0].message.content == "收到：你好，我是 Carol"
    assert reply.choices[0].finish_reason == "stop"
    first = reply.model_extra["huichat"]["turn_id"]  # type: ignore[index]
    stream = client.chat.completions.create(
        model="fake",
        stream=True,
        messages=[
            {"role": "user", "content": "你好，我是 Carol"},
            {"role": "assistant", "content": "收到：你好，我是 Carol"},
            {"role": "user", "content": "第二个问题"},
        ],
    )
    pieces = [chunk.choices[0].delta.content or "" for chunk in stream if chunk.choices]
    assert "".join(pieces) == "收到：第二个问题"
    with server.client(server.key("carol")) as http:
        second = http.post("/v1/memory/search", json={"query": "第二个问题", "max_results": 1}).json()["results"][0]
    # the client's history led to the same server session: the new turn links to the first
    assert second["prev_id"] == first


def test_each_request_is_answered_by_the_model_it_names_also_in_a_continued_conversation(server: Server) -> None:
    client = openai.OpenAI(base_url=f"{server.url}/v1", api_key=server.key("oscar"), max_retries=0)
    first = client.chat.completions.create(model="fake", messages=[{"role": "user", "content": "第一个问题"}])
    assert server.llm.requests[-1]["model"] == "fake-model"
    said = [{"role": "user", "content": "第一个问题"}, {"role": "assistant", "content": "收到：第一个问题"}]
    second = client.chat.completions.create(model="other", messages=[*said, {"role": "user", "content": "第二个"}])
    assert server.llm.requests[-1]["model"] == "other-model"
    assert second.model_extra["huichat"]["session_id"] == first.model_extra["huichat"]["session_id"]  # type: ignore[index]


def test_a_conversation_continues_its_session_after_the_server_restarts(tmp_path: Path) -> None:
    # a client that sends the whole history went on in a new session after every restart (a deploy)
    said = [{"role": "user", "content": "第一个问题"}]
    answers = []
    with FakeLLM(responder=model) as llm:
        port = free_port()
        config = write_config(tmp_path, llm, port)
        key = KeyRing(tmp_path / "data").create("rita", datetime.now(UTC))[1]
        for question in ("第二个问题", "第三个问题"):
            process = start_server(config, port, tmp_path / "serve.log")
            try:
                with httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=60) as http:
                    reply = http.post(
                        "/v1/chat/completions",
                        json={"model": "fake", "messages": said},
                        headers={"Authorization": f"Bearer {key}"},
                    ).json()
            finally:
                stop_server(process)
            answers.append(reply["huichat"])
            said += [{"role": "assistant", "content": reply["choices"][0]["message"]["content"]}]
            said += [{"role": "user", "content": question}]
    assert answers[1]["session_id"] == answers[0]["session_id"]
    saved = tmp_path / "data" / "users" / "rita" / "serve-conversations.jsonl"
    assert oct(saved.stat().st_mode & 0o777) == "0o600" and "第一个问题" not in saved.read_text(encoding="utf-8")


def test_raw_sse_has_the_standard_chunks_and_done(server: Server) -> None:
    body = {"model": "fake", "stream": True, "messages": [{"role": "user", "content": "streaming please"}]}
    with (
        server.client(server.key("dave")) as http,
        http.stream("POST", "/v1/chat/completions", json=body) as response,
    ):
        assert response.status_code == 200
        assert response.headers["content-type"].startswith("text/event-stream")
        assert response.headers["x-huichat-memory"] == "ok"
        events = _sse(response)
    assert events[-1] == "[DONE]"
    chunks = [e for e in events if isinstance(e, dict)]
    assert all(c["object"] == "chat.completion.chunk" for c in chunks)
    assert chunks[0]["choices"][0]["delta"] == {"role": "assistant", "content": ""}  # type: ignore[index]
    assert chunks[-1]["choices"][0]["finish_reason"] == "stop"  # type: ignore[index]
    text = "".join(str(c["choices"][0]["delta"].get("content", "")) for c in chunks)  # type: ignore[index]
    assert text == "收到：streaming please"
    assert chunks[-1]["huichat"]["turn_id"]  # type: ignore[index]


def test_takeover_mode_gives_any_client_the_memory_tools(server: Server) -> None:
    key = server.key("erin")
    client = openai.OpenAI(base_url=f"{server.url}/v1", api_key=key, max_retries=0)
    told = client.chat.completions.create(model="fake", messages=[{"role": "user", "content": "我的猫叫豆豆"}])
    told_id = told.model_extra["huichat"]["turn_id"]  # type: ignore[index]
    asked = client.chat.completions.create(model="fake", messages=[{"role": "user", "content": "remember 猫叫什么"}])
    assert asked.choices[0].message.content == f"记得：{told_id}"
    assert asked.model_extra["huichat"]["recalled"] == [told_id]  # type: ignore[index]
    tool_request = next(r for r in server.llm.requests if r["messages"][-1].get("role") == "tool")
    assert {t["function"]["name"] for t in tool_request["tools"]} == {"recall_memory", "recall_by_id"}


def test_a_client_that_hangs_up_mid_stream_loses_no_turn(server: Server) -> None:
    key = server.key("frank")
    body = {"model": "fake", "stream": True, "messages": [{"role": "user", "content": "slow story"}]}
    with server.client(key) as http, http.stream("POST", "/v1/chat/completions", json=body) as response:
        next(response.iter_lines())
    with server.client(key) as http:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            sessions = http.get("/v1/memory/sessions").json()["sessions"]
            if sessions:
                break
            time.sleep(0.3)
        assert sessions and sessions[0]["first_message"] == "slow story"
        text = http.get("/v1/memory/file", params={"path": sessions[0]["session_file"]}).text
    assert "一二三四五六七八九十" * 3 in text


def test_an_explicit_session_header_continues_that_session(server: Server) -> None:
    with server.client(server.key("gina")) as http:
        first = http.post(
            "/v1/chat/completions", json={"model": "fake", "messages": [{"role": "user", "content": "a"}]}
        )
        session = first.headers["x-huichat-session"]
        second = http.post(
            "/v1/chat/completions",
            json={"model": "fake", "messages": [{"role": "user", "content": "b"}]},
            headers={"X-Huichat-Session": session},
        )
        assert second.json()["huichat"]["session_id"] == session
        unknown = http.post(
            "/v1/chat/completions",
            json={"model": "fake", "messages": [{"role": "user", "content": "c"}]},
            headers={"X-Huichat-Session": "20200101-000000-none"},
        )
        malformed = http.post(
            "/v1/chat/completions",
            json={"model": "fake", "messages": [{"role": "user", "content": "d"}]},
            headers={"X-Huichat-Session": "../../etc"},
        )
    assert unknown.status_code == 404
    # a malformed id is the client's mistake, as a malformed turn id is: 400, not "not found"
    assert malformed.status_code == 400 and malformed.json()["error"]["type"] == "invalid_request_error"
    assert malformed.json()["error"]["message"] == "'../../etc' is not a session id (X-Huichat-Session)"


@pytest.mark.parametrize(
    ("body", "status", "words"),
    [
        ({"model": "nope", "messages": [{"role": "user", "content": "x"}]}, 404, "does not exist"),
        ({"model": "fake", "messages": []}, 400, "messages"),
        ({"model": "fake", "messages": [{"role": "assistant", "content": "x"}]}, 400, "last message"),
        ({"model": "fake", "messages": [{"role": "user", "content": "x" * 3000}]}, 413, "at most 1000 characters"),
    ],
)
def test_bad_chat_requests_get_one_clear_line(server: Server, body: dict[str, object], status: int, words: str) -> None:
    with server.client(server.key("hank")) as http:
        response = http.post("/v1/chat/completions", json=body)
    assert response.status_code == status
    assert words in response.json()["error"]["message"]


_WEATHER = {"type": "function", "function": {"name": "get_weather", "parameters": {"type": "object", "properties": {}}}}


@pytest.mark.parametrize(
    ("options", "words"),
    [
        ({"n": 2}, "n is 2: huichat answers with one choice"),
        ({"tools": [_WEATHER]}, "tools are not supported"),
        ({"tool_choice": "required"}, "tool_choice can only be 'none' or 'auto'"),
    ],
)
def test_options_huichat_cannot_honour_are_refused_not_ignored(
    server: Server, options: dict[str, Any], words: str
) -> None:
    client = openai.OpenAI(base_url=f"{server.url}/v1", api_key=server.key("ivan"), max_retries=0)
    messages: list[Any] = [{"role": "user", "content": "what is the weather?"}]
    with pytest.raises(openai.BadRequestError) as refused:
        client.chat.completions.create(model="fake", messages=messages, **options)
    assert words in refused.value.message
    # sampling options are the provider's: accepted, and the answer comes
    answered = client.chat.completions.create(
        model="fake", messages=messages, max_tokens=50, temperature=0.2, tool_choice="auto", n=1
    )
    assert len(answered.choices) == 1 and answered.choices[0].message.content


def test_a_message_longer_than_a_query_may_be_is_answered_its_recall_reading_its_start(server: Server) -> None:
    with server.client(server.key("hank")) as http:
        body = {"model": "fake", "messages": [{"role": "user", "content": "部署 " + "a long message " * 60}]}
        response = http.post("/v1/chat/completions", json=body)
    assert response.status_code == 200, response.text
    assert response.json()["choices"][0]["message"]["content"]


def test_the_openai_user_field_naming_another_user_says_where_it_came_from(server: Server) -> None:
    # many clients fill OpenAI's 'user' with their own end-user id on every request
    messages: list[Any] = [{"role": "user", "content": "hello"}]
    own = openai.OpenAI(base_url=f"{server.url}/v1", api_key=server.key("judy"), max_retries=0)
    with pytest.raises(openai.PermissionDeniedError) as refused:
        own.chat.completions.create(model="fake", messages=messages, user="alice")
    assert _said(refused.value) == (
        "this key belongs to user 'judy' and cannot act for user 'alice' (named by the body's 'user' field): "
        "leave it out, or use an admin key to keep one memory per user"
    )
    admin = openai.OpenAI(base_url=f"{server.url}/v1", api_key=server.key("root", admin=True), max_retries=0)
    with pytest.raises(openai.BadRequestError) as bad:
        admin.chat.completions.create(model="fake", messages=messages, user="Alice@example.com")
    assert _said(bad.value).startswith("the body's 'user' field: 'Alice@example.com' is not a user name")


def _said(error: openai.APIStatusError) -> str:
    """The message of an error answer, as the openai client read it from the body."""
    assert isinstance(error.body, dict)
    return str(error.body["message"])


def test_a_stream_in_flight_when_the_server_stops_ends_saying_so_and_the_log_has_no_traceback(tmp_path: Path) -> None:
    with FakeLLM(responder=model) as llm:
        port = free_port()
        config = write_config(tmp_path, llm, port)
        key = KeyRing(tmp_path / "data").create("default", datetime.now(UTC), admin=True)[1]
        log = tmp_path / "serve.log"
        process = start_server(config, port, log)
        events: list[str] = []
        try:
            body = {"model": "fake", "stream": True, "messages": [{"role": "user", "content": "slow goodbye"}]}
            with httpx.stream(
                "POST",
                f"http://127.0.0.1:{port}/v1/chat/completions",
                json=body,
                headers={"Authorization": f"Bearer {key}"},
                timeout=30,
            ) as response:
                for line in response.iter_lines():
                    if line.startswith("data: "):
                        events.append(line.removeprefix("data: "))
                    if len(events) == 3:
                        process.send_signal(signal.SIGINT)  # Ctrl-C while the reply streams
            process.wait(timeout=15)
        finally:
            stop_server(process)
    assert events[-1] == "[DONE]"
    error = json.loads(events[-2])["error"]
    assert error["code"] == 503 and error["message"].startswith("the server is stopping")
    written = log.read_text(errors="replace")
    assert "Traceback" not in written and "CancelledError" not in written, written
    # the question is kept, as a stopped turn
    assert "slow goodbye" in "".join(p.read_text() for p in (tmp_path / "data" / "sessions").rglob("*.md"))


def test_a_stream_asked_to_include_usage_ends_with_a_usage_chunk(server: Server) -> None:
    client = openai.OpenAI(base_url=f"{server.url}/v1", api_key=server.key("ursula"), max_retries=0)
    messages: list[Any] = [{"role": "user", "content": "how many tokens"}]
    chunks = list(
        client.chat.completions.create(
            model="fake", messages=messages, stream=True, stream_options={"include_usage": True}
        )
    )
    *answer, last = chunks
    assert last.choices == [] and last.usage is not None
    assert last.usage.total_tokens == last.usage.prompt_tokens + last.usage.completion_tokens > 0
    assert all(c.usage is None for c in answer) and answer[-1].choices[0].finish_reason == "stop"
    # not asked: no such chunk, as before
    plain = list(client.chat.completions.create(model="fake", messages=messages, stream=True))
    assert plain[-1].choices and plain[-1].choices[0].finish_reason == "stop"


def test_options_sent_as_null_mean_their_default_as_openai_reads_them(server: Server) -> None:
    # clients that serialise every field send null for those the user left unset
    nulls = {"n": None, "stream": None, "temperature": None, "max_tokens": None, "user": None, "tools": None}
    body = {"model": "fake", "messages": [{"role": "user", "content": "all null"}], **nulls}
    with server.client(server.key("vera")) as http:
        answered = http.post("/v1/chat/completions", json=body)
    assert answered.status_code == 200, answered.text
    assert answered.json()["choices"][0]["message"]["content"]

"""Every error the service answers is JSON in the OpenAI shape, and a kept-alive connection survives it."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import httpx
import pytest
from fastapi.testclient import TestClient

from benchmarks.fakellm import FakeLLM
from huichat.app.config import load_config
from huichat.app.serve.app import create_app
from huichat.app.users.keys import KeyRing
from huichat.app.wiring import runtime
from tests.serve.conftest import ROOT, Server, free_port, model, start_server, stop_server, write_config


@pytest.fixture(scope="module")
def hurried(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    """A server whose searches must finish in a microsecond: every one passes its deadline (a millisecond was
    enough for a search of this empty memory on a fast machine, and the test failed there)."""
    folder = tmp_path_factory.mktemp("hurried")
    with FakeLLM(responder=model) as llm:
        port = free_port()
        config = write_config(folder, llm, port, retriever="  search_timeout_seconds: 0.000001\n")
        keys = KeyRing(folder / "data")
        keys.create("default", datetime.now(UTC), admin=True)
        log = folder / "serve.log"
        process = start_server(config, port, log)
        try:
            yield Server(f"http://127.0.0.1:{port}", folder / "data", config, keys, llm, log)
        finally:
            stop_server(process)


def _exchange(url: str, requests: list[bytes]) -> list[tuple[int, dict[str, str], bytes]]:
    """Send ``requests`` one after another on ONE connection; each response as (status, headers, body)."""
    host, port = url.removeprefix("http://").split(":")
    answers = []
    with socket.create_connection((host, int(port)), timeout=60) as connection:
        reader = connection.makefile("rb")
        for request in requests:
            connection.sendall(request)
            status = int(reader.readline().split()[1])
            headers = {}
            while (line := reader.readline().strip()) != b"":
                name, _, value = line.decode().partition(":")
                headers[name.strip().lower()] = value.strip()
            answers.append((status, headers, reader.read(int(headers["content-length"]))))
    return answers


def _post(path: str, key: str, body: dict[str, object]) -> bytes:
    payload = json.dumps(body).encode()
    return (
        f"POST {path} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {key}\r\nContent-Type: application/json\r\n"
        f"Content-Length: {len(payload)}\r\n\r\n"
    ).encode() + payload


def _get(path: str, key: str) -> bytes:
    return f"GET {path} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {key}\r\n\r\n".encode()


def test_a_search_past_its_deadline_is_a_json_504_with_retry_after_on_a_kept_alive_connection(
    hurried: Server,
) -> None:
    key = hurried.key("default")
    search = _post("/v1/memory/search", key, {"query": "部署 deadline"})
    answers = _exchange(hurried.url, [search, search, _get("/v1/memory/status", key)])
    for status, headers, body in answers[:2]:
        assert status == 504, body
        error = json.loads(body)["error"]
        assert error["code"] == 504 and error["type"] == "timeout_error" and "longer than" in error["message"]
        assert int(headers["retry-after"]) >= 1 and headers.get("connection") != "close"
    assert answers[2][0] == 200 and json.loads(answers[2][2])["memory"] == "ok"


def test_a_malformed_turn_id_is_400_and_an_unknown_one_404(server: Server) -> None:
    with server.client(server.key("default")) as client:
        bad = client.get("/v1/memory/turn/not-an-id!")
        assert bad.status_code == 400
        assert bad.json()["error"]["type"] == "invalid_request_error" and "turn id" in bad.json()["error"]["message"]
        unknown = client.get("/v1/memory/turn/zz99zz")
        assert unknown.status_code == 404 and unknown.json()["error"]["code"] == 404


def test_a_body_that_is_not_json_says_so(server: Server) -> None:
    # curl -d without -H 'Content-Type: application/json', or a JSON cut short: the message names
    # what to fix, not a location ('9') and a parser's words
    with server.client(server.key("default")) as client:
        broken = client.post("/v1/memory/search", content=b'{"query":', headers={"Content-Type": "application/json"})
        assert broken.status_code == 400
        assert broken.json()["error"]["message"].startswith("invalid request: the body is not valid JSON (")
        assert "at character 9" in broken.json()["error"]["message"]
        form = client.post(
            "/v1/memory/search",
            content=b'{"query": "x"}',
            headers={"Content-Type": "application/x-www-form-urlencoded"},
        )
        assert form.status_code == 400
        assert "Content-Type: application/json" in form.json()["error"]["message"]
        not_an_object = client.post("/v1/memory/search", json=[1, 2])
        assert not_an_object.status_code == 400 and "Content-Type" not in not_an_object.json()["error"]["message"]


def test_an_unexpected_failure_is_a_json_500_naming_no_internals(tmp_path: Path) -> None:
    config = tmp_path / "config.yaml"
    config.write_text(
        f"embedding:\n  model_path: hash\nstorage:\n  data_dir: {tmp_path / 'data'}\n"
        "serve:\n  allow_loopback_without_keys: true\n",
        encoding="utf-8",
    )
    app = create_app(runtime(load_config(config)))

    @app.get("/boom")
    async def boom() -> None:
        raise RuntimeError("secret internals /etc/shadow")

    with TestClient(app, raise_server_exceptions=False, client=("127.0.0.1", 5000)) as client:
        answer = client.get("/boom")
    assert answer.status_code == 500 and answer.headers["content-type"] == "application/json"
    error = answer.json()["error"]
    assert error == {
        "message": "internal error (RuntimeError); the server's log has the details",
        "type": "api_error",
        "code": 500,
    }


def test_a_query_over_the_limit_is_a_json_413_at_once(server: Server) -> None:
    with server.client(server.key("default")) as client:
        too_long = client.post("/v1/memory/search", json={"query": "x" * 3000})
        assert too_long.status_code == 413
        error = too_long.json()["error"]
        assert error["code"] == 413 and "the query is 3000 characters long; at most 100" in error["message"]
        assert client.post("/v1/memory/search", json={"query": "部署"}).status_code == 200


def test_a_search_field_the_api_does_not_have_is_named_not_ignored(server: Server) -> None:
    """``top_k`` (other memory APIs' name for ``max_results``) once silently gave 5 hits."""
    with server.client(server.key("default")) as client:
        answer = client.post("/v1/memory/search", json={"query": "部署", "top_k": 20})
    assert answer.status_code == 400
    assert answer.json()["error"]["message"] == "invalid request: top_k: Extra inputs are not permitted"


def _unanswered(url: str, request: bytes) -> None:
    """Send ``request``; the server is stopped before it answers."""
    with contextlib.suppress(OSError, ValueError, IndexError, KeyError):
        _exchange(url, [request])


@pytest.mark.parametrize("stop", [signal.SIGTERM, signal.SIGINT])
def test_sigterm_or_ctrl_c_stops_the_server_at_once_with_a_search_in_flight(tmp_path: Path, stop: int) -> None:
    flag = tmp_path / "stuck"
    with FakeLLM(responder=model) as llm:
        port = free_port()
        config = write_config(tmp_path, llm, port, retriever="  search_timeout_seconds: 300\n")
        key = KeyRing(tmp_path / "data").create("default", datetime.now(UTC), admin=True)[1]
        env = {"HUICHAT_STUCK_FLAG": str(flag)}
        process = start_server(config, port, tmp_path / "serve.log", "tests.serve.stuck_server", env)
        try:
            search = _post("/v1/memory/search", key, {"query": "STUCK"})
            threading.Thread(target=_unanswered, args=(f"http://127.0.0.1:{port}", search), daemon=True).start()
            deadline = time.monotonic() + 60
            while not flag.exists() and time.monotonic() < deadline:
                time.sleep(0.1)
            assert flag.exists()
            process.send_signal(stop)
            process.wait(timeout=5)  # not the search's 300 s deadline
        finally:
            stop_server(process)


def test_searches_and_health_checks_are_answered_while_the_llm_client_is_built(tmp_path: Path) -> None:
    # building the client imports litellm (seconds of CPU): it runs in a thread from the server's
    # start, and only a chat waits for it — on the event loop it held every request of the server
    building, release = tmp_path / "building", tmp_path / "release"
    with FakeLLM(responder=model) as llm:
        port = free_port()
        config = write_config(tmp_path, llm, port)
        key = KeyRing(tmp_path / "data").create("default", datetime.now(UTC), admin=True)[1]
        env = {"HUICHAT_LLM_BUILDING": str(building), "HUICHAT_LLM_RELEASE": str(release)}
        process = start_server(config, port, tmp_path / "serve.log", "tests.serve.slow_llm_server", env)
        url = f"http://127.0.0.1:{port}"
        headers = {"Authorization": f"Bearer {key}"}
        answers: list[httpx.Response] = []
        try:
            body = {"model": "fake", "messages": [{"role": "user", "content": "hello"}]}
            chat = threading.Thread(
                target=lambda: answers.append(
                    httpx.post(f"{url}/v1/chat/completions", json=body, headers=headers, timeout=300)
                )
            )
            chat.start()
            deadline = time.monotonic() + 120
            while not building.exists() and time.monotonic() < deadline:
                time.sleep(0.05)
            assert building.exists()
            assert httpx.get(f"{url}/healthz", timeout=60).status_code == 200
            search = httpx.post(f"{url}/v1/memory/search", json={"query": "hello"}, headers=headers, timeout=60)
            assert search.status_code == 200
            assert not answers  # the chat waits for its client
            release.touch()
            chat.join(timeout=120)
            assert answers and answers[0].status_code == 200
            assert answers[0].json()["choices"][0]["message"]["content"] == "收到：hello"
        finally:
            release.touch()
            stop_server(process)


def _serve_once(config: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "HF_HUB_OFFLINE": "1"}
    command = [sys.executable, "-m", "huichat", "--config", str(config), "serve", *args]
    return subprocess.run(command, capture_output=True, text=True, env=env, cwd=ROOT, timeout=120)


def test_a_port_that_cannot_be_listened_on_is_one_line_before_any_banner(tmp_path: Path) -> None:
    # the banner said "huichat serve: http://127.0.0.1:PORT" and then uvicorn failed (a busy
    # port), or a traceback followed it (--port 99999)
    config = tmp_path / "config.yaml"
    config.write_text(f"embedding:\n  model_path: hash\nstorage:\n  data_dir: {tmp_path / 'data'}\n", encoding="utf-8")
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        taken = _serve_once(config, "--port", str(port))
    assert taken.returncode == 1 and taken.stdout == ""
    assert taken.stderr.strip() == f"huichat: error: cannot listen on 127.0.0.1:{port}: Address already in use"
    out_of_range = _serve_once(config, "--port", "99999")
    assert out_of_range.returncode == 2 and out_of_range.stdout == ""
    assert "--port: 99999 is not a port (1-65535)" in out_of_range.stderr
    assert "Traceback" not in out_of_range.stderr


def test_a_lone_surrogate_in_a_body_is_one_line_400_and_a_pair_is_text(server: Server) -> None:
    # "\ud800" is valid JSON but no text: it failed as a 500, or as "the provider is unavailable"
    lone = [
        ("/v1/memory/search", rb'{"query": "abc \ud800"}'),
        ("/v1/chat/completions", rb'{"model": "fake", "messages": [{"role": "user", "content": "x \uDBFF y"}]}'),
        (
            "/v1/chat/completions",
            rb'{"model": "fake", "user": "\udc00", "messages": [{"role": "user", "content": "x"}]}',
        ),
    ]
    with server.client(server.key("tara")) as http:
        for path, body in lone:
            refused = http.post(path, content=body, headers={"Content-Type": "application/json"})
            assert refused.status_code == 400, refused.text
            assert refused.json()["error"]["message"].startswith("the body holds a lone UTF-16 surrogate")
        # an emoji spelled as its escaped pair, and an escaped backslash before 'ud800', are text
        for text in (rb"smile \ud83d\ude00", rb"C:\\ud800 folder"):
            said = b'{"model": "fake", "messages": [{"role": "user", "content": "' + text + b'"}]}'
            answered = http.post("/v1/chat/completions", content=said, headers={"Content-Type": "application/json"})
            assert answered.status_code == 200, answered.text


def test_the_health_check_answers_head_as_well_as_get(server: Server) -> None:
    # uptime monitors and some load balancers ask with HEAD; 405 read as "down"
    assert httpx.head(f"{server.url}/healthz", timeout=60).status_code == 200
    assert httpx.get(f"{server.url}/healthz", timeout=60).json() == {"status": "ok"}

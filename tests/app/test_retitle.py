"""``huichat retitle`` as a real process: bounded, resumable, without a provider, interruptible."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import threading
import time
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest

from benchmarks.fakellm import FakeLLM, Reply
from huichat.app.config import load_config
from huichat.app.wiring import runtime
from huichat.memory.turns import Message, TurnDraft
from tests.app.test_cli import ROOT, _config, _huichat
from tests.app.test_titles import is_title_request
from tests.conftest import NOW

SESSIONS = [
    ("你好！我上周三下午在杭州部署了 Qwen，顺便问下 VPN 晚上总断", "把 WireGuard keepalive 设成 25 秒。"),
    ("Hi, what should I cook for six people on Friday?", "A big lasagne and a salad."),
    ("本地模型部署用什么工具？", "用 llama.cpp。"),
]
"""Oldest first; each one turn."""


def _title_for(body: dict[str, Any]) -> Reply:
    asked = str(body["messages"][-1]["content"])
    if "lasagne" in asked:
        return Reply(text='"Dinner for six on Friday"')
    return Reply(text="标题：VPN 断线" if "VPN" in asked else "本地模型部署工具")


def _store(tmp_path: Path, providers: str = "") -> Path:
    config = _config(tmp_path, providers)
    kernel = runtime(load_config(config)).open_kernel()
    for days, (user, assistant) in zip((3, 2, 1), SESSIONS, strict=True):
        session = kernel.new_session(NOW - timedelta(days=days))
        draft = TurnDraft((Message("user", user), Message("assistant", assistant)), NOW - timedelta(days=days))
        kernel.append_turn(session, draft)
    kernel.close()
    return config


def _provider(server: FakeLLM) -> str:
    return f"providers:\n  max_retries: 0\n  named:\n    fake: {{model: openai/fake, api_base: '{server.base_url}'}}\n"


def _titles(config: Path) -> list[tuple[str, str]]:
    listed = json.loads(_huichat(config, "sessions", "--json").stdout)
    return [(s["title"], s["title_source"]) for s in listed]


def test_retitle_is_bounded_and_resumable_and_the_title_reaches_recall(tmp_path: Path) -> None:
    with FakeLLM(responder=_title_for) as server:
        config = _store(tmp_path, _provider(server))
        first = _huichat(config, "retitle", "--limit", "2")
        assert first.returncode == 0, first.stderr
        assert "titling 2 sessions with fake · openai/fake" in first.stdout
        assert "titled 2 of 2 sessions (2 by the model, 0 with the local fallback)" in first.stdout
        assert "1 session left: run huichat retitle again to continue" in first.stdout
        assert _titles(config) == [
            ("本地模型部署工具", "model"),
            ("Dinner for six on Friday", "model"),
            ("", ""),
        ]
        assert all("tools" not in r and is_title_request(r) for r in server.requests)
        english = next(r for r in server.requests if "lasagne" in r["messages"][-1]["content"])
        assert "in English" in english["messages"][0]["content"]

        second = _huichat(config, "retitle")
        assert "titling 1 session " in second.stdout and len(server.requests) == 3
        assert _titles(config)[2] == ("VPN 断线", "model")
        assert "nothing to retitle" in _huichat(config, "retitle").stdout
        forced = _huichat(config, "retitle", "--force", "--limit", "1")
        assert "titled 0 of 1 session (0 by the model, 0 with the local fallback, 1 unchanged)" in forced.stdout

        found = _huichat(config, "recall", "WireGuard keepalive", "--top-k", "1")
        assert "| 话题: VPN 断线 |" in found.stdout
        assert "VPN 断线" in _huichat(config, "sessions").stdout


def test_retitle_without_a_provider_uses_the_local_fallback_and_says_so(tmp_path: Path) -> None:
    config = _store(tmp_path)
    done = _huichat(config, "retitle")
    assert done.returncode == 0, done.stderr
    assert "titling 3 sessions with the local fallback (no provider is configured)" in done.stdout
    assert "titled 3 of 3 sessions (3 with the local fallback)" in done.stdout
    assert _titles(config) == [
        ("本地模型部署用什么工具", "local"),
        ("what should I cook for…", "local"),
        ("我上周三下午在杭州部署了 Qwen", "local"),
    ]
    assert "nothing to retitle" in _huichat(config, "retitle").stdout


def test_a_failing_provider_falls_back_to_local_titles(tmp_path: Path) -> None:
    with FakeLLM(responder=lambda _body: Reply(status=500, error_message="overloaded")) as server:
        config = _store(tmp_path, _provider(server))
        done = _huichat(config, "retitle")
        assert done.returncode == 0, done.stderr
        assert "titled 3 of 3 sessions (0 by the model, 3 with the local fallback)" in done.stdout
        assert "the model failed" in done.stderr and "Traceback" not in done.stderr
        assert len(server.requests) == 3  # it gives up asking after three failures in a row
        assert {source for _, source in _titles(config)} == {"local"}


@pytest.mark.slow
def test_ctrl_c_leaves_every_session_titled_or_as_it_was(tmp_path: Path) -> None:
    released = threading.Event()

    def respond(body: dict[str, Any]) -> Reply:
        if "lasagne" in str(body["messages"][-1]["content"]):
            released.wait(60)  # the second session's title hangs until the run is interrupted
        return _title_for(body)

    with FakeLLM(responder=respond) as server:
        config = _store(tmp_path, _provider(server))
        process = subprocess.Popen(
            [sys.executable, "-m", "huichat", "--config", str(config), "retitle"],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            cwd=ROOT,
            env={"HOME": str(config.parent), "PATH": "/usr/bin:/bin", "HF_HUB_OFFLINE": "1"},
        )
        for _ in range(600):
            if len(server.requests) == 2 or process.poll() is not None:
                break
            time.sleep(0.1)
        process.send_signal(signal.SIGINT)
        out, err = process.communicate(timeout=60)
        released.set()
        assert process.returncode == 130, err
        assert "stopped: titled 1 of 1 session" in out and "Traceback" not in err
        assert "2 sessions left" in out

        kernel = runtime(load_config(config)).open_kernel(reconcile=False)
        report = kernel.reconcile()
        kernel.close()
        assert (report.added, report.updated, report.removed, report.retopicked) == (0, 0, 0, 0)
        assert [source for _, source in _titles(config)] == ["model", "", ""]
        again = _huichat(config, "retitle")
        assert "titling 2 sessions" in again.stdout and [s for _, s in _titles(config)] == ["model"] * 3


def test_retitle_with_a_title_renames_one_session_and_the_model_leaves_it(tmp_path: Path) -> None:
    with FakeLLM(responder=_title_for) as server:
        config = _store(tmp_path, _provider(server))
        listed = json.loads(_huichat(config, "sessions", "--json").stdout)
        dinner = listed[1]["session_id"]  # most recent first: the dinner session is the second

        done = _huichat(config, "retitle", dinner, "--title", "  Friday dinner ")
        assert done.returncode == 0, done.stderr
        assert done.stdout.strip() == f"session {dinner} is now titled: Friday dinner"
        assert _titles(config)[1] == ("Friday dinner", "user") and not server.requests

        forced = _huichat(config, "retitle", "--force")
        assert "titling 2 sessions" in forced.stdout, forced.stdout
        assert _titles(config) == [("本地模型部署工具", "model"), ("Friday dinner", "user"), ("VPN 断线", "model")]
        found = _huichat(config, "recall", "lasagne salad", "--top-k", "1")
        assert "| 话题: Friday dinner |" in found.stdout

        empty = _huichat(config, "retitle", dinner, "--title", "  ")
        assert empty.returncode != 0 and "a session's title cannot be empty" in empty.stderr
        assert "Traceback" not in empty.stderr
        unknown = _huichat(config, "retitle", "nope", "--title", "x")
        assert unknown.returncode != 0 and "no session 'nope'" in unknown.stderr
        alone = _huichat(config, "retitle", dinner)
        assert alone.returncode != 0 and "--title" in alone.stderr
        assert _titles(config)[1] == ("Friday dinner", "user")

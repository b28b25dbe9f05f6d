"""End to end: the installed ``huichat`` in a real terminal (tmux), against the fake server."""

from __future__ import annotations

import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from tests.fakellm import FakeLLM, Reply

pytestmark = [pytest.mark.e2e, pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")]

HUICHAT = Path(sys.executable).with_name("huichat")


def _pane(session: str) -> str:
    return subprocess.run(
        ["tmux", "capture-pane", "-p", "-t", session], capture_output=True, text=True, check=False
    ).stdout


def _wait_for(session: str, needle: str, seconds: float = 60.0) -> str:
    deadline = time.monotonic() + seconds
    screen = ""
    while time.monotonic() < deadline:
        screen = _pane(session)
        if needle in screen:
            return screen
        time.sleep(0.25)
    raise AssertionError(f"{needle!r} never appeared; the screen was:\n{screen}")


def _answer(body: dict[str, Any]) -> Reply:
    question = body["messages"][-1]["content"]
    return Reply(text=f"收到：{question} 答案是四十二。", chunk_chars=2)


def test_a_chinese_question_is_answered_in_a_real_terminal(tmp_path: Path) -> None:
    assert HUICHAT.exists(), "huichat is not installed in this environment"
    session = f"huichat-e2e-{int(time.time() * 1000) % 100000}"
    with FakeLLM(responder=_answer) as server:
        config = tmp_path / "config.yaml"
        config.write_text(
            f"embedding:\n  model_path: hash\nstorage:\n  data_dir: {tmp_path / 'data'}\n"
            f"providers:\n  named:\n    fake: {{model: openai/fake-e2e, api_base: '{server.base_url}'}}\n",
            encoding="utf-8",
        )
        command = f"env HOME={tmp_path} HF_HUB_OFFLINE=1 TERM=xterm-256color {HUICHAT} --config {config}"
        subprocess.run(["tmux", "new-session", "-d", "-s", session, "-x", "120", "-y", "36", command], check=True)
        try:
            _wait_for(session, "memory: 0 turns")
            subprocess.run(["tmux", "send-keys", "-t", session, "-l", "生命的意义是什么？"], check=True)
            subprocess.run(["tmux", "send-keys", "-t", session, "Enter"], check=True)
            screen = _wait_for(session, "答案是四十二")
            assert "生命的意义是什么" in screen
            screen = _wait_for(session, "memory: 1 turn ")
            assert server.requests[0]["messages"][-1]["content"] == "生命的意义是什么？"
            subprocess.run(["tmux", "send-keys", "-t", session, "C-q"], check=True)
            deadline = time.monotonic() + 20
            while time.monotonic() < deadline and "huichat" in _pane(session):
                time.sleep(0.25)
        finally:
            subprocess.run(["tmux", "kill-session", "-t", session], capture_output=True, check=False)
    transcripts = list((tmp_path / "data" / "sessions").glob("*/*/chat_*.md"))
    assert len(transcripts) == 1
    text = transcripts[0].read_text(encoding="utf-8")
    assert "生命的意义是什么？" in text and "答案是四十二" in text

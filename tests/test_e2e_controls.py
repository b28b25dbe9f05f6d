"""End to end: conversation control in the installed ``huichat`` in a real terminal (tmux)."""

from __future__ import annotations

import time
from pathlib import Path

from benchmarks.fakellm import FakeLLM, Reply
from tests.test_e2e import _config, _pane, _start, _tmux, _wait_for, pytestmark  # noqa: F401

_SLOW = "慢慢地说" * 200


def test_stop_during_a_slow_stream_in_a_real_terminal(tmp_path: Path) -> None:
    with FakeLLM([Reply(text=_SLOW, chunk_chars=4, chunk_delay=0.1)]) as server:
        session = _start(tmp_path, _config(tmp_path, server), "stop")
        try:
            _wait_for(session, "memory: 0 turns")
            _tmux("send-keys", "-t", session, "-l", "说很久")
            _tmux("send-keys", "-t", session, "Enter")
            _wait_for(session, "慢慢地说慢慢地说")
            _tmux("send-keys", "-t", session, "Escape")
            _wait_for(session, "stopped — F4 asks again", seconds=10)
            shown = _pane(session).count("慢")
            time.sleep(0.5)
            assert _pane(session).count("慢") == shown  # nothing streams after the stop
            deadline = time.monotonic() + 10
            while time.monotonic() < deadline and server.dropped == 0:
                time.sleep(0.1)
            assert server.dropped == 1  # the request itself ended
        finally:
            _tmux("kill-session", "-t", session)
    transcript = next((tmp_path / "data" / "sessions").glob("*/*/chat_*.md")).read_text(encoding="utf-8")
    assert "说很久" in transcript and "the reply was stopped" in transcript

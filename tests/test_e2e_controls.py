"""End to end: conversation control in the installed ``huichat`` in a real terminal (tmux)."""

from __future__ import annotations

import subprocess
import time
from pathlib import Path
from typing import Any

from benchmarks.fakellm import FakeLLM, Reply
from tests.test_e2e import (  # noqa: F401
    HUICHAT,
    _config,
    _exited,
    _pane,
    _remember_the_vpn,
    _start,
    _tmux,
    _wait_for,
    pytestmark,
)

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


def _start_with_editor(tmp_path: Path, config: Path, editor: Path, name: str) -> str:
    session = f"huichat-{name}-{int(time.time() * 1000) % 100000}"
    command = f"env HOME={tmp_path} HF_HUB_OFFLINE=1 TERM=xterm-256color EDITOR={editor} {HUICHAT} --config {config}"
    subprocess.run(["tmux", "new-session", "-d", "-s", session, "-x", "120", "-y", "36", command], check=True)
    _tmux("set-option", "-t", session, "remain-on-exit", "on")
    return session


def test_a_prompt_written_in_the_editor_is_sent_and_comes_back_from_history_after_a_restart(tmp_path: Path) -> None:
    editor = tmp_path / "editor.sh"
    editor.write_text('#!/bin/sh\nprintf "%s\\n" "$(cat "$1") 来自编辑器" > "$1"\n', encoding="utf-8")
    editor.chmod(0o700)
    with FakeLLM() as server:
        config = _config(tmp_path, server)
        session = _start_with_editor(tmp_path, config, editor, "editor")
        try:
            _wait_for(session, "memory: 0 turns")
            _tmux("send-keys", "-t", session, "-l", "草稿")
            _tmux("send-keys", "-t", session, "C-g")
            _wait_for(session, "草稿 来自编辑器")  # the editor ran on the prompt's text, which came back
            _tmux("send-keys", "-t", session, "Enter")
            _wait_for(session, "memory: 1 turn")
            assert server.requests[0]["messages"][-1]["content"].endswith("草稿 来自编辑器")
            _tmux("send-keys", "-t", session, "C-q")
            deadline = time.monotonic() + 20
            while time.monotonic() < deadline and not _exited(session):
                time.sleep(0.1)
        finally:
            _tmux("kill-session", "-t", session)
        session = _start_with_editor(tmp_path, config, editor, "history")
        try:
            _wait_for(session, "memory: 1 turn")
            _tmux("send-keys", "-t", session, "C-n")  # the new session: its transcript is empty
            _tmux("send-keys", "-t", session, "Up")
            screen = _wait_for(session, "草稿 来自编辑器")
            assert "Message huichat" not in screen  # it is in the prompt, not only in the transcript
        finally:
            _tmux("kill-session", "-t", session)


def _quit(session: str) -> None:
    _tmux("send-keys", "-t", session, "C-q")
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline and not _exited(session):
        time.sleep(0.1)


def test_edit_and_resend_then_regenerate_then_reopen_in_a_real_terminal(tmp_path: Path) -> None:
    answers = iter(["答一", "答二", "改后的答", "再答一次"])

    def respond(body: dict[str, Any]) -> Reply:  # a session's title is asked for without the memory tools
        return Reply(text=next(answers) if body.get("tools") else "分支")

    with FakeLLM(responder=respond) as server:
        config = _config(tmp_path, server)
        session = _start(tmp_path, config, "branches")
        try:
            _wait_for(session, "memory: 0 turns")
            for question, stored in (("第一问", "memory: 1 turn"), ("第二问", "memory: 2 turns")):
                _tmux("send-keys", "-t", session, "-l", question)
                _tmux("send-keys", "-t", session, "Enter")
                _wait_for(session, stored)
            _tmux("send-keys", "-t", session, "C-Up")  # into the conversation, on its last message
            _wait_for(session, "e Edit & resend")
            for key in ("Up", "e"):  # onto "第二问", then into the prompt to edit it
                time.sleep(0.5)  # each after the focus moved
                _tmux("send-keys", "-t", session, key)
            _wait_for(session, "Editing")
            _tmux("send-keys", "-t", session, "-l", "改")
            _tmux("send-keys", "-t", session, "Enter")
            screen = _wait_for(session, "‹ 2/2 ›")
            assert "改后的答" in screen and "第二问改" in screen and "答二" not in screen
            _tmux("send-keys", "-t", session, "F4")  # the edited message's good answer, asked again
            screen = _wait_for(session, "‹ 3/3 ›")
            assert "再答一次" in screen and "改后的答" not in screen
            context = "\n".join(str(m["content"]) for m in server.requests[-1]["messages"][:-1])
            assert "答一" in context and "答二" not in context and "改后的答" not in context
            _quit(session)
        finally:
            _tmux("kill-session", "-t", session)
        transcript = next((tmp_path / "data" / "sessions").glob("*/*/chat_*.md"))
        kept = transcript.read_text(encoding="utf-8")
        assert all(answer in kept for answer in ("答二", "改后的答", "再答一次"))  # every branch is kept
        session = _start(tmp_path, config, "reopened", "--session", transcript.stem.removeprefix("chat_"))
        try:
            screen = _wait_for(session, "‹ 3/3 ›")  # reopened on its current branch
            assert "再答一次" in screen and "答二" not in screen
        finally:
            _tmux("kill-session", "-t", session)


def _gone(session: str, needle: str, seconds: float = 30.0) -> str:
    """Wait until ``needle`` is no longer on screen (a notification that fades); the screen then."""
    deadline = time.monotonic() + seconds
    screen = _pane(session)
    while needle in screen and time.monotonic() < deadline:
        time.sleep(0.2)
        screen = _pane(session)
    return screen


def test_a_turn_forgotten_from_search_results_is_not_found_again_in_a_real_terminal(tmp_path: Path) -> None:
    with FakeLLM() as server:
        config = _config(tmp_path, server)
        # the hash embedder's cosines mean nothing to the calibrated threshold
        config.write_text(config.read_text(encoding="utf-8") + "retriever:\n  min_similarity: 0.0\n", encoding="utf-8")
        secret = _remember_the_vpn(config)
        session = _start(tmp_path, config, "forget")
        try:
            _wait_for(session, "memory: 4 turns")
            _tmux("send-keys", "-t", session, "C-f")
            _wait_for(session, "Search memory")
            _tmux("send-keys", "-t", session, "-l", "WireGuard keepalive")
            _tmux("send-keys", "-t", session, "Enter")
            _wait_for(session, f"[{secret.id}]")
            _tmux("send-keys", "-t", session, "Down")  # into the results, on the hit
            _wait_for(session, "del Forget turn")  # the footer shows the results' keys once they have focus
            _tmux("send-keys", "-t", session, "DC")  # Del (letters typed here go on in the query)
            _wait_for(session, f"Forgot turn {secret.id}", seconds=30)
            assert f"[{secret.id}]" not in _pane(session)  # gone from the results at once
            _gone(session, secret.id)  # the notification fades
            _tmux("send-keys", "-t", session, "Escape")
            _wait_for(session, "Message huichat")
            _tmux("send-keys", "-t", session, "C-f")
            _wait_for(session, "Search memory")
            _tmux("send-keys", "-t", session, "-l", "WireGuard keepalive")
            _tmux("send-keys", "-t", session, "Enter")
            screen = _wait_for(session, "“WireGuard keepalive”")
            assert secret.id not in screen and "WireGuard" not in screen.replace("“WireGuard keepalive”", "").replace(
                "WireGuard keepalive", "", 1
            )
        finally:
            _tmux("kill-session", "-t", session)
    transcript = (tmp_path / "data" / "sessions" / secret.session_file).read_text(encoding="utf-8")
    assert '"tombstone"' in transcript and "把 WireGuard keepalive 设成 25 秒" in transcript  # recorded, not erased

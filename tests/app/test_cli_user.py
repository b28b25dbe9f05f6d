"""``--user NAME``: the CLI reads a served user's memory (``<data_dir>/users/<name>/``) as the API does."""

from __future__ import annotations

import json
from datetime import timedelta
from pathlib import Path

from huichat.app.config import load_config
from huichat.app.wiring import runtime
from huichat.memory.turns import Message, TurnDraft
from tests.app.test_cli import _config, _huichat
from tests.conftest import NOW


def _served_user(config: Path, user: str, said: str) -> str:
    """A turn in ``user``'s memory, where huichat serve keeps it."""
    loaded = load_config(config)
    kernel = runtime(loaded).open_kernel(location=loaded.user_location(user))
    session = kernel.new_session(NOW - timedelta(days=1))
    turn = kernel.append_turn(session, TurnDraft((Message("user", said), Message("assistant", "Noted.")), NOW, said))
    kernel.close()
    return turn.id


def test_recall_show_sessions_and_export_read_a_served_users_memory(tmp_path: Path) -> None:
    config = _config(tmp_path)
    turn_id = _served_user(config, "bob", "bob's locker code is 8812")
    found = _huichat(config, "recall", "locker code", "--user", "bob", "--json")
    assert found.returncode == 0, found.stderr
    assert [r["id"] for r in json.loads(found.stdout)["results"]] == [turn_id]
    shown = _huichat(config, "show", turn_id, "--user", "bob")
    assert shown.returncode == 0 and "locker code is 8812" in shown.stdout
    listed = _huichat(config, "sessions", "--user", "bob", "--json")
    assert [s["first_message"] for s in json.loads(listed.stdout)] == ["bob's locker code is 8812"]
    out = tmp_path / "bob.jsonl"
    assert _huichat(config, "export", "--user", "bob", "--format", "jsonl", "--out", str(out)).returncode == 0
    assert "8812" in out.read_text(encoding="utf-8")
    # the chat's own memory (the owner's) is another one
    owner = _huichat(config, "recall", "locker code", "--json")
    assert json.loads(owner.stdout)["results"] == []


def test_a_user_without_a_memory_is_one_line_naming_those_there_are(tmp_path: Path) -> None:
    config = _config(tmp_path)
    _served_user(config, "bob", "hello")
    for user, words in (
        ("nobody", "no user 'nobody' has a memory here (users: bob, default)"),
        ("Bob!", "not a user name"),
    ):
        done = _huichat(config, "sessions", "--user", user)
        assert done.returncode == 2 and not done.stdout
        assert done.stderr.startswith("huichat: --user: ") and words in done.stderr and "Traceback" not in done.stderr

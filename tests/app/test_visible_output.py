"""Terminal escape sequences in stored text are shown, never obeyed: every human-readable output
makes control characters other than newline and tab visible; JSON output stays exact."""

from __future__ import annotations

import json
import re
from pathlib import Path

from tests.app.test_cli import _config, _huichat

HOSTILE = "clip\x1b]52;c;cHduZWQ=\x07 title\x1b]0;pwned\x07 wipe\x1b[2J csi\x9b31m nul\x00 del\x7f 部署 zebra"
TITLE = "report\x1b]0;owned\x07\x1b[2J\x85done"
RAW_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def _imported(tmp_path: Path) -> Path:
    config = _config(tmp_path)
    export = tmp_path / "chats.jsonl"
    record = {
        "id": "c1",
        "title": TITLE,
        "messages": [{"role": "user", "content": HOSTILE}, {"role": "assistant", "content": "ok\x1b[31m red"}],
    }
    export.write_text(json.dumps(record) + "\n", encoding="utf-8")
    done = _huichat(config, "import", str(export))
    assert done.returncode == 0, done.stderr
    return config


def _clean(text: str) -> None:
    assert not RAW_CONTROL.findall(text), RAW_CONTROL.findall(text)


def test_show_recall_and_sessions_show_control_characters_and_json_keeps_them(tmp_path: Path) -> None:
    config = _imported(tmp_path)
    sessions = _huichat(config, "sessions")
    assert sessions.returncode == 0, sessions.stderr
    _clean(sessions.stdout)
    assert "report␛]0;owned␇␛[2J\\x85done" in sessions.stdout
    (row,) = json.loads(_huichat(config, "sessions", "--json").stdout)
    assert row["title"] == TITLE

    recall = _huichat(config, "recall", "zebra")
    assert recall.returncode == 0, recall.stderr
    _clean(recall.stdout)
    assert "clip␛]52;c;cHduZWQ=␇ title␛]0;pwned␇ wipe␛[2J csi\\x9b31m nul␀ del␡ 部署 zebra" in recall.stdout
    hit = json.loads(_huichat(config, "recall", "zebra", "--json").stdout)["results"][0]
    assert hit["messages"][0]["text"] == HOSTILE
    turn_id = hit["id"]

    show = _huichat(config, "show", turn_id)
    assert show.returncode == 0, show.stderr
    _clean(show.stdout)
    assert "␛]52;c;cHduZWQ=␇" in show.stdout and "ok␛[31m red" in show.stdout
    assert "\t" not in HOSTILE and "\n" in show.stdout  # newlines are kept
    exact = json.loads(_huichat(config, "show", turn_id, "--json").stdout)
    assert exact["messages"][0]["text"] == HOSTILE


def test_error_lines_show_control_characters_too(tmp_path: Path) -> None:
    config = _config(tmp_path)
    hostile = tmp_path / "notes\x1b]0;owned\x07.json"
    hostile.write_text('{"hello": "world"}', encoding="utf-8")
    done = _huichat(config, "import", str(hostile))
    assert done.returncode == 1
    _clean(done.stderr)
    assert "notes␛]0;owned␇.json: unknown format" in done.stderr

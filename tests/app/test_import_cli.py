"""``huichat import`` and ``huichat export`` as real processes: the account, bad input, dry runs, kill -9."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from collections import Counter
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest

from benchmarks.synthetic import write_chatgpt_export
from huichat.app.config import load_config
from huichat.app.wiring import runtime
from huichat.memory.imports import sidecar
from huichat.memory.transcript import TurnChunker
from huichat.memory.turns import Message, TurnDraft
from tests.app.test_cli import ROOT, _config, _huichat
from tests.conftest import NOW
from tests.memory.imports.helpers import FIXTURES
from tests.memory.imports.stored_helpers import canonical, stored_conversations

CHATGPT = FIXTURES / "chatgpt" / "conversations.json"


def test_import_prints_the_account_and_the_turns_are_recalled(tmp_path: Path) -> None:
    config = _config(tmp_path)
    done = _huichat(config, "import", str(CHATGPT), str(FIXTURES / "claude"))
    assert done.returncode == 0, done.stderr
    assert "imported" in done.stdout and "already present" in done.stdout and "other branches" in done.stdout
    assert "skipped" in done.stdout and "missing times estimated" in done.stdout
    assert "searchable by their words now" in done.stdout and "searchable by meaning too" in done.stdout
    recall = _huichat(config, "recall", "Kinkaku-ji", "--json")
    hits = json.loads(recall.stdout)["results"]
    assert any("Kinkaku-ji" in h["messages"][-1]["text"] for h in hits)
    again = _huichat(config, "import", str(CHATGPT), "--no-embed")
    assert again.returncode == 0 and "0 messages" in again.stdout
    sessions = _huichat(config, "sessions", "--json")
    assert len(json.loads(sessions.stdout)) == 3 + 2


def test_a_malformed_file_is_one_line_and_nothing_is_written(tmp_path: Path) -> None:
    config = _config(tmp_path)
    broken = tmp_path / "conversations.json"
    broken.write_bytes(CHATGPT.read_bytes()[:-300])  # cut short, as a failed download is
    done = _huichat(config, "import", str(CHATGPT), str(broken))
    assert done.returncode == 1
    assert f"{broken}: malformed JSON" in done.stderr and "truncated" in done.stderr
    assert "Traceback" not in done.stderr and "nothing was imported" in done.stderr
    assert not (tmp_path / "data" / "sessions").exists()
    unknown = tmp_path / "notes.json"
    unknown.write_text('{"hello": "world"}', encoding="utf-8")
    done = _huichat(config, "import", str(unknown))
    assert done.returncode == 1 and f"{unknown}: unknown format" in done.stderr and "keys hello" in done.stderr


def test_a_dry_run_counts_and_writes_nothing(tmp_path: Path) -> None:
    config = _config(tmp_path)
    done = _huichat(config, "import", "--dry-run", str(CHATGPT))
    assert done.returncode == 0, done.stderr
    assert "Dry run: nothing was written" in done.stdout and "would import" in done.stdout
    assert "15 messages" in done.stdout and "5 turns in 3 new sessions" in done.stdout
    assert not (tmp_path / "data").exists()


def test_export_in_each_format_and_jsonl_back_into_another_install(tmp_path: Path) -> None:
    config = _config(tmp_path)
    assert _huichat(config, "import", "--no-embed", str(CHATGPT)).returncode == 0
    for fmt, out in (("markdown", "md"), ("jsonl", "all.jsonl"), ("chatgpt", "conversations.json")):
        done = _huichat(config, "export", "--format", fmt, "--out", str(tmp_path / out), "--redact")
        assert done.returncode == 0, done.stderr
        assert done.stdout.startswith("exported 3 sessions (5 turns, ") and "(secrets redacted)" in done.stdout
    assert len(list((tmp_path / "md").glob("*.md"))) == 3
    other = tmp_path / "other"
    other.mkdir()
    second = _config(other)
    done = _huichat(second, "import", "--no-embed", str(tmp_path / "all.jsonl"))
    assert done.returncode == 0, done.stderr
    assert len(json.loads(_huichat(second, "sessions", "--json").stdout)) == 3
    # every turn keeps its id there: a reply's [id:…] and a note's id still name it
    done = _huichat(second, "export", "--format", "jsonl", "--out", str(tmp_path / "back.jsonl"))
    assert done.returncode == 0, done.stderr
    assert _turn_ids(tmp_path / "back.jsonl") == _turn_ids(tmp_path / "all.jsonl") != []
    bad = _huichat(config, "export", "--format", "jsonl", "--out", str(tmp_path / "x.jsonl"), "--since", "last tuesday")
    assert bad.returncode == 1 and "not a date" in bad.stderr
    none = _huichat(config, "export", "--format", "jsonl", "--out", str(tmp_path / "y.jsonl"), "--since", "2030-01-01")
    assert none.returncode == 0 and "nothing was written" in none.stdout and not (tmp_path / "y.jsonl").exists()
    # a session named that is none is a mistake (a range with nothing in it is not)
    unknown = _huichat(config, "export", "--format", "jsonl", "--out", str(tmp_path / "z.jsonl"), "--session", "nope")
    assert unknown.returncode == 1 and not (tmp_path / "z.jsonl").exists()
    assert (
        unknown.stderr.strip() == "huichat: error: no session 'nope' (huichat sessions lists them); nothing was written"
    )


def _turn_ids(export: Path) -> list[str]:
    lines = [json.loads(line) for line in export.read_text(encoding="utf-8").splitlines()]
    return [line["id"] for line in lines if line["record"] == "turn"]


def test_a_chat_exported_and_imported_elsewhere_keeps_its_ids(tmp_path: Path) -> None:
    config = _config(tmp_path)
    kernel = runtime(load_config(config)).open_kernel()
    said = [
        TurnDraft((Message("user", "我下周六去北京出差"), Message("assistant", "好的")), NOW),
        TurnDraft(
            (Message("user", "我下周六要干嘛？"), Message("assistant", "去北京出差")), NOW + timedelta(minutes=1)
        ),
    ]
    written = [t.id for t in kernel.append_turns(kernel.new_session(NOW), said)]
    kernel.close()
    assert _huichat(config, "export", "--format", "jsonl", "--out", str(tmp_path / "chat.jsonl")).returncode == 0
    other = tmp_path / "other"
    other.mkdir()
    second = _config(other)
    done = _huichat(second, "import", "--no-embed", str(tmp_path / "chat.jsonl"))
    assert done.returncode == 0, done.stderr
    for turn_id, (draft) in zip(written, said, strict=True):
        shown = _huichat(second, "show", turn_id, "--json")
        assert shown.returncode == 0, shown.stderr
        assert json.loads(shown.stdout)["messages"][0]["text"] == draft.messages[0].text


# --------------------------------------------------------------------- kill -9


def _state(data: Path) -> dict[str, Any]:
    """What a store holds, without what differs between runs (turn ids, the time of the import)."""
    sessions = data / "sessions"
    turns = {
        p.relative_to(sessions).as_posix(): TurnChunker(sessions).chunk_file(p)
        for p in sorted(sessions.glob("*/*/chat_*.md"))
    }
    records = {}
    for path in sorted(sessions.glob("*/*/*" + sidecar.SUFFIX)):
        kept = []
        for record in sidecar.read_records(path):
            record.pop("at", None)
            if isinstance(record.get("source"), dict):
                record["source"].pop("imported_at", None)
            kept.append(record)
        records[path.name] = kept
    return {
        "turns": {
            name: [(t.turn_index, t.timestamp, t.topic, [m.to_record() for m in t.messages], t.extra) for t in ts]
            for name, ts in turns.items()
        },
        "records": records,
        "conversations": sorted(canonical(c) for c in stored_conversations(data)),
        "ids": [t.id for ts in turns.values() for t in ts],
        "links": [(t.prev_id, t.id) for ts in turns.values() for t in ts],
    }


def _run_import(config: Path, export: Path) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "huichat", "--config", str(config), "import", "--no-embed", str(export)],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={"HOME": str(config.parent), "PATH": "/usr/bin:/bin", "HF_HUB_OFFLINE": "1"},
    )


@pytest.mark.slow
@pytest.mark.parametrize("moment", ["import records written, no transcript yet", "transcripts being written"])
def test_an_import_killed_mid_way_resumes_to_exactly_the_uninterrupted_store(tmp_path: Path, moment: str) -> None:
    export = tmp_path / "conversations.json"
    write_chatgpt_export(export, conversations=300, messages=6_000, seed=3)
    whole_dir, killed_dir = tmp_path / "whole", tmp_path / "killed"
    whole_dir.mkdir()
    killed_dir.mkdir()
    assert _run_import(_config(whole_dir), export).wait(timeout=600) == 0
    config = _config(killed_dir)
    process = _run_import(config, export)
    sessions = killed_dir / "data" / "sessions"
    deadline = time.monotonic() + 600
    while process.poll() is None and time.monotonic() < deadline:
        records = len(list(sessions.glob("*/*/*" + sidecar.SUFFIX))) if sessions.exists() else 0
        transcripts = len(list(sessions.glob("*/*/chat_*.md"))) if sessions.exists() else 0
        if (moment.startswith("import records") and records >= 40) or (
            moment.startswith("transcripts") and transcripts
        ):
            os.kill(process.pid, signal.SIGKILL)
            break
        time.sleep(0.005)
    assert process.wait(timeout=60) == -signal.SIGKILL, "the import finished before it could be killed"
    interrupted = _state(killed_dir / "data")
    assert len(interrupted["records"]) < 300  # it really stopped mid-way
    resumed = _run_import(config, export)
    _, err = resumed.communicate(timeout=600)
    assert resumed.returncode == 0, err
    state, whole = _state(killed_dir / "data"), _state(whole_dir / "data")
    assert state["turns"] == whole["turns"]
    assert state["records"] == whole["records"]
    assert state["conversations"] == whole["conversations"]
    assert len(state["ids"]) == len(set(state["ids"]))
    # the index: every turn once, linked as in its transcript
    kernel = runtime(load_config(config)).open_kernel()
    stored = kernel.store.get(state["ids"])
    assert kernel.count() == len(state["ids"]) == len(stored)
    assert Counter((stored[i].prev_id, i) for i in state["ids"]) == Counter(state["links"])
    kernel.close()


@pytest.mark.slow
def test_a_reindex_stopped_while_embedding_goes_on_when_run_again(tmp_path: Path) -> None:
    export = tmp_path / "conversations.json"
    write_chatgpt_export(export, conversations=40, messages=1_600, seed=7)
    config = tmp_path / "config.yaml"  # the bundled model: a rebuild's vectors take seconds, not milliseconds
    config.write_text(
        f"storage:\n  data_dir: {tmp_path / 'data'}\nretriever:\n  timezone: Asia/Shanghai\n", encoding="utf-8"
    )
    assert _huichat(config, "import", "--no-embed", str(export)).returncode == 0
    command = [sys.executable, "-m", "huichat", "--config", str(config), "reindex"]
    env = {"HOME": str(tmp_path), "PATH": "/usr/bin:/bin", "HF_HUB_OFFLINE": "1"}
    process = subprocess.Popen(command, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    assert process.stdout is not None
    for line in process.stdout:
        if (found := re.match(r"embedding: ([\d,]+) of", line)) and int(found[1].replace(",", "")):
            break
    process.send_signal(signal.SIGINT)
    _, err = process.communicate(timeout=120)
    assert process.returncode == 130 and "goes on where this one stopped" in err, err
    kernel = runtime(load_config(config)).open_kernel(embed=False)
    waiting = kernel.pending_vectors
    kernel.close()
    assert waiting
    set_aside = sorted((tmp_path / "data" / "index.lancedb").glob("*set-aside*"))
    again = _huichat(config, "reindex")
    assert again.returncode == 0, again.stderr
    assert f"continuing the reindex that was stopped: {waiting:,} turns wait" in again.stdout
    assert "the reindex is finished" in again.stdout and "moved to" not in again.stderr
    assert sorted((tmp_path / "data" / "index.lancedb").glob("*set-aside*")) == set_aside  # no second copy
    assert not (tmp_path / "data" / "reindex-unfinished.json").exists()
    anew = _huichat(config, "reindex", "--anew")  # asked for: rebuilt from the transcripts again
    assert anew.returncode == 0 and "reindexed" in anew.stdout and "moved to" in anew.stderr


def test_ctrl_c_while_embedding_stops_keeps_every_vector_and_a_rerun_computes_only_the_rest(tmp_path: Path) -> None:
    export = tmp_path / "conversations.json"
    write_chatgpt_export(export, conversations=100, messages=4_000, seed=5)
    config = tmp_path / "config.yaml"  # the bundled model: its bulk runtime is the one Ctrl-C must cut short
    config.write_text(
        f"storage:\n  data_dir: {tmp_path / 'data'}\nretriever:\n  timezone: Asia/Shanghai\n", encoding="utf-8"
    )
    command = [sys.executable, "-m", "huichat", "--config", str(config), "import", str(export)]
    env = {"HOME": str(tmp_path), "PATH": "/usr/bin:/bin", "HF_HUB_OFFLINE": "1"}
    process = subprocess.Popen(command, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    assert process.stdout is not None
    reported = 0
    for line in process.stdout:  # not a terminal: a progress line every few seconds
        if found := re.match(r"embedding: ([\d,]+) of ([\d,]+) turns · [\d.,]+ turns/s · about .+ left", line):
            reported = int(found[1].replace(",", ""))
            if reported:
                break
    assert reported, "no progress line with vectors computed"
    process.send_signal(signal.SIGINT)
    _, err = process.communicate(timeout=120)
    assert process.returncode == 130, err
    assert "embedding stopped" in err and "are kept" in err and "Traceback" not in err
    kernel = runtime(load_config(config)).open_kernel()
    waiting, total = kernel.pending_vectors, kernel.count()
    kernel.close()
    assert reported <= total - waiting < total  # every vector reported is stored; it really stopped
    rerun = subprocess.Popen(command, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    assert rerun.stdout is not None
    starts = next(line for line in rerun.stdout if "searchable by their words now" in line)
    assert starts.startswith(f"{waiting:,} turns")  # only the rest is computed
    rerun.send_signal(signal.SIGINT)
    _, err = rerun.communicate(timeout=120)
    assert rerun.returncode == 130, err


def test_a_jsonl_export_keeps_the_branches_beside_and_another_install_keeps_them_too(tmp_path: Path) -> None:
    # a message edited and sent again: the earlier turn stays beside the new one (F1: "kept under
    # their own ids"); the JSONL export left it out while markdown and ChatGPT held it
    config = _config(tmp_path)
    kernel = runtime(load_config(config)).open_kernel()
    handle = kernel.new_session(NOW)
    first = kernel.append_turn(
        handle, TurnDraft((Message("user", "我的牙医是谁？"), Message("assistant", "不知道")), NOW)
    )
    edited = kernel.branch_before(handle.session_id, first.id)
    kept = kernel.append_turn(
        edited, TurnDraft((Message("user", "我的牙医叫什么？"), Message("assistant", "Dr. Patel")), NOW)
    )
    kernel.close()
    # the earlier turn is shown by its id, said to be beside the current branch (the index holds that one only)
    for extra in ((), ("--json",)):
        shown = _huichat(config, "show", first.id, *extra)
        assert shown.returncode == 0 and "我的牙医是谁？" in shown.stdout and "kept beside" in shown.stderr
    done = _huichat(config, "export", "--format", "jsonl", "--out", str(tmp_path / "all.jsonl"))
    assert done.returncode == 0, done.stderr
    assert "2 messages of other branches" in done.stdout
    lines = [json.loads(line) for line in (tmp_path / "all.jsonl").read_text(encoding="utf-8").splitlines()]
    assert [(line["record"], line["id"]) for line in lines if line["record"] in ("turn", "beside")] == [
        ("turn", kept.id),
        ("beside", first.id),
    ]
    # imported back where it came from: the branch is there already, as a turn beside (not doubled)
    back = _huichat(config, "import", "--no-embed", str(tmp_path / "all.jsonl"))
    assert back.returncode == 0 and "1 conversations unchanged" in back.stdout
    again = _huichat(config, "export", "--format", "jsonl", "--out", str(tmp_path / "again.jsonl"))
    assert "2 messages of other branches" in again.stdout
    other = tmp_path / "other"
    other.mkdir()
    second = _config(other)
    assert _huichat(second, "import", "--no-embed", str(tmp_path / "all.jsonl")).returncode == 0
    again = _huichat(second, "export", "--format", "markdown", "--out", str(tmp_path / "md"))
    assert again.returncode == 0 and "2 messages of other branches" in again.stdout
    written = "".join(p.read_text(encoding="utf-8") for p in (tmp_path / "md").glob("*.md"))
    assert "我的牙医是谁？" in written and "我的牙医叫什么？" in written


def test_the_model_that_answered_in_huichat_goes_out_with_the_export(tmp_path: Path) -> None:
    config = _config(tmp_path)
    kernel = runtime(load_config(config)).open_kernel()
    kernel.append_turn(
        kernel.new_session(NOW),
        TurnDraft(
            (Message("user", "hi"), Message("assistant", "hello")),
            NOW,
            extra=(("provider", "local"), ("model", "qwen2.5-coder-1.5b")),
        ),
    )
    kernel.close()
    done = _huichat(config, "export", "--format", "chatgpt", "--out", str(tmp_path / "c.json"))
    assert done.returncode == 0, done.stderr
    nodes = json.loads((tmp_path / "c.json").read_text(encoding="utf-8"))[0]["mapping"].values()
    slugs = {
        n["message"]["author"]["role"]: n["message"]["metadata"].get("model_slug") for n in nodes if n.get("message")
    }
    assert slugs["assistant"] == "qwen2.5-coder-1.5b" and slugs["user"] is None
    done = _huichat(config, "export", "--format", "markdown", "--out", str(tmp_path / "md"))
    written = "".join(p.read_text(encoding="utf-8") for p in (tmp_path / "md").glob("*.md"))
    assert "qwen2.5-coder-1.5b" in written

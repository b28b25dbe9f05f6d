"""huichat stats, lifecycle and consolidate as real processes against a real store."""

from __future__ import annotations

import json
from datetime import timedelta
from pathlib import Path

import pytest

from huichat.app.config import load_config
from huichat.app.wiring import runtime
from huichat.memory.turns import Message, TurnDraft
from tests.app.test_cli import _config, _huichat
from tests.conftest import NOW
from tests.memory.test_consolidation import old_group

FACT = "我的车停在 B2 层 117 号车位"


@pytest.fixture
def aged(tmp_path: Path) -> tuple[Path, dict[str, list[str]]]:
    config = _config(tmp_path)
    kernel = runtime(load_config(config)).open_kernel()
    ids: dict[str, list[str]] = {"fact": [], "chat": []}
    for day in range(4):
        when = NOW - timedelta(days=12 - day)
        session = kernel.new_session(when)
        ids["fact"].append(
            kernel.append_turn(session, TurnDraft((Message("user", FACT), Message("assistant", "好的")), when)).id
        )
    session = kernel.new_session(NOW - timedelta(hours=3))
    ids["chat"].append(
        kernel.append_turn(
            session,
            TurnDraft((Message("user", "I love this plan!"), Message("assistant", "Great.")), NOW - timedelta(hours=3)),
        ).id
    )
    kernel.note_access([ids["fact"][1]] * 6, NOW - timedelta(hours=1))
    kernel.close()
    return config, ids


def test_stats_json_has_the_contract_fields(aged: tuple[Path, dict[str, list[str]]]) -> None:
    config, ids = aged
    done = _huichat(config, "stats", "--json")
    assert done.returncode == 0, done.stderr
    stats = json.loads(done.stdout)
    assert {
        "tiers", "sessions_per_tier", "avg_importance", "total_accesses", "importance_histogram", "top_important",
        "recent_accesses", "turns_per_week", "languages", "disk_bytes", "total_turns", "total_sessions",
    } <= set(stats)  # fmt: skip
    assert stats["total_turns"] == 5 and stats["total_sessions"] == 5
    assert stats["tiers"] == {"working": 5, "long_term": 0, "archive": 0}
    assert stats["total_accesses"] == 6 and stats["recent_accesses"][0]["id"] == ids["fact"][1]
    assert sum(stats["importance_histogram"]) == 5 and len(stats["importance_histogram"]) == 10
    assert stats["languages"] == {"zh": 4, "en": 1}
    assert stats["disk_bytes"] > 0
    human = _huichat(config, "stats")
    assert "5 turns in 5 sessions" in human.stdout


def test_lifecycle_run_dry_then_real_then_log_and_show(aged: tuple[Path, dict[str, list[str]]]) -> None:
    config, ids = aged
    dry = _huichat(config, "lifecycle", "run", "--dry-run", "--now", NOW.isoformat(), "--json")
    assert dry.returncode == 0, dry.stderr
    planned = json.loads(dry.stdout)
    assert {m["id"]: m["to"] for m in planned["moves"]} == {
        ids["fact"][0]: "archive",
        ids["fact"][1]: "long_term",
        ids["fact"][2]: "archive",
        ids["fact"][3]: "archive",
    }
    assert len(planned["clusters"]) == 1
    real = _huichat(config, "lifecycle", "run", "--now", NOW.isoformat())
    assert real.returncode == 0, real.stderr
    assert "working→archive 3, working→long_term 1" in real.stdout
    assert "grouped 3 turns behind 1 representative\n" in real.stdout
    log = _huichat(config, "lifecycle", "log")
    assert f"{ids['fact'][1]}  working → long_term  (retrieved 6 times (≥ 5))" in log.stdout
    assert "stands for" in log.stdout
    shown = json.loads(_huichat(config, "show", ids["fact"][1], "--json").stdout)
    assert shown["tier"] == "long_term" and shown["cluster_role"] == "representative"
    assert set(shown["importance_parts"]) == {"novelty", "sentiment", "feedback", "access", "density"}
    recall = _huichat(config, "recall", "车停在哪个车位", "--now", NOW.isoformat())
    assert recall.stdout.count(FACT) == 1 and "+3 similar: [id:" in recall.stdout


def test_consolidate_list_undo_and_a_bad_cluster_is_one_line(aged: tuple[Path, dict[str, list[str]]]) -> None:
    config, ids = aged
    assert _huichat(config, "consolidate", "--now", NOW.isoformat()).returncode == 0
    listed = json.loads(_huichat(config, "consolidate", "--list", "--json").stdout)
    [cluster] = listed
    assert set(cluster["turns"]) == set(ids["fact"])
    undone = _huichat(config, "consolidate", "--undo", cluster["cluster"])
    assert undone.returncode == 0 and "shown on their own again" in undone.stdout
    bad = _huichat(config, "consolidate", "--undo", "nope")
    assert bad.returncode == 1 and bad.stderr.strip().count("\n") == 0 and "no cluster 'nope'" in bad.stderr
    assert _huichat(config, "lifecycle", "run", "--now", "yesterday").stderr.startswith("huichat: error: --now:")


def test_consolidate_reports_and_logs_the_members_of_an_earlier_group_it_releases(tmp_path: Path) -> None:
    config = _config(tmp_path)
    kernel = runtime(load_config(config)).open_kernel()
    representative, different, _ = old_group(kernel, repeats=2)
    kernel.close()
    dry = _huichat(config, "consolidate", "--dry-run", "--now", NOW.isoformat())
    assert dry.returncode == 0, dry.stderr
    assert "2 members would be released: they no longer count as near-duplicates\n" in dry.stdout
    # the JSON says so too (they were in `huichat lifecycle log --json` only), beside the keys it had
    release = {"cluster": "cold", "representative": representative, "members": different, "ungrouped": []}
    planned = json.loads(_huichat(config, "consolidate", "--dry-run", "--json", "--now", NOW.isoformat()).stdout)
    assert planned == {"run": planned["run"], "dry_run": True, "clusters": [], "releases": [release]}
    lifecycle = _huichat(config, "lifecycle", "run", "--dry-run", "--json", "--now", NOW.isoformat())
    assert json.loads(lifecycle.stdout)["releases"] == [release]
    real = _huichat(config, "consolidate", "--now", NOW.isoformat())
    assert real.stdout.splitlines() == [
        "grouped 0 turns behind 0 representatives",
        "2 members released: they no longer count as near-duplicates",
        f"  cold  {representative} no longer stands for {', '.join(different)}",
    ]
    log = _huichat(config, "lifecycle", "log").stdout
    assert f"  cold  {representative} no longer stands for {', '.join(different)}\n" in log
    assert "released" not in _huichat(config, "consolidate", "--now", NOW.isoformat()).stdout
    assert json.loads(_huichat(config, "consolidate", "--json", "--now", NOW.isoformat()).stdout)["releases"] == []


def test_stats_shows_brackets_in_what_was_said_as_written(tmp_path: Path) -> None:
    config = _config(tmp_path)
    kernel = runtime(load_config(config)).open_kernel()
    said = "what does [/INST] close?"
    when = NOW - timedelta(hours=2)
    turn = kernel.append_turn(kernel.new_session(when), TurnDraft((Message("user", said),), when))
    kernel.note_access([turn.id], NOW - timedelta(hours=1))
    kernel.close()
    done = _huichat(config, "stats")
    assert done.returncode == 0, done.stderr
    assert "[/INST]" in done.stdout and turn.id in done.stdout

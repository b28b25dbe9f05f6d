"""``huichat bench loop`` end to end: a seeded store, the scripted server, the whole reply loop."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_the_loop_bench_reports_citations_rounds_markup_and_echoes(tmp_path: Path) -> None:
    config = tmp_path / "config.yaml"
    config.write_text(
        f"embedding:\n  model_path: hash\nstorage:\n  data_dir: {tmp_path / 'data'}\nretriever:\n  timezone: Asia/Shanghai\n",
        encoding="utf-8",
    )
    out = tmp_path / "loop.json"
    command = ["bench", "loop", "--questions", "4", "--modes", "structured,tools,malformed,endless", "--json", str(out)]
    done = subprocess.run(
        [sys.executable, "-m", "huichat", "--config", str(config), *command],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=ROOT,
        env={"HOME": str(tmp_path), "PATH": "/usr/bin:/bin", "HF_HUB_OFFLINE": "1", "COLUMNS": "120"},
    )
    assert done.returncode == 0, done.stderr
    assert "bench loop · 16 replies" in done.stdout
    report = json.loads(out.read_text(encoding="utf-8"))
    summary = report["summary"]
    assert list(summary) == ["structured", "tools", "malformed", "endless", "all"]
    for mode in ("structured", "tools"):
        assert summary[mode]["replies"] == 4 and summary[mode]["mean_rounds"] == 1.0
    assert summary["malformed"]["mean_rounds"] == 2.0 and summary["endless"]["mean_rounds"] == 2.0
    assert summary["all"]["gold_in_top5"] == 1.0 and summary["all"]["cite_correct"] == 1.0
    assert summary["all"]["markup"] == 0 and summary["all"]["echoes"] == 0 and summary["all"]["no_answer"] == 0
    first = report["replies"][0]
    assert first["question"] == "我家里的 VPN 用的是什么协议、哪个端口？" and first["cited"] == [first["gold"]]


def test_a_server_run_asks_the_questions_memory_cannot_answer_and_judges_each_reply(tmp_path: Path) -> None:
    from benchmarks.fakellm import FakeLLM, Reply

    config = tmp_path / "config.yaml"
    config.write_text(f"embedding:\n  model_path: hash\nstorage:\n  data_dir: {tmp_path / 'data'}\n", encoding="utf-8")
    out = tmp_path / "loop.json"
    with FakeLLM(responder=lambda body: Reply(text="I don't remember you telling me that.")) as server:
        command = ["bench", "loop", "--base-url", server.base_url, "--questions", "3", "--absent", "2", "--probe"]
        done = subprocess.run(
            [sys.executable, "-m", "huichat", "--config", str(config), *command, "--json", str(out)],
            capture_output=True,
            text=True,
            timeout=300,
            cwd=ROOT,
            env={"HOME": str(tmp_path), "PATH": "/usr/bin:/bin", "HF_HUB_OFFLINE": "1", "COLUMNS": "200"},
        )
    assert done.returncode == 0, done.stderr
    assert "question by question" in done.stdout and "probe: ping: " in done.stdout and "tools: no" in done.stdout
    report = json.loads(out.read_text(encoding="utf-8"))
    figures = report["summary"]["server"]
    assert figures["replies"] == 5 and figures["right_fact"] == 0 and figures["missed"] == 3
    assert figures["absent_honest"] == 2 and figures["pretended"] == 0 and figures["invented"] == 0
    replies = report["replies"]
    assert [r["verdict"] for r in replies] == ["said no memory"] * 3 + ["said no memory ✔"] * 2
    assert replies[0]["keys"] == ["WireGuard", "51820"] and replies[3]["gold"] == ""
    # the probe saw no tool call: auto answers memory-first, as for a user after `doctor --ping`
    assert all(r["memory_mode"].startswith("memory-first (auto: calls no tools (probe))") for r in replies)

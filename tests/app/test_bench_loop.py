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

"""Configuration: defaults documented in configs/default.yaml, bad config stops with exit 2."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from huichat.app.config import AppConfig, ConfigError, load_config
from huichat.app.wiring import main

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_YAML = ROOT / "configs" / "default.yaml"


def test_default_yaml_equals_the_code_defaults() -> None:
    documented = yaml.safe_load(DEFAULT_YAML.read_text(encoding="utf-8"))
    assert documented == AppConfig().model_dump(mode="json")


def test_every_key_in_default_yaml_has_a_comment_above_it() -> None:
    lines = DEFAULT_YAML.read_text(encoding="utf-8").splitlines()
    for number, line in enumerate(lines):
        match = re.match(r"^(\s+)([a-z_]+):", line)
        if not match:
            continue
        above = lines[number - 1].strip()
        assert above.startswith("#"), f"line {number + 1} ({match.group(2)}) has no comment above it"


def test_seed_sections_and_keys_exist() -> None:
    data = AppConfig().model_dump()
    assert {"model_path", "dimension", "device", "batch_size"} <= set(data["embedding"])
    assert {"db_path", "cache_dir", "cache_ttl_hours"} <= set(data["storage"])
    assert {"base_dir", "compression", "level"} <= set(data["archive"])
    assert {"default_top_k", "enable_progressive_scan", "max_scan_weeks"} <= set(data["retriever"])
    assert {"providers", "ui"} <= set(data)


def test_the_seeds_lifecycle_consolidation_and_sync_keys_are_accepted(tmp_path: Path) -> None:
    # the seed's memory_search.lifecycle / consolidation / sync blocks, as its README writes them
    user = tmp_path / "config.yaml"
    user.write_text(
        """
lifecycle:
  enabled: true
  working_memory_days: 14
  long_term_threshold: 0.7
  archive_threshold: 0.2
  archive_after_days: 60
  promotion_access_count: 3
  importance:
    enabled: true
    weights: {novelty: 0.2, sentiment: 0.2, feedback: 0.3, access: 0.2, density: 0.1}
consolidation:
  enabled: true
  similarity_threshold: 0.9
  min_cluster_size: 4
  time_window_days: 3
  schedule: "30 3 * * *"
sync:
  watch: false
  watch_debounce_ms: 800
""",
        encoding="utf-8",
    )
    config = load_config(user, env={"HOME": str(tmp_path)}).config
    assert (config.lifecycle.working_memory_days, config.lifecycle.promotion_access_count) == (14, 3)
    assert config.lifecycle.importance.weights.sentiment == 0.2
    assert (config.consolidation.min_cluster_size, config.consolidation.schedule) == (4, "30 3 * * *")
    assert (config.sync.watch, config.sync.watch_debounce_ms) == (False, 800)
    bad = tmp_path / "bad.yaml"
    bad.write_text("consolidation:\n  schedule: every night\n", encoding="utf-8")
    with pytest.raises(ConfigError, match=r"consolidation\.schedule.*not a cron expression"):
        load_config(bad, env={"HOME": str(tmp_path)})


def test_user_config_is_merged_over_defaults(tmp_path: Path) -> None:
    user = tmp_path / "config.yaml"
    user.write_text(
        "retriever:\n  default_top_k: 9\nproviders:\n  named:\n    local: {model: openai/x, api_base: 'http://127.0.0.1:1/v1'}\n",
        encoding="utf-8",
    )
    loaded = load_config(user, env={"HOME": str(tmp_path)})
    assert loaded.config.retriever.default_top_k == 9
    assert loaded.config.retriever.max_scan_weeks == 16  # untouched default
    assert loaded.config.providers.default_name() == "local"
    assert loaded.files == (user,)
    assert loaded.paths.data_dir == tmp_path / ".local/share/huichat"


def test_xdg_config_file_is_picked_up(tmp_path: Path) -> None:
    config_dir = tmp_path / "xdg" / "huichat"
    config_dir.mkdir(parents=True)
    (config_dir / "config.yaml").write_text("ui:\n  theme: nord\n", encoding="utf-8")
    loaded = load_config(None, env={"HOME": str(tmp_path), "XDG_CONFIG_HOME": str(tmp_path / "xdg")})
    assert loaded.config.ui.theme == "nord"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "retriever:\n  default_topk: 3\n",
            r"unknown key 'retriever\.default_topk' — did you mean 'default_top_k'\?",
        ),
        (
            "retriever:\n  default_top_k: many\n",
            r"'retriever\.default_top_k': Input should be a valid integer",
        ),
        ("embedding: [1, 2\n", r"not valid YAML at line \d+, column \d+"),
        ("- just\n- a list\n", r"top level must be a mapping"),
        ("colour: blue\n", r"unknown key 'colour'"),
        ("providers:\n  default: nope\n", r"default provider 'nope' is not defined"),
        # tried as a user: a second 'providers:' silently replaced the first ("default provider 'x' is not
        # defined (known: none configured)"), and "theme dark" under 'ui:' named a class of the code
        (
            "providers:\n  default: a\nui:\n  theme: nord\nproviders:\n  named: {}\n",
            r"not valid YAML at line 5, column 1: 'providers' is given twice \(first at line 1\)",
        ),
        ("ui:\n  theme: nord\n  theme: dark\n", r"at line 3, column 3: 'theme' is given twice \(first at line 2\)"),
        ("ui:\n  theme dark\n", r"'ui': should be a section of 'key: value' lines, not the text 'theme dark'$"),
        ("retriever: 3\n", r"'retriever': should be a section of 'key: value' lines, not the number 3$"),
        (
            "providers:\n  named:\n    a: {model: openai/x, fallbacks: [b]}\n",
            r"provider 'a' falls back to unknown provider 'b'",
        ),
    ],
)
def test_bad_config_names_file_key_and_reason(tmp_path: Path, text: str, expected: str) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text(text, encoding="utf-8")
    with pytest.raises(ConfigError) as caught:
        load_config(bad, env={"HOME": str(tmp_path)})
    assert str(bad) in str(caught.value)
    assert re.search(expected, str(caught.value)), str(caught.value)


def test_missing_explicit_config_file_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="config file not found"):
        load_config(tmp_path / "absent.yaml", env={"HOME": str(tmp_path)})


def test_cli_exits_2_on_bad_config_without_traceback(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text("retriever:\n  max_scan_wekes: 3\n", encoding="utf-8")
    assert main(["--config", str(bad), "doctor"]) == 2
    err = capsys.readouterr().err
    assert "max_scan_wekes" in err and str(bad) in err
    assert "Traceback" not in err


def test_installed_command_exits_2_before_any_ui(tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text("ui:\n  thme: dark\n", encoding="utf-8")
    done = subprocess.run(
        [sys.executable, "-m", "huichat", "--config", str(bad)],
        capture_output=True,
        text=True,
        timeout=60,
        env={"HOME": str(tmp_path), "PATH": "/usr/bin:/bin"},
    )
    assert done.returncode == 2
    assert "unknown key 'ui.thme'" in done.stderr
    assert "Traceback" not in done.stderr
    assert done.stdout == ""


def test_version_and_help() -> None:
    done = subprocess.run([sys.executable, "-m", "huichat", "--version"], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0 and done.stdout.startswith("huichat ")
    done = subprocess.run([sys.executable, "-m", "huichat", "--help"], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0
    for command in ("doctor", "recall", "show", "reindex", "bench", "serve", "keys", "mcp"):
        assert command in done.stdout


@pytest.mark.parametrize("argv", [["--bogus"], ["--config"], ["--provider", "x", "nonsense"]])
def test_a_mistake_on_the_command_line_gets_the_full_usage(argv: list[str]) -> None:
    # the chat alone is parsed without the commands' parsers; a mistake still gets their usage
    done = subprocess.run([sys.executable, "-m", "huichat", *argv], capture_output=True, text=True, timeout=60)
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert "COMMAND" in done.stderr and "huichat: error:" in done.stderr


@pytest.mark.parametrize("shape", ["block", "flow"])
def test_yaml_nested_500_deep_is_one_line_not_a_recursion_error(tmp_path: Path, shape: str) -> None:
    depth = 500
    if shape == "block":
        text = (
            "retriever:\n" + "".join("  " * (i + 1) + f"k{i}:\n" for i in range(depth)) + "  " * (depth + 1) + "x: 1\n"
        )
    else:
        text = "retriever: " + "[" * depth + "]" * depth + "\n"
    path = tmp_path / "deep.yaml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(ConfigError, match="nested too deeply") as caught:
        load_config(path, env={})
    assert "\n" not in str(caught.value)

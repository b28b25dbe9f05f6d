"""``huichat forget`` and ``huichat correct`` from the shell: recall, show and export honour them at once."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

from huichat.app.config import load_config
from huichat.app.wiring import runtime
from huichat.memory.turns import Message, TurnDraft
from tests.app.test_cli import _huichat, store
from tests.conftest import NOW

__all__ = ["store"]  # the fixture, shared with the other command tests


def test_forget_hides_a_turn_from_recall_show_and_export_and_undo_brings_it_back(
    store: tuple[Path, list[str]], tmp_path: Path
) -> None:
    config, ids = store
    assert ids[1] in _huichat(config, "recall", "WireGuard keepalive").stdout

    forgot = _huichat(config, "forget", f"id:{ids[1]}")
    assert forgot.returncode == 0, forgot.stderr
    assert forgot.stdout.strip() == f"forgot turn {ids[1]} (huichat forget --undo {ids[1]} brings it back)"

    recalled = _huichat(config, "recall", "WireGuard keepalive", "--context", "2")
    assert "WireGuard" not in recalled.stdout and f"[id:{ids[1]} " not in recalled.stdout
    shown = _huichat(config, "show", ids[1])
    assert shown.returncode == 1 and f"turn {ids[1]} is forgotten" in shown.stderr
    exported = _huichat(config, "export", "--format", "markdown", "--out", str(tmp_path / "out"))
    assert exported.returncode == 0, exported.stderr
    text = "".join(p.read_text(encoding="utf-8") for p in (tmp_path / "out").rglob("*.md"))
    assert "llama.cpp" in text and "WireGuard" not in text

    again = _huichat(config, "forget", ids[1])
    assert again.stdout.strip() == f"turn {ids[1]} was already forgotten"
    undone = _huichat(config, "forget", "--undo", ids[1])
    assert undone.stdout.strip() == f"restored turn {ids[1]}"
    assert ids[1] in _huichat(config, "recall", "WireGuard keepalive").stdout


def test_forget_names_the_later_turns_that_recalled_the_turn_and_the_commands_that_forget_them(
    store: tuple[Path, list[str]],
) -> None:
    config, ids = store
    kernel = runtime(load_config(config)).open_kernel()
    session = kernel.new_session(NOW - timedelta(days=1))
    answer = (Message("user", "VPN drops again?"), Message("assistant", "As before: WireGuard keepalive 25"))
    later = [
        kernel.append_turn(session, TurnDraft(answer, NOW - timedelta(days=1, minutes=-i), recalled_ids=(ids[1],))).id
        for i in range(7)
    ]
    kernel.close()

    forgot = _huichat(config, "forget", ids[1])
    assert forgot.returncode == 0, forgot.stderr
    assert forgot.stdout.splitlines() == [
        f"forgot turn {ids[1]} (huichat forget --undo {ids[1]} brings it back)",
        f"7 later turns recalled it and may quote it: {', '.join(later[:5])} and 2 more. To forget them too: "
        + "; ".join(f"huichat forget {i}" for i in later[:5])
        + " (forgetting this turn again lists the rest)",
    ]
    assert _huichat(config, "forget", later[0]).stdout.splitlines() == [
        f"forgot turn {later[0]} (huichat forget --undo {later[0]} brings it back)"
    ]
    assert _huichat(config, "forget", ids[1]).stdout.splitlines() == [
        f"turn {ids[1]} was already forgotten",
        f"6 later turns recalled it and may quote it: {', '.join(later[1:6])} and 1 more. To forget them too: "
        + "; ".join(f"huichat forget {i}" for i in later[1:6])
        + " (forgetting this turn again lists the rest)",
    ]
    assert "WireGuard" in _huichat(config, "recall", "WireGuard keepalive").stdout  # nothing else was forgotten
    # purged for good, the text may still be quoted later: said too, with the commands that purge those
    purged = _huichat(config, "forget", "--purge", ids[1])
    assert purged.returncode == 0, purged.stderr
    assert purged.stdout.splitlines()[1] == (
        f"6 later turns recalled it and may quote it: {', '.join(later[1:6])} and 1 more. To purge them too: "
        + "; ".join(f"huichat forget --purge {i}" for i in later[1:6])
        + " (purging this turn again lists the rest)"
    )
    assert _huichat(config, "forget", "--purge", ids[1]).stdout.splitlines()[1].startswith("6 later turns")


def test_forget_says_in_one_line_what_is_wrong_with_an_id(store: tuple[Path, list[str]]) -> None:
    config, _ = store
    bad = _huichat(config, "forget", "hello world")
    assert bad.returncode == 1 and bad.stderr.strip().endswith(
        "is not a turn id (6 lowercase letters or digits, e.g. a3f2c7)"
    )
    unknown = _huichat(config, "forget", "zzzzzz")
    assert unknown.returncode == 1 and unknown.stderr.strip() == "huichat: error: no turn with id zzzzzz"


def test_a_correction_is_shown_after_the_turn_and_found_by_recall(store: tuple[Path, list[str]]) -> None:
    config, ids = store
    corrected = _huichat(config, "correct", ids[0], "其实后来改用 vLLM 部署了")
    assert corrected.returncode == 0 and corrected.stdout.strip() == f"corrected turn {ids[0]}"
    shown = _huichat(config, "show", ids[0]).stdout
    said, _, note = shown.partition("\n✎ later correction (")
    assert "assistant: 用 llama.cpp 部署" in said and note.rstrip().endswith("): 其实后来改用 vLLM 部署了")
    assert f"[id:{ids[0]} " in _huichat(config, "recall", "vLLM").stdout

"""``huichat reindex --ray`` and ``huichat import --ray`` with a real local Ray (``ray.init(num_cpus=2)``), as real processes."""

from __future__ import annotations

import json
import subprocess
import sys
from datetime import timedelta
from pathlib import Path

import numpy as np
import pytest

from benchmarks.synthetic import write_chatgpt_export
from huichat.app.config import load_config
from huichat.app.wiring import runtime
from huichat.memory.turns import Message, TurnDraft
from tests.app.test_cli import ROOT, _config, _huichat
from tests.conftest import NOW

pytest.importorskip("ray", reason="Ray is the optional cluster extra; the dev install has it")

TOPICS = ["部署 llama.cpp 本地模型", "WireGuard keepalive at night", "蛋白质 每天 多少克", "Kinkaku-ji in autumn"]


def _vectors(config: Path) -> dict[str, np.ndarray]:
    kernel = runtime(load_config(config)).open_kernel(embed=False)
    try:
        assert kernel.pending_vectors == 0
        return kernel.store.vectors(kernel.store.all_ids())
    finally:
        kernel.close()


@pytest.fixture
def config(tmp_path: Path) -> Path:
    """A store of 90 turns in three sessions (the hash embedder: the workers' model loads at once)."""
    config = _config(tmp_path)
    kernel = runtime(load_config(config)).open_kernel()
    for day in range(3):
        session = kernel.new_session(NOW - timedelta(days=day + 1))
        for i in range(30):
            topic = TOPICS[(day + i) % len(TOPICS)]
            draft = TurnDraft(
                (Message("user", f"{topic} {day}-{i}?"), Message("assistant", f"about {topic}, take {i}")),
                NOW - timedelta(days=day + 1, minutes=-i),
                topic,
            )
            kernel.append_turn(session, draft)
    kernel.close()
    return config


def test_reindex_on_a_local_ray_gives_the_local_reindex_vectors(config: Path) -> None:
    local = _huichat(config, "reindex")
    assert local.returncode == 0, local.stderr
    expected = _vectors(config)
    on_ray = _huichat(config, "reindex", "--ray", "local")
    assert on_ray.returncode == 0, on_ray.stderr
    assert "reindexed 90 turns" in on_ray.stdout and "embedding on Ray (local): 2 workers" in on_ray.stdout
    found = _vectors(config)
    assert found.keys() == expected.keys() and len(found) == 90
    for turn_id, vector in expected.items():  # each turn has its own vector: none swapped between turns
        assert float(vector @ found[turn_id]) >= 0.9999, turn_id


def test_import_on_ray_resumes_what_was_left_waiting_and_the_turns_are_found(tmp_path: Path) -> None:
    config = _config(tmp_path)
    export = write_chatgpt_export(tmp_path / "conversations.json", 6, 150).path
    words = _huichat(config, "import", str(export), "--no-embed")
    assert words.returncode == 0, words.stderr
    done = _huichat(config, "import", str(export), "--ray", "local")
    assert done.returncode == 0, done.stderr
    assert "embedding on Ray (local)" in done.stdout and "searchable by meaning too" in done.stdout
    kernel = runtime(load_config(config)).open_kernel(embed=False)
    try:
        assert kernel.pending_vectors == 0 and kernel.count() > 40
        some = next(iter(kernel.store.texts().values()))
    finally:
        kernel.close()
    recall = _huichat(config, "recall", some[:40], "--json")
    assert json.loads(recall.stdout)["results"]


def test_ray_not_installed_is_one_line_before_anything_is_done(tmp_path: Path) -> None:
    config = _config(tmp_path)
    blocker = tmp_path / "no_ray"
    blocker.mkdir()
    (blocker / "ray.py").write_text("raise ImportError('no ray here')\n", encoding="utf-8")
    done = _huichat(config, "reindex", "--ray", "local", env={"PYTHONPATH": str(blocker)})
    assert done.returncode == 1
    assert "--ray needs Ray: pip install 'huichat[cluster]'" in done.stderr and "Traceback" not in done.stderr


def test_without_ray_the_commands_never_import_it(config: Path) -> None:
    probe = (
        "import sys\nfrom huichat.app.wiring import main\n"
        "try:\n    main(['--config', sys.argv[1], 'reindex'])\nexcept SystemExit:\n    pass\n"
        "assert 'ray' not in sys.modules, 'ray was imported'\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe, str(config)], capture_output=True, text=True, timeout=120, cwd=ROOT
    )
    assert done.returncode == 0, done.stderr

"""Commands under ``storage.uri`` work on the shared memory: ``huichat export`` on a machine that
never ran a replica writes what the replicas stored (its working copy comes from the store), and
``huichat reindex`` waits its turn behind the memory's upkeep on another replica."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from huichat.app.config import load_config
from huichat.memory.config import RetrieverConfig
from huichat.memory.embedding import HashEmbedder
from huichat.memory.lease import upkeep_lease
from huichat.memory.opening import open_kernel
from huichat.memory.turns import Message, TurnDraft
from tests.conftest import NOW, ZONE
from tests.storage.conftest import S3


def _config(folder: Path, s3: S3) -> Path:
    folder.mkdir()
    config = folder / "config.yaml"
    config.write_text(
        f"embedding:\n  model_path: hash\nstorage:\n  data_dir: {folder / 'data'}\n  uri: {s3.uri()}\n"
        f"  options: {json.dumps(s3.options)}\n",
        encoding="utf-8",
    )
    return config


def test_export_on_another_machine_writes_what_a_replica_stored(
    s3: S3, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from huichat.app.wiring import main

    replica = load_config(_config(tmp_path / "replica", s3))
    assert replica.location.transcripts_uri == f"{s3.uri()}/users/default/sessions"
    kernel = open_kernel(replica.location, HashEmbedder(64), RetrieverConfig(min_similarity=0.0), ZONE, now=NOW)
    try:
        handle = kernel.new_session(NOW)
        kernel.append_turn(handle, TurnDraft((Message("user", "我的猫叫豆豆"), Message("assistant", "记住了")), NOW))
    finally:
        kernel.close()
    elsewhere = _config(tmp_path / "laptop", s3)
    out = tmp_path / "export"
    assert main(["--config", str(elsewhere), "export", "--format", "markdown", "--out", str(out)]) == 0
    assert "exported 1 session (1 turn)" in capsys.readouterr().out
    [written] = out.glob("*.md")
    assert "我的猫叫豆豆" in written.read_text(encoding="utf-8")


def test_reindex_is_refused_while_another_replica_runs_the_memorys_upkeep(
    s3: S3, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from huichat.app.wiring import main

    config = _config(tmp_path / "laptop", s3)
    other = upkeep_lease(load_config(config).location)  # a replica compacting the same memory
    assert other is not None and other.acquire()
    assert main(["--config", str(config), "reindex"]) == 1
    assert "another process runs this memory's upkeep now" in capsys.readouterr().err
    other.release()
    assert main(["--config", str(config), "reindex"]) == 0
    assert other.acquire()  # the reindex gave it back

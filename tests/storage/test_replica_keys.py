"""Two ``huichat serve`` processes over one ``storage.uri`` (moto's S3 server): a key made with
``huichat keys create`` works on both, and once ``huichat keys revoke`` ran, both refuse it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import httpx

from benchmarks.fakellm import FakeLLM
from tests.serve.conftest import ROOT, free_port, start_server, stop_server, write_config
from tests.storage.conftest import S3

REVOKED_WITHIN = 2.0
"""Seconds within which every replica refuses a revoked key (the issue's bound)."""


def _replica_config(folder: Path, s3: S3, llm: FakeLLM, port: int) -> Path:
    folder.mkdir()
    config = write_config(folder, llm, port)
    shared = f"  uri: {s3.uri()}\n  options: {json.dumps(s3.options)}\n"
    text = config.read_text(encoding="utf-8").replace("storage:\n", f"storage:\n{shared}", 1)
    config.write_text(text, encoding="utf-8")
    return config


def _keys(config: Path, *arguments: str) -> str:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "HF_HUB_OFFLINE": "1"}
    done = subprocess.run(
        [sys.executable, "-m", "huichat", "--config", str(config), "keys", *arguments],
        capture_output=True,
        text=True,
        env=env,
        cwd=ROOT,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_a_key_revoked_through_one_replica_is_refused_by_both(s3: S3, tmp_path: Path) -> None:
    with FakeLLM() as llm:
        ports = [free_port(), free_port()]
        configs = [_replica_config(tmp_path / f"replica{n}", s3, llm, port) for n, port in enumerate(ports)]
        # made through replica 0's configuration, before either replica runs
        token = _keys(configs[0], "create", "--user", "alice").split()[-1]
        replicas = [start_server(c, p, c.parent / "serve.log") for c, p in zip(configs, ports, strict=True)]
        try:
            headers = {"Authorization": f"Bearer {token}"}
            urls = [f"http://127.0.0.1:{port}/v1/models" for port in ports]
            assert [httpx.get(u, headers=headers, timeout=30).status_code for u in urls] == [200, 200]
            key_id = token.split("_")[1]
            assert "revoked" in _keys(configs[1], "revoke", key_id)  # through the other replica's configuration
            revoked_at = time.monotonic()
            refused: dict[str, float] = {}
            while len(refused) < len(urls) and time.monotonic() - revoked_at < 10 * REVOKED_WITHIN:
                for url in urls:
                    if url not in refused and httpx.get(url, headers=headers, timeout=30).status_code == 401:
                        refused[url] = time.monotonic() - revoked_at
                time.sleep(0.05)
            assert sorted(refused) == sorted(urls), "a replica still accepts the revoked key"
            assert max(refused.values()) < REVOKED_WITHIN, refused
            assert "alice" in _keys(configs[1], "list")
            assert not any((tmp_path / f"replica{n}" / "data" / "api-keys.json").exists() for n in range(2))
        finally:
            for replica in replicas:
                stop_server(replica)

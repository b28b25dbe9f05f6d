"""Wrong secrets cost the server little: limited per key id and per client before argon2 runs,
verified off the event loop one at a time at a lower priority, and a key already verified is never slowed."""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx
import pytest
import uvicorn

from huichat.app.config import load_config
from huichat.app.serve.app import create_app
from huichat.app.serve.service import Service
from huichat.app.users.keys import KeyRing
from huichat.app.wiring import runtime
from tests.serve.conftest import free_port

CHECKS = 4
ORIGIN = "https://app.example"


class _CountingHasher:
    """argon2's hasher (the vendor seam) with its verify counted: how many ran, and how many at once."""

    def __init__(self, hasher: Any) -> None:
        self._hasher = hasher
        self._lock = threading.Lock()
        self.calls = 0
        self.running = 0
        self.most = 0
        self.niceness: set[int] = set()

    def hash(self, secret: str) -> str:
        return str(self._hasher.hash(secret))

    def verify(self, hashed: str, secret: str) -> bool:
        with self._lock:
            self.calls += 1
            self.running += 1
            self.most = max(self.most, self.running)
            self.niceness.add(os.getpriority(os.PRIO_PROCESS, threading.get_native_id()))
        try:
            return bool(self._hasher.verify(hashed, secret))
        finally:
            with self._lock:
                self.running -= 1


@dataclass
class Running:
    url: str
    keys: KeyRing
    hasher: _CountingHasher


@pytest.fixture
def running(tmp_path: Path) -> Iterator[Running]:
    config = tmp_path / "config.yaml"
    config.write_text(
        f"embedding:\n  model_path: hash\nstorage:\n  data_dir: {tmp_path / 'data'}\n"
        f"serve:\n  key_checks_per_minute: {CHECKS}\n  requests_per_minute: 1000\n  cors_origins: ['{ORIGIN}']\n",
        encoding="utf-8",
    )
    app = create_app(runtime(load_config(config)))
    service = app.state.service
    assert isinstance(service, Service)
    hasher = _CountingHasher(service.keys._hasher)
    service.keys._hasher = hasher  # type: ignore[assignment]
    port = free_port()
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    while not server.started:
        time.sleep(0.05)
    try:
        yield Running(f"http://127.0.0.1:{port}", service.keys, hasher)
    finally:
        server.should_exit = True
        thread.join(timeout=30)


def _status(url: str, token: str) -> httpx.Response:
    return httpx.get(f"{url}/v1/memory/users", headers={"Authorization": f"Bearer {token}"}, timeout=120)


def test_wrong_secrets_for_one_key_id_get_429_before_argon2_runs(running: Running) -> None:
    key, token = running.keys.create("alice", datetime.now(UTC))
    wrong = f"hc_{key.id}_{'x' * 43}"
    answers = [_status(running.url, wrong) for _ in range(CHECKS + 3)]
    assert [a.status_code for a in answers] == [401] * CHECKS + [429] * 3
    limited = answers[-1]
    assert int(limited.headers["Retry-After"]) >= 1
    assert limited.json()["error"]["type"] == "rate_limit_error" and key.id in limited.json()["error"]["message"]
    assert running.hasher.calls == 1  # one wrong secret resent: argon2 once; the refused never reached it
    # answered before routing: a path that does not exist gets the same 429, not a 404
    elsewhere = httpx.get(
        f"{running.url}/v1/no/such/route", headers={"Authorization": f"Bearer {wrong}", "Origin": ORIGIN}
    )
    assert elsewhere.status_code == 429 and elsewhere.json()["error"]["type"] == "rate_limit_error"
    assert int(elsewhere.headers["Retry-After"]) >= 1
    assert elsewhere.headers["Access-Control-Allow-Origin"] == ORIGIN  # a browser app can read why
    assert _status(running.url, token).status_code == 429  # the key id is limited, whoever asks


def test_a_flood_from_one_client_is_limited_across_key_ids_and_verified_keys_go_on(running: Running) -> None:
    _, good = running.keys.create("bob", datetime.now(UTC))
    assert _status(running.url, good).status_code == 200  # verified once: remembered
    ids = [running.keys.create(f"user{i}", datetime.now(UTC))[0].id for i in range(8)]
    tokens = [f"hc_{key_id}_{'y' * 43}" for key_id in ids for _ in range(4)]
    with ThreadPoolExecutor(16) as pool:
        codes = list(pool.map(lambda token: _status(running.url, token).status_code, tokens))
        during = pool.submit(_status, running.url, good).result()
    # bob's check succeeded and cost the address nothing; the flood had the whole allowance
    assert codes.count(401) == CHECKS and codes.count(429) == len(tokens) - CHECKS
    assert running.hasher.calls <= CHECKS + 1
    assert running.hasher.most == 1  # one at a time (argon2 uses every core already), off the event loop
    # at a lower priority than the server's: a flood takes the CPU replies leave
    assert running.hasher.niceness == {min(19, os.getpriority(os.PRIO_PROCESS, 0) + 10)}
    assert during.status_code == 200


def test_many_users_keys_from_one_address_all_get_in(running: Running) -> None:
    # a proxy brings every user's key from one address; after a restart each is checked once
    tokens = [running.keys.create(f"user{i}", datetime.now(UTC))[1] for i in range(CHECKS * 3)]
    with ThreadPoolExecutor(4) as pool:
        codes = list(pool.map(lambda token: _status(running.url, token).status_code, tokens))
    assert codes == [200] * len(tokens)
    assert running.hasher.calls == len(tokens)
    wrong = f"hc_{KeyRing.key_id(tokens[0])}_{'z' * 43}"
    assert [_status(running.url, wrong).status_code for _ in range(CHECKS + 1)] == [401] * CHECKS + [429]


def test_a_client_resending_a_stale_key_does_not_lock_others_behind_its_address_out(running: Running) -> None:
    # one app behind a proxy keeps sending a revoked key, another an id that never existed
    stale, stale_token = running.keys.create("old", datetime.now(UTC))
    running.keys.revoke(stale.id, datetime.now(UTC))
    unknown = "hc_deadbeef_" + "q" * 43
    for token in (stale_token, unknown):
        codes = [_status(running.url, token).status_code for _ in range(CHECKS + 2)]
        assert codes == [401] * CHECKS + [429] * 2  # limited per key id
    # a colleague's key, never checked yet (a new key, or any key after a restart), from the same address
    _, fresh = running.keys.create("carol", datetime.now(UTC))
    assert _status(running.url, fresh).status_code == 200
    assert running.hasher.calls == 1  # none of the stale checks ran argon2


def test_the_429_says_whether_the_key_or_the_address_is_limited(running: Running) -> None:
    ids = [running.keys.create(f"user{i}", datetime.now(UTC))[0].id for i in range(CHECKS)]
    for key_id in ids:  # a wrong secret for each: argon2 runs, the address spends its allowance
        assert _status(running.url, f"hc_{key_id}_{'w' * 43}").status_code == 401
    key, token = running.keys.create("dave", datetime.now(UTC))
    limited = _status(running.url, token)
    assert limited.status_code == 429
    message = limited.json()["error"]["message"]
    assert "from this address" in message and key.id not in message
    assert f"retry in {limited.headers['Retry-After']} s" in message


def test_a_damaged_key_file_is_a_json_503_saying_so_not_a_plain_500(running: Running) -> None:
    _, token = running.keys.create("wendy", datetime.now(UTC))
    keys_file = Path(running.keys.where)
    kept = keys_file.read_bytes()
    keys_file.write_text("{half a file", encoding="utf-8")
    try:
        for sent in (token, f"hc_deadbeef_{'v' * 43}", None):
            headers = {"Authorization": f"Bearer {sent}"} if sent else {}
            answer = httpx.get(f"{running.url}/v1/memory/users", headers=headers, timeout=60)
            assert answer.status_code == 503, answer.text
            assert answer.json()["error"]["message"].startswith("the server cannot read its API keys")
            assert int(answer.headers["Retry-After"]) >= 1
    finally:
        keys_file.write_bytes(kept)
    assert _status(running.url, token).status_code == 200  # mended: the same key works

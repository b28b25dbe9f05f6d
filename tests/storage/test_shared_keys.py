"""API keys in the shared store: made through one replica, refused by every one once revoked."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime
from pathlib import Path

from huichat.app.users.keys import KEYS_FILE, KeyRing
from huichat.memory.objectstore import ObjectStore
from tests.storage.conftest import S3

NOW = datetime(2026, 11, 29, 10, 0, tzinfo=UTC)


def test_a_key_revoked_through_one_replica_is_refused_by_the_other(s3: S3, tmp_path: Path) -> None:
    a, b = (KeyRing(tmp_path / name, ObjectStore(s3.uri(), s3.options), refresh_seconds=0.0) for name in ("a", "b"))
    key, token = a.create("alice", NOW)
    assert b.verify(token) == key and b.remembered(token) == key
    b.revoke(key.id, NOW)
    assert a.remembered(token) is None and a.verify(token) is None
    assert b.verify(token) is None
    assert [k.revoked for k in a.entries()] == [NOW.isoformat(timespec="seconds")]
    assert not (tmp_path / "a" / KEYS_FILE).exists()  # nothing about keys on the replica's disk


def test_keys_made_at_once_through_two_replicas_are_all_kept(s3: S3, tmp_path: Path) -> None:
    rings = [KeyRing(tmp_path, ObjectStore(s3.uri(), s3.options), refresh_seconds=0.0) for _ in range(2)]
    with ThreadPoolExecutor(4) as pool:
        made = list(pool.map(lambda n: rings[n % 2].create(f"user{n}", NOW)[0], range(8)))
    assert sorted(k.id for k in rings[0].entries()) == sorted(k.id for k in made)


def test_a_replica_reads_the_keys_once_a_refresh_not_once_a_request(s3: S3, tmp_path: Path) -> None:
    store = ObjectStore(s3.uri(), s3.options)
    ring = KeyRing(tmp_path, store, refresh_seconds=3600.0)
    _, token = KeyRing(tmp_path, ObjectStore(s3.uri(), s3.options)).create("alice", NOW)
    assert ring.verify(token) is not None
    before = store.round_trips
    for _ in range(20):
        assert ring.remembered(token) is not None
    assert store.round_trips == before

"""The shared store's conditional writes against a real S3 HTTP API (moto's server)."""

from __future__ import annotations

import json
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from huichat.memory.config import StorageConfig
from huichat.memory.objectstore import Conflict, ObjectStore, StoreError, configured_store
from tests.storage.conftest import S3

ROOT = Path(__file__).resolve().parents[2]


def test_create_writes_once_and_replace_needs_the_version_read(s3: S3) -> None:
    store = ObjectStore(s3.uri(), s3.options)
    first = store.create("a/one.json", b"1")
    with pytest.raises(Conflict):
        store.create("a/one.json", b"2")
    second = store.replace("a/one.json", b"3", first)
    with pytest.raises(Conflict):
        store.replace("a/one.json", b"4", first)  # the version it names was replaced
    stored = store.get("a/one.json")
    assert stored is not None and (stored.body, stored.etag) == (b"3", second)
    assert store.get("a/none.json") is None
    assert store.names("a") == ["a/one.json"]


def test_racing_read_modify_writes_lose_nothing(s3: S3) -> None:
    # two "replicas" (clients of their own) adding to one object at the same time
    stores = [ObjectStore(s3.uri(), s3.options) for _ in range(2)]

    def add(number: int) -> None:
        store = stores[number % 2]
        store.update("counter.json", lambda body: json.dumps([*json.loads(body or b"[]"), number]).encode())

    with ThreadPoolExecutor(6) as pool:
        list(pool.map(add, range(24)))
    stored = stores[0].get("counter.json")
    assert stored is not None and sorted(json.loads(stored.body)) == list(range(24))
    assert sum(s.round_trips for s in stores) >= 48  # a read and a write each, at least


def test_a_bad_uri_or_an_unreachable_store_is_one_clear_error() -> None:
    with pytest.raises(StoreError, match="s3://bucket/prefix"):
        ObjectStore("/srv/huichat", {})
    store = ObjectStore("s3://nowhere/x", {"endpoint": "http://127.0.0.1:9", "region": "us-east-1"})
    with pytest.raises(StoreError, match="nowhere"):
        store.get("x")


def test_the_single_machine_default_imports_no_s3_client() -> None:
    assert configured_store(StorageConfig()) is None
    code = (
        "import sys; from huichat.app.config import load_config; from huichat.app.users.keys import KeyRing; "
        "import huichat.app.serve.app; KeyRing.configured(load_config()).entries(); "
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('boto3', 'botocore', 'obstore')))"
    )
    shown = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=True)
    assert shown.stdout.strip() == "[]"

"""Object-store round trips of one memory on S3: what a request costs in requests to the store.

Run: ``python -m benchmarks.s3trips`` (about 30 s). It starts moto's S3 server (a real S3 HTTP
API, from the dev extras) on loopback behind a counting WSGI layer, so every request LanceDB
(its Rust object_store) and huichat's own client send is counted, then opens a memory whose
index is on it (the embedder is the tests' hash embedder: the model does not change what is
sent to the store, only the vector's values; its transcripts are in the store too, as with
``storage.uri``) and counts the requests of: opening, storing a turn (its transcript segment
and its index row), a search within the read-consistency interval and one after it, bringing
a replica up to date (what every request of a replica starts with), and an API-key check.
A search reads the rows anew when another version of the table appeared (the held rows and
vectors of an exact search): that costs a GET per data fragment, which is why compaction
matters more on a store than on a disk. The numbers are counts, not times: multiply by a real store's round trip (S3 in-region:
tens of ms for small objects) to see what they cost. BENCHMARKS.md records them.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import tempfile
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import boto3

from huichat.app.users.keys import KeyRing
from huichat.memory.config import RetrieverConfig
from huichat.memory.embedding import HashEmbedder
from huichat.memory.location import MemoryLocation
from huichat.memory.objectstore import ObjectStore
from huichat.memory.opening import REMOTE_CONSISTENCY_SECONDS, open_kernel
from huichat.memory.results import SearchRequest
from huichat.memory.turns import Message, TurnDraft

_OPTIONS = {
    "allow_http": "true",
    "region": "us-east-1",
    "aws_access_key_id": "bench",
    "aws_secret_access_key": "bench-secret",
}


class CountingS3:
    """moto's S3 server on a free loopback port; ``requests`` counts what reached it, by method."""

    def __init__(self) -> None:
        from moto.moto_server.werkzeug_app import DomainDispatcherApplication, create_backend_app
        from werkzeug.serving import make_server

        self.requests: Counter[str] = Counter()
        self._lock = threading.Lock()
        inner = DomainDispatcherApplication(create_backend_app)

        def counted(environ: dict[str, Any], start_response: Callable[..., Any]) -> Iterable[bytes]:
            with self._lock:
                self.requests[environ["REQUEST_METHOD"]] += 1
            result: Iterable[bytes] = inner(environ, start_response)
            return result

        self._server = make_server("127.0.0.1", 0, counted, threaded=True)
        self.endpoint = f"http://127.0.0.1:{self._server.server_port}"
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()

    @property
    def total(self) -> int:
        with self._lock:
            return sum(self.requests.values())

    @contextmanager
    def counting(self, into: dict[str, float], name: str, times: int = 1) -> Iterator[None]:
        """Record the requests (per repetition) of the block under ``name``."""
        before = self.total
        yield
        into[name] = round((self.total - before) / times, 1)

    def stop(self) -> None:
        self._server.shutdown()


def measure(turns: int) -> dict[str, Any]:
    """The counts (see the module's docstring)."""
    os.environ.setdefault("LANCEDB_LOG", "error")
    logging.getLogger("werkzeug").setLevel(logging.ERROR)
    s3 = CountingS3()
    options = {**_OPTIONS, "endpoint": s3.endpoint}
    boto3.client(
        "s3",
        endpoint_url=s3.endpoint,
        region_name="us-east-1",
        aws_access_key_id="bench",
        aws_secret_access_key="bench-secret",
    ).create_bucket(Bucket="huichat-bench")
    uri = "s3://huichat-bench/huichat"
    now = datetime.now(UTC)
    counts: dict[str, Any] = {}
    try:
        with tempfile.TemporaryDirectory() as folder:
            root = Path(folder)

            def opened(name: str) -> Any:
                location = MemoryLocation(
                    root / name, root / name / "sessions", f"{uri}/index.lancedb", options, f"{uri}/sessions"
                )
                return open_kernel(location, HashEmbedder(384), RetrieverConfig(min_similarity=0.0), UTC, now=now)

            with s3.counting(counts, "open, new index"):
                kernel = opened("a")
            session = kernel.new_session(now)
            with s3.counting(counts, f"store a turn (each of {turns})", turns):
                for number in range(turns):
                    draft = TurnDraft((Message("user", f"question {number} 猫"), Message("assistant", "answer")), now)
                    kernel.append_turn(session, draft)
            time.sleep(REMOTE_CONSISTENCY_SECONDS * 1.5)
            with s3.counting(counts, "search, first after the consistency interval"):
                kernel.search(SearchRequest("猫 question", now))
            with s3.counting(counts, "search, within the consistency interval (each of 10)", 10):
                for _ in range(10):
                    kernel.search(SearchRequest("猫 question", now))
            with s3.counting(counts, "compaction (maintain: fragments merged, old versions cleaned)"):
                kernel.maintain(force=True)
            time.sleep(REMOTE_CONSISTENCY_SECONDS * 1.5)
            with s3.counting(counts, "search, first after the interval, compacted table"):
                kernel.search(SearchRequest("猫 question", now))
            with s3.counting(counts, "open, existing index (another replica)"):
                other = opened("b")
            with s3.counting(counts, "bring a replica up to date, nothing new (each of 10)", 10):
                for _ in range(10):
                    other.pull_shared()
            kernel.append_turn(session, TurnDraft((Message("user", "one more"), Message("assistant", "ok")), now))
            with s3.counting(counts, "bring a replica up to date after another's turn"):
                other.pull_shared()
            other.close()
            kernel.close()
            store = ObjectStore(uri, options)
            _, token = KeyRing(root, store).create("alice", now)
            ring = KeyRing(root / "replica", ObjectStore(uri, options))
            ring.verify(token)
            with s3.counting(counts, "API key check of a verified key (each of 100)", 100):
                for _ in range(100):
                    ring.remembered(token)
            with s3.counting(counts, "keys read again (KeyRing.refresh: twice a second per replica)"):
                ring.refresh()
    finally:
        s3.stop()
    counts["requests by method, whole run"] = dict(s3.requests)
    return counts


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--turns", type=int, default=20, help="turns stored (default 20)")
    args = parser.parse_args()
    print(json.dumps(measure(args.turns), indent=1, ensure_ascii=False))


if __name__ == "__main__":
    main()

"""Object-store round trips of one memory on S3: what a request costs in requests to the store.

Run: ``python -m benchmarks.s3trips`` (about 30 s). It starts moto's S3 server (a real S3 HTTP
API, from the dev extras) on loopback in its own process, counting at the server
(``benchmarks.counted_s3``, as ``bench serve --storage`` does), so every request LanceDB
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
import os
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from benchmarks.counted_s3 import CountedS3, free_port
from huichat.app.users.keys import KeyRing
from huichat.memory.config import RetrieverConfig
from huichat.memory.embedding import HashEmbedder
from huichat.memory.location import MemoryLocation
from huichat.memory.objectstore import ObjectStore
from huichat.memory.opening import REMOTE_CONSISTENCY_SECONDS, open_kernel
from huichat.memory.results import SearchRequest
from huichat.memory.turns import Message, TurnDraft


class _Counting:
    """Counts per block of what reached the store (``CountedS3``: moto in its own process)."""

    def __init__(self, s3: CountedS3) -> None:
        self.s3 = s3

    @property
    def total(self) -> int:
        return sum(self.s3.counts().values())

    @contextmanager
    def counting(self, into: dict[str, float], name: str, times: int = 1) -> Iterator[None]:
        """Record the requests (per repetition) of the block under ``name``."""
        before = self.total
        yield
        into[name] = round((self.total - before) / times, 1)


def measure(turns: int) -> dict[str, Any]:
    """The counts (see the module's docstring)."""
    os.environ.setdefault("LANCEDB_LOG", "error")
    server = CountedS3.start(free_port())
    s3 = _Counting(server)
    options, uri = server.options, server.uri
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
        counts["requests by method and what they reached, whole run"] = dict(server.counts())
    finally:
        server.stop()
    return counts


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--turns", type=int, default=20, help="turns stored (default 20)")
    args = parser.parse_args()
    print(json.dumps(measure(args.turns), indent=1, ensure_ascii=False))


if __name__ == "__main__":
    main()

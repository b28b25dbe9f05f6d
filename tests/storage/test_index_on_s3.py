"""The index on object storage reached with ``storage.options`` (moto's S3 server, real LanceDB)."""

from __future__ import annotations

import time
from pathlib import Path

from huichat.memory.config import RetrieverConfig
from huichat.memory.embedding import HashEmbedder
from huichat.memory.kernel import MemoryKernel
from huichat.memory.location import MemoryLocation
from huichat.memory.opening import open_kernel
from huichat.memory.results import SearchRequest
from huichat.memory.turns import Message, TurnDraft
from tests.conftest import NOW, ZONE
from tests.storage.conftest import S3


def _open(s3: S3, root: Path, *, reconcile: bool = True) -> MemoryKernel:
    location = MemoryLocation(root, root / "sessions", f"{s3.uri()}/index.lancedb", s3.options)
    return open_kernel(
        location, HashEmbedder(64), RetrieverConfig(min_similarity=0.0), ZONE, now=NOW, reconcile=reconcile
    )


def test_a_turn_written_to_an_index_on_s3_is_found_by_another_process_s_open(s3: S3, tmp_path: Path) -> None:
    writer = _open(s3, tmp_path / "a")
    reader = _open(s3, tmp_path / "b", reconcile=False)  # another machine: nothing of a's on its disk
    try:
        assert reader.count() == 0
        session = writer.new_session(NOW)
        turn = writer.append_turn(
            session, TurnDraft((Message("user", "我的猫叫豆豆"), Message("assistant", "记住了")), NOW)
        )
        deadline = time.monotonic() + 10  # a bound, not a speed target: the read-consistency interval is 1 s
        while reader.count() == 0 and time.monotonic() < deadline:
            time.sleep(0.1)
        found = reader.search(SearchRequest("猫叫什么", NOW))
        assert [hit.turn.id for hit in found.hits] == [turn.id]
        assert writer.store.conflicts_retried == 0
    finally:
        writer.close()
        reader.close()

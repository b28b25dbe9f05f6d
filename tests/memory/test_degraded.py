"""When the index fails, memory degrades: turns still reach their transcripts and come back on reopen."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from huichat.memory.config import RetrieverConfig
from huichat.memory.errors import IndexUnavailable
from huichat.memory.health import IndexState
from huichat.memory.opening import MemoryLocation, open_transcripts_only
from huichat.memory.results import SearchRequest
from huichat.memory.turns import Message, TurnDraft
from tests.conftest import NOW, ZONE, open_kernel


def _draft(text: str) -> TurnDraft:
    return TurnDraft((Message("user", text), Message("assistant", "ok")), NOW)


def test_an_index_lost_mid_way_degrades_and_reopening_brings_every_turn_back(tmp_path: Path) -> None:
    kernel = open_kernel(tmp_path)
    session = kernel.new_session(NOW)
    first = kernel.append_turn(session, _draft("before the loss"))
    shutil.rmtree(tmp_path / "index.lancedb")
    second = kernel.append_turn(session, _draft("after the loss"))  # no exception: the transcript has it
    assert kernel.health.state is IndexState.UNAVAILABLE and "index" in kernel.health.reason
    assert second.prev_id == first.id
    with pytest.raises(IndexUnavailable, match="memory is unavailable"):
        kernel.search(SearchRequest("loss", NOW))
    with pytest.raises(IndexUnavailable):
        kernel.recall_by_id(first.id)
    third = kernel.append_turn(session, _draft("still degraded"))
    kernel.close()
    text = next((tmp_path / "sessions").glob("*/*/chat_*.md")).read_text(encoding="utf-8")
    assert all(t in text for t in ("before the loss", "after the loss", "still degraded"))
    reopened = open_kernel(tmp_path)
    try:
        assert reopened.health.state is IndexState.OK
        assert reopened.count() == 3
        assert reopened.recall_by_id(third.id).turn is not None
    finally:
        reopened.close()


def test_memory_without_an_index_writes_transcripts_only(tmp_path: Path) -> None:
    location = MemoryLocation.under(tmp_path)
    kernel = open_transcripts_only(location, RetrieverConfig(), ZONE, "cannot open the memory index: disk on fire")
    assert kernel.health.state is IndexState.UNAVAILABLE
    turn = kernel.append_turn(kernel.new_session(NOW), _draft("written while the index is down"))
    with pytest.raises(IndexUnavailable, match="disk on fire"):
        kernel.search(SearchRequest("index", NOW))
    kernel.close()
    assert not (tmp_path / "index.lancedb").exists()
    healed = open_kernel(tmp_path)
    try:
        assert healed.recall_by_id(turn.id).turn is not None
    finally:
        healed.close()

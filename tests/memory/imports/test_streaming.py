"""Large exports are streamed: the first conversation arrives long before the file is read."""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import IO

import pytest

from benchmarks.synthetic import write_chatgpt_export
from huichat.memory.imports import chatgpt
from huichat.memory.imports.reader import iter_conversations
from huichat.memory.imports.sources import Source, expand
from huichat.memory.imports.summary import summarise


class _Counted:
    """A stream that remembers how many bytes were taken from it."""

    def __init__(self, stream: IO[bytes]) -> None:
        self.stream = stream
        self.taken = 0

    def read(self, size: int = -1) -> bytes:
        data = self.stream.read(size)
        self.taken += len(data)
        return data

    def __enter__(self) -> _Counted:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stream.close()


def _counting(source: Source, streams: list[_Counted]) -> Source:
    def opener() -> IO[bytes]:
        streams.append(_Counted(source.open()))
        return streams[-1]  # type: ignore[return-value]

    return Source(source.label, opener, source.modified, source.path)


@pytest.fixture(scope="module")
def large(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("large") / "conversations.json"
    write_chatgpt_export(path, conversations=150, messages=4_500, seed=7)
    return path


def test_the_first_conversation_is_yielded_after_reading_a_small_part_of_the_file(large: Path) -> None:
    streams: list[_Counted] = []
    (source,) = expand(large)
    conversations = chatgpt.read(_counting(source, streams))
    first = next(conversations)
    size = large.stat().st_size
    assert size > 1_000_000
    assert first.title == "Conversation 0"
    assert streams[-1].taken < size / 20
    assert sum(1 for _ in conversations) == 149
    assert streams[-1].taken == size


def test_a_zip_member_is_streamed_too(tmp_path: Path) -> None:
    path = tmp_path / "export.zip"
    write_chatgpt_export(path, conversations=150, messages=4_500, seed=3, as_zip=True)
    source = next(s for s in expand(path) if s.label.endswith(":conversations.json"))
    streams: list[_Counted] = []
    conversations = chatgpt.read(_counting(source, streams))
    next(conversations)
    taken = streams[-1].taken
    rest = sum(1 for _ in conversations)
    assert rest == 149 and taken < streams[-1].taken / 20


def test_the_synthetic_export_reads_back_exactly_as_written(tmp_path: Path) -> None:
    written = write_chatgpt_export(tmp_path / "c.json", conversations=60, messages=1_800, seed=11)
    summary = summarise(iter_conversations(written.path))
    assert (summary.conversations, summary.messages) == (60, written.messages)
    assert summary.alternative_branches == written.alternatives
    assert sum(n for _, n in summary.skipped) == written.hidden
    assert summary.messages + summary.alternative_messages + written.hidden == written.nodes
    assert summary.times_estimated > 0 and summary.first is not None and summary.first.year == 2023


def test_the_synthetic_export_is_deterministic_from_its_seed(tmp_path: Path) -> None:
    def digest(name: str, seed: int, as_zip: bool = False) -> str:
        path = tmp_path / name
        write_chatgpt_export(path, conversations=5, messages=100, seed=seed, as_zip=as_zip)
        return hashlib.sha256(path.read_bytes()).hexdigest()

    assert digest("a.json", 1) == digest("b.json", 1) != digest("c.json", 2)
    assert digest("a.zip", 1, as_zip=True) == digest("b.zip", 1, as_zip=True)

"""Hostile input is refused in bounded time and memory: deep nesting, huge values, zip bombs."""

from __future__ import annotations

import io
import json
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

import pytest
import zstandard

from benchmarks.synthetic import write_chatgpt_export
from huichat.memory.config import ImportsConfig
from huichat.memory.imports.model import ImportFormatError, SourceFormat
from huichat.memory.imports.reader import ImportReader
from tests.memory.imports.helpers import FIXTURES

CHATGPT = FIXTURES / "chatgpt" / "conversations.json"
_MIB = 1 << 20


def _nested(depth: int) -> str:
    return "[" * depth + "]" * depth


def _read(path: Path, limits: ImportsConfig | None = None, fmt: SourceFormat | None = None) -> int:
    return sum(1 for _ in ImportReader([path], fmt, limits=limits or ImportsConfig()).conversations())


@pytest.mark.parametrize(
    ("name", "content"),
    [
        ("plain.json", '[{"x": ' + _nested(5_000) + "}]"),
        ("chatgpt.json", '[{"mapping": {}, "current_node": "a", "x": ' + _nested(5_000) + "}]"),
        ("chat.jsonl", '{"messages": [], "x": ' + _nested(5_000) + "}\n"),
    ],
    ids=["array", "chatgpt", "jsonl"],
)
def test_json_nested_deeper_than_the_limit_is_one_clear_line(tmp_path: Path, name: str, content: str) -> None:
    path = tmp_path / name
    path.write_text(content, encoding="utf-8")
    with pytest.raises(ImportFormatError, match=r"nested deeper than 64 levels.*imports\.max_depth") as caught:
        _read(path)
    assert str(caught.value).startswith(str(path)) and "\n" not in str(caught.value)


def test_a_forced_format_is_held_to_the_same_depth(tmp_path: Path) -> None:
    path = tmp_path / "chat.jsonl"
    path.write_text('{"messages": [{"role": "user", "content": ' + _nested(200) + "}]}\n", encoding="utf-8")
    with pytest.raises(ImportFormatError, match="nested deeper than 64"):
        _read(path, fmt=SourceFormat.JSONL)


_PROBE = """
import resource, sys
from pathlib import Path
resource.setrlimit(resource.RLIMIT_AS, (1 << 30, 1 << 30))
from huichat.memory.imports.model import ImportFormatError
from huichat.memory.imports.reader import ImportReader
try:
    sum(1 for _ in ImportReader([Path(sys.argv[1])]).conversations())
except ImportFormatError as exc:
    print(exc)
"""


def test_nesting_a_hundred_thousand_deep_stays_in_bounded_memory(tmp_path: Path) -> None:
    path = tmp_path / "deep.json"
    path.write_text('[{"mapping": {}, "current_node": "a", "x": ' + _nested(100_000) + "}]", encoding="utf-8")
    done = subprocess.run(
        [sys.executable, "-c", _PROBE, str(path)], capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert "nested deeper than 64 levels" in done.stdout


def test_a_conversation_bigger_than_the_value_limit_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "conversations.json"
    huge = {"mapping": {}, "current_node": "a", "title": "x" * (3 * _MIB)}
    path.write_text(json.dumps([json.loads(CHATGPT.read_text(encoding="utf-8"))[0], huge]), encoding="utf-8")
    with pytest.raises(ImportFormatError, match=r"item 2 .*more than 2 MiB.*imports\.max_value_bytes"):
        _read(path, ImportsConfig(max_value_bytes=2 * _MIB))
    assert _read(path, ImportsConfig(max_value_bytes=4 * _MIB)) >= 1


def _zip(path: Path, name: str, data: bytes) -> Path:
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr(name, data)
    return path


def test_a_zip_bomb_is_refused_before_it_is_unpacked(tmp_path: Path) -> None:
    lines = b'{"messages": []}\n' * 4_000_000  # 68 MB that deflate packs ~1000:1
    bomb = _zip(tmp_path / "export.zip", "chats.jsonl", lines)
    with pytest.raises(ImportFormatError, match=r"export\.zip:chats\.jsonl: unpacks .* more than .*imports\.max_ratio"):
        _read(bomb)


def test_an_archive_unpacking_past_the_size_limit_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "export.zip"
    write_chatgpt_export(path, conversations=200, messages=6_000, seed=5, as_zip=True)
    assert _read(path, ImportsConfig(max_unpacked_bytes=64 * _MIB)) == 200
    with pytest.raises(
        ImportFormatError, match=r"export\.zip: unpacks to more than 4 MiB.*imports\.max_unpacked_bytes"
    ):
        _read(path, ImportsConfig(max_unpacked_bytes=4 * _MIB))


def test_a_tar_zst_archive_is_held_to_the_same_limits(tmp_path: Path) -> None:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as tar:
        data = b"\n" * (40 * _MIB)
        info = tarfile.TarInfo("2025-01.md")
        info.size = len(data)
        tar.addfile(info, io.BytesIO(data))
    path = tmp_path / "2025-01.tar.zst"
    path.write_bytes(zstandard.ZstdCompressor().compress(buffer.getvalue()))
    with pytest.raises(ImportFormatError, match=r"2025-01\.tar\.zst: unpacks .*imports\.max_ratio"):
        _read(path)


def test_reading_reports_its_progress_in_bytes(tmp_path: Path) -> None:
    seen: list[tuple[str, int, int | None]] = []
    reader = ImportReader([CHATGPT], on_progress=lambda label, done, total: seen.append((label, done, total)))
    assert sum(1 for _ in reader.conversations()) == 4
    size = CHATGPT.stat().st_size
    assert seen and all(label == str(CHATGPT) and total == size for label, _, total in seen)
    assert seen[-1][1] == size

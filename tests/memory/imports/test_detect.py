"""Formats told by shape, never by name; folders, zips and splits; one clear line for bad input."""

from __future__ import annotations

import json
import shutil
import zipfile
from pathlib import Path

import pytest

from huichat.memory.imports.detect import detect
from huichat.memory.imports.model import ImportFormatError, SourceFormat
from huichat.memory.imports.reader import ImportReader
from huichat.memory.imports.sources import expand
from tests.memory.imports.helpers import FIXTURES, database, read_all

CHATGPT = FIXTURES / "chatgpt" / "conversations.json"


@pytest.mark.parametrize(
    ("fixture", "expected"),
    [
        ("chatgpt/conversations.json", SourceFormat.CHATGPT),
        ("claude/conversations.json", SourceFormat.CLAUDE),
        ("deepseek/conversations.json", SourceFormat.DEEPSEEK),
        ("deepseek/web_session.json", SourceFormat.DEEPSEEK_WEB),
        ("chat.jsonl", SourceFormat.JSONL),
    ],
)
def test_json_formats_are_told_by_shape_whatever_the_name(tmp_path: Path, fixture: str, expected: SourceFormat) -> None:
    renamed = tmp_path / "foo.txt"
    shutil.copy(FIXTURES / fixture, renamed)
    (source,) = expand(renamed)
    assert detect(source) is expected


@pytest.mark.parametrize(
    ("name", "expected"), [("llm_legacy", SourceFormat.LLM), ("llm_032", SourceFormat.LLM), ("elia", SourceFormat.ELIA)]
)
def test_sqlite_databases_are_told_by_their_tables(tmp_path: Path, name: str, expected: SourceFormat) -> None:
    (source,) = expand(database(tmp_path, name).rename(tmp_path / "data.bin"))
    assert detect(source) is expected


def test_a_byte_order_mark_does_not_hide_the_shape(tmp_path: Path) -> None:
    path = tmp_path / "bom.json"
    path.write_bytes(b"\xef\xbb\xbf" + CHATGPT.read_bytes())
    assert set(read_all(path)) == {"conv-a", "conv-b", "conv-c", "conv-d"}


@pytest.mark.parametrize(
    ("content", "found"),
    [
        ('[{"id": 1, "email": "x@example.com"}]', "found a JSON array of objects with keys email, id"),
        ('{"mobile": "123", "id": "u"}', "found a JSON object with keys id, mobile"),
        ("[]", "an empty JSON array: no conversations in it"),
        ("[1, 2, 3]", "found a JSON array whose items are not objects"),
        ("{}", "an empty JSON object"),
        ("# just some notes\n", "found neither JSON, SQLite nor a huichat transcript"),
        ("", "an empty file"),
        ('[{"mapping": {}, "title": "x"}]', "force one with --format chatgpt|deepseek"),
        (
            '[{"header": "Gemini Apps", "title": "Prompted hi", "time": "2025-01-01T00:00:00Z"}]',
            "Google Takeout activity",
        ),
    ],
)
def test_an_unknown_shape_is_one_clear_line_naming_the_file(tmp_path: Path, content: str, found: str) -> None:
    path = tmp_path / "mystery.json"
    path.write_text(content)
    with pytest.raises(ImportFormatError) as raised:
        read_all(path)
    message = str(raised.value)
    assert message.startswith(f"{path}: ") and found in message and "\n" not in message


def test_a_truncated_export_is_one_clear_line(tmp_path: Path) -> None:
    path = tmp_path / "conversations.json"
    path.write_bytes(CHATGPT.read_bytes()[:-200])
    with pytest.raises(
        ImportFormatError, match=r"conversations\.json: malformed JSON in record \d+: the file ends in the middle"
    ):
        read_all(path)


def test_a_wrong_shape_inside_a_forced_format_is_one_clear_line(tmp_path: Path) -> None:
    path = tmp_path / "x.json"
    path.write_text('[{"title": "no mapping"}]')
    with pytest.raises(ImportFormatError, match=r"x\.json: conversation 0 has no mapping; expected a ChatGPT export"):
        read_all(path, SourceFormat.CHATGPT)


def test_format_forces_a_file_that_detection_would_refuse(tmp_path: Path) -> None:
    item = json.loads(CHATGPT.read_text())[0]
    del item["current_node"]
    path = tmp_path / "x.json"
    path.write_text(json.dumps([item]))
    with pytest.raises(ImportFormatError):
        read_all(path)
    assert read_all(path, SourceFormat.CHATGPT)["conv-a"].branch_heuristic


def _chatgpt_zip(path: Path, members: dict[str, bytes]) -> Path:
    with zipfile.ZipFile(path, "w") as archive:
        for name, data in members.items():
            archive.writestr(name, data)
    return path


def test_a_zip_is_read_from_its_members_and_other_files_are_listed_as_ignored(tmp_path: Path) -> None:
    export = _chatgpt_zip(
        tmp_path / "export.zip",
        {
            "user.json": b'{"id": "user-1", "email": "me@example.com"}',
            "conversations.json": CHATGPT.read_bytes(),
            "message_feedback.json": b"[]",
            "chat.html": b"<html><script>var jsonData = []</script></html>",
            "file-abc.dat": b"\x89PNG\r\n\x1a\n",
        },
    )
    reader = ImportReader([export])
    assert {c.conversation_id for c in reader.conversations()} == {"conv-a", "conv-b", "conv-c", "conv-d"}
    assert [(r.label, r.format) for r in reader.read] == [(f"{export}:conversations.json", SourceFormat.CHATGPT)]
    assert sorted(i.label.rsplit(":", 1)[1] for i in reader.ignored) == [
        "chat.html",
        "file-abc.dat",
        "message_feedback.json",
        "user.json",
    ]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["export.zip"]  # nothing extracted to disk


def test_splits_are_all_read_in_their_natural_order(tmp_path: Path) -> None:
    items = json.loads(CHATGPT.read_text())
    for number, item in zip((2, 10, 1), items[:3], strict=True):
        (
            tmp_path / f"conversations-{number:03d}.json" if number < 10 else tmp_path / f"conversations-{number}.json"
        ).write_text(json.dumps([item]))
    assert list(read_all(tmp_path)) == ["conv-c", "conv-a", "conv-b"]
    zipped = _chatgpt_zip(tmp_path.parent / "split.zip", {p.name: p.read_bytes() for p in tmp_path.iterdir()})
    assert list(read_all(zipped)) == ["conv-c", "conv-a", "conv-b"]


def test_a_folder_of_mixed_exports_reads_each_in_its_own_format(tmp_path: Path) -> None:
    folder = tmp_path / "history"
    folder.mkdir()
    shutil.copy(FIXTURES / "claude" / "conversations.json", folder / "claude.json")
    shutil.copy(FIXTURES / "chat.jsonl", folder / "chat.jsonl")
    database(folder, "elia")
    (folder / "README.txt").write_text("how I exported these")
    reader = ImportReader([folder])
    conversations = list(reader.conversations())
    assert {c.source for c in conversations} == {SourceFormat.CLAUDE, SourceFormat.JSONL, SourceFormat.ELIA}
    assert [i.label for i in reader.ignored] == [str(folder / "README.txt")]


def test_format_inside_a_folder_reads_only_that_format(tmp_path: Path) -> None:
    shutil.copy(FIXTURES / "claude" / "conversations.json", tmp_path / "claude.json")
    shutil.copy(CHATGPT, tmp_path / "chatgpt.json")
    reader = ImportReader([tmp_path], SourceFormat.CHATGPT)
    assert {c.source for c in reader.conversations()} == {SourceFormat.CHATGPT}
    assert [i.reason for i in reader.ignored] == ["claude, not the chatgpt asked for"]


def test_a_folder_with_nothing_readable_is_an_error(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("nothing")
    with pytest.raises(ImportFormatError, match=r"no file in it could be imported"):
        read_all(tmp_path)
    with pytest.raises(ImportFormatError, match=r"no such file or folder"):
        read_all(tmp_path / "missing")


def test_a_database_inside_a_zip_is_passed_over_with_a_reason(tmp_path: Path) -> None:
    db = database(tmp_path, "elia")
    export = _chatgpt_zip(
        tmp_path / "mixed.zip", {"elia.sqlite": db.read_bytes(), "conversations.json": CHATGPT.read_bytes()}
    )
    reader = ImportReader([export])
    assert len(list(reader.conversations())) == 4
    assert "extract it and import the file" in reader.ignored[0].reason


def test_a_corrupt_sqlite_file_is_one_clear_line(tmp_path: Path) -> None:
    path = tmp_path / "broken.db"
    path.write_bytes(b"SQLite format 3\x00" + b"\x00" * 50)
    with pytest.raises(ImportFormatError, match=r"broken\.db: cannot (open|read) the SQLite database"):
        read_all(path)

"""Where import data comes from: files, folders, zips and huichat's ``.tar.zst`` archives.

A ``Source`` is one readable stream with a label for messages (``export.zip:conversations.json``).
Archive members are read from the archive, never extracted to disk. JSON is streamed with
ijson, so a file of hundreds of MB is read one conversation at a time. Everything is read
within the ``imports:`` limits (``bounded``), and every stream reports the bytes it read.
"""

from __future__ import annotations

import io
import re
import sqlite3
import tarfile
import zipfile
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import IO, Any, TypeVar

import ijson
import zstandard

from huichat.memory.imports.bounded import BOM, JsonStream, Metered, Reading, Unpacking, bounded_events
from huichat.memory.imports.model import ImportFormatError

ZIP_MAGIC = b"PK\x03\x04"
ZSTD_MAGIC = b"\x28\xb5\x2f\xfd"
SQLITE_MAGIC = b"SQLite format 3\x00"


@dataclass(frozen=True)
class Source:
    """One file or archive member to read."""

    label: str
    opener: Callable[[], IO[bytes]]
    modified: datetime
    """The file's own time: the base for times a source does not have (JSONL)."""
    path: Path | None = None
    """The file on disk, when it is one (SQLite needs a real file)."""
    size: int | None = None
    """Its size in bytes (unpacked), when known: for the progress line."""
    reading: Reading = field(default_factory=Reading)
    """The limits it is read within and who hears of the progress."""

    def open(self) -> IO[bytes]:
        """A fresh binary stream from the start (its reads are reported to ``reading.on_progress``)."""
        try:
            stream = self.opener()
        except (OSError, zipfile.BadZipFile, tarfile.TarError, zstandard.ZstdError) as exc:
            raise ImportFormatError(f"{self.label}: cannot read: {exc}") from exc
        except RuntimeError as exc:  # zipfile's answer to an encrypted member
            raise ImportFormatError(f"{self.label}: cannot read: {exc}") from exc
        report = self.reading.on_progress
        if report is None:
            return stream
        done = 0

        def step(size: int) -> None:
            nonlocal done
            done += size
            report(self.label, done, self.size)

        return Metered(stream, step)  # type: ignore[return-value]  # reads and closes, all a source's users do

    def head(self, size: int = 65536) -> bytes:
        """The first ``size`` bytes."""
        with self.open() as stream:
            try:
                return stream.read(size)
            except (OSError, zipfile.BadZipFile, zstandard.ZstdError, EOFError) as exc:
                raise ImportFormatError(f"{self.label}: cannot read: {exc}") from exc


def _natural(name: str) -> list[Any]:
    # conversations-2.json before conversations-10.json
    return [int(piece) if piece.isdigit() else piece for piece in re.split(r"(\d+)", name)]


def _mtime(path: Path) -> datetime:
    return datetime.fromtimestamp(path.stat().st_mtime, UTC)


def _file(path: Path, label: str, reading: Reading) -> Source:
    return Source(label, lambda: path.open("rb"), _mtime(path), path, path.stat().st_size, reading)


def _zip_members(path: Path, label: str, reading: Reading) -> Iterator[Source]:
    try:
        with zipfile.ZipFile(path) as archive:
            infos = [info for info in archive.infolist() if not info.is_dir()]
    except (OSError, zipfile.BadZipFile) as exc:
        raise ImportFormatError(f"{label}: not a readable zip: {exc}") from exc
    unpacking = Unpacking(label, reading.limits)
    for info in sorted(infos, key=lambda i: _natural(i.filename)):
        member = f"{label}:{info.filename}"

        def opener(name: str = info.filename, member: str = member, info: zipfile.ZipInfo = info) -> IO[bytes]:
            # the sizes a zip declares bound what zipfile unpacks: a bomb is refused before a byte is
            unpacking.check_ratio(member, info.file_size, info.compress_size)
            # the member stream keeps the archive's file open until it is closed
            return Metered(zipfile.ZipFile(path).open(name), unpacking.add)  # type: ignore[return-value]

        yield Source(member, opener, _mtime(path), size=info.file_size, reading=reading)


def _tar_members(path: Path, label: str, reading: Reading) -> Iterator[Source]:
    """Members of a huichat month archive (``.tar.zst``), read in one streaming pass."""
    unpacking = Unpacking(label, reading.limits)
    packed = path.stat().st_size

    def step(size: int) -> None:
        unpacking.add(size)
        unpacking.check_ratio(label, unpacking.total, packed)

    try:
        with (
            path.open("rb") as raw,
            zstandard.ZstdDecompressor().stream_reader(raw) as stream,
            tarfile.open(fileobj=Metered(stream, step), mode="r|") as tar,  # type: ignore[call-overload]
        ):
            for member in tar:
                handle = tar.extractfile(member) if member.isfile() else None
                if handle is None:
                    continue
                data = handle.read()  # one session transcript, within the archive's budget

                def opener(data: bytes = data) -> IO[bytes]:
                    return io.BytesIO(data)

                yield Source(f"{label}:{member.name}", opener, _mtime(path), size=len(data), reading=reading)
    except (OSError, tarfile.TarError, zstandard.ZstdError) as exc:
        raise ImportFormatError(f"{label}: not a readable .tar.zst archive: {exc}") from exc


def expand(path: Path, reading: Reading | None = None) -> Iterator[Source]:
    """Every file under ``path`` (a file, a folder, a zip or a ``.tar.zst``), in a stable order."""
    reading = reading or Reading()
    if not path.exists():
        raise ImportFormatError(f"{path}: no such file or folder")
    if path.is_dir():
        for child in sorted((p for p in path.rglob("*") if p.is_file()), key=lambda p: _natural(p.as_posix())):
            yield from _expand_file(child, str(child), reading)
        return
    yield from _expand_file(path, str(path), reading)


def _expand_file(path: Path, label: str, reading: Reading) -> Iterator[Source]:
    try:
        with path.open("rb") as handle:
            magic = handle.read(4)
    except OSError as exc:
        raise ImportFormatError(f"{label}: cannot read: {exc.strerror or exc}") from exc
    if magic == ZIP_MAGIC:
        yield from _zip_members(path, label, reading)
    elif magic == ZSTD_MAGIC:
        yield from _tar_members(path, label, reading)
    else:
        yield _file(path, label, reading)


def first_char(head: bytes) -> str:
    """The first significant character of a text file (after a BOM and whitespace)."""
    text = head.removeprefix(BOM).lstrip(b" \t\r\n")
    return chr(text[0]) if text else ""


def json_error(source: Source, exc: Exception, expected: str, record: int | None = None) -> ImportFormatError:
    """One clear line for a JSON file that is cut short or broken; ``record``: which of its values
    (a line of JSON Lines, an item of the top array) the parser was in, when the file has several."""
    reason = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    if "premature EOF" in reason or "Incomplete JSON" in reason:
        reason = "the file ends in the middle of the JSON (truncated?)"
    where = f" in record {record}" if record is not None else ""
    return ImportFormatError(f"{source.label}: malformed JSON{where}: {reason}; expected {expected}")


@contextmanager
def json_events(source: Source, *, multiple: bool) -> Iterator[Iterator[Any]]:
    """ijson's parse events for the source, within the limits (``bounded``); ``multiple``: JSON Lines."""
    limits = source.reading.limits
    with source.open() as stream:
        yield bounded_events(JsonStream(stream, source.label, limits), source.label, limits, multiple=multiple)


_Part = TypeVar("_Part", list[Any], dict[str, Any])


def required(item: Mapping[str, Any], key: str, kind: type[_Part], where: str, expected: str) -> _Part:
    """``item[key]`` when it is a ``kind`` (the list of messages, the mapping of nodes); else the
    one line that says which conversation lacks it and what the reader expected."""
    value = item.get(key)
    if not isinstance(value, kind):
        raise ImportFormatError(f"{where} has no {key}; expected {expected}")
    return value


def json_values(source: Source, expected: str) -> Iterator[tuple[int, Any]]:
    """The items of a top-level array, or the top-level values of a file of JSON objects
    (one object, or JSON Lines), one at a time, with their position.

    Numbers come as ``Decimal`` so times keep every digit the source wrote.
    """
    opening = first_char(source.head(4096))
    if opening not in ("[", "{"):
        raise ImportFormatError(f"{source.label}: not JSON; expected {expected}")
    prefix, multiple = ("item", False) if opening == "[" else ("", True)
    read = 0  # values read whole: a parse error is in the next one
    try:
        with json_events(source, multiple=multiple) as events:
            for index, item in enumerate(ijson.items(events, prefix)):
                read = index + 1
                yield index, item
    except ijson.JSONError as exc:
        raise json_error(source, exc, expected, read + 1) from exc
    except (OSError, zipfile.BadZipFile, zstandard.ZstdError, EOFError) as exc:
        raise ImportFormatError(f"{source.label}: cannot read: {exc}") from exc


@contextmanager
def open_sqlite(source: Source, what: str) -> Iterator[sqlite3.Connection]:
    """The source's SQLite database, opened read-only (another program may be writing it) and
    closed after; an error reading it is one line naming ``what`` (``"elia database"``)."""
    if source.path is None:
        raise ImportFormatError(f"{source.label}: a SQLite database inside an archive; extract it and import the file")
    try:
        connection = sqlite3.connect(f"{source.path.resolve().as_uri()}?mode=ro", uri=True)
        connection.row_factory = sqlite3.Row
        connection.execute("select count(*) from sqlite_master").fetchone()
    except sqlite3.Error as exc:
        raise ImportFormatError(f"{source.label}: cannot open the SQLite database: {exc}") from exc
    try:
        yield connection
    except sqlite3.Error as exc:
        raise ImportFormatError(f"{source.label}: cannot read the {what}: {exc}") from exc
    finally:
        connection.close()


def sqlite_tables(connection: sqlite3.Connection) -> frozenset[str]:
    """The names of the tables in a database."""
    rows = connection.execute("select name from sqlite_master where type in ('table', 'view')").fetchall()
    return frozenset(str(row[0]) for row in rows)


def column(row: sqlite3.Row, name: str) -> object:
    """A column that older schemas may not have (``None`` then)."""
    names = row.keys()  # `name in row` would search the values
    return row[name] if name in names else None

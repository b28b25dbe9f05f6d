"""Monthly archives: old transcripts packed into ``archive/<YYYY-MM>.tar.zst`` and still read.

Packing never loses a transcript: the archive is written beside its final name, read back
and compared, and only then are the packed files removed. Archived turns stay in the index
(recallable as before) and are read again by ``huichat reindex``.
"""

from __future__ import annotations

import io
import os
import re
import tarfile
from collections import defaultdict
from datetime import date
from pathlib import Path

import zstandard

from huichat.memory.errors import KernelError

ARCHIVE_DIR = "archive"
_DAY = re.compile(r"^(\d{4})-(\d{2})-\d{2}$")


def _read_members(archive: Path) -> dict[str, bytes]:
    with archive.open("rb") as raw, zstandard.ZstdDecompressor().stream_reader(raw) as stream:
        data = stream.read()
    members: dict[str, bytes] = {}
    with tarfile.open(fileobj=io.BytesIO(data), mode="r:") as tar:
        for member in tar.getmembers():
            if member.isfile():
                extracted = tar.extractfile(member)
                if extracted is not None:
                    members[member.name] = extracted.read()
    return members


def _write_members(archive: Path, members: dict[str, bytes], level: int) -> None:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:") as tar:
        for name in sorted(members):
            info = tarfile.TarInfo(name)
            info.size = len(members[name])
            tar.addfile(info, io.BytesIO(members[name]))
    partial = archive.with_name(archive.name + ".partial")
    with partial.open("wb") as handle:
        handle.write(zstandard.ZstdCompressor(level=level).compress(buffer.getvalue()))
        handle.flush()
        os.fsync(handle.fileno())
    if _read_members(partial) != members:
        partial.unlink(missing_ok=True)
        raise KernelError(f"archive {archive.name} did not read back intact; nothing was removed")
    partial.replace(archive)


def pack_months(sessions_dir: Path, before: date, level: int = 3) -> list[str]:
    """Pack the transcripts of months before ``before`` (by their day folder); returns the months packed."""
    by_month: dict[str, list[Path]] = defaultdict(list)
    for path in sessions_dir.glob("*/*/chat_*.md"):
        match = _DAY.match(path.parent.name)
        if match and date(int(match.group(1)), int(match.group(2)), 1) < before.replace(day=1):
            by_month[f"{match.group(1)}-{match.group(2)}"].append(path)
    archive_dir = sessions_dir / ARCHIVE_DIR
    packed = []
    for month, paths in sorted(by_month.items()):
        archive_dir.mkdir(parents=True, exist_ok=True)
        archive = archive_dir / f"{month}.tar.zst"
        members = _read_members(archive) if archive.exists() else {}
        for path in paths:
            name = path.relative_to(sessions_dir).as_posix()
            members[name] = members.get(name, b"") + path.read_bytes()
        _write_members(archive, members, level)
        for path in paths:
            path.unlink()
            for folder in (path.parent, path.parent.parent):
                if folder != sessions_dir and not any(folder.iterdir()):
                    folder.rmdir()
        packed.append(month)
    return packed


def archived_texts(sessions_dir: Path, session_file: str) -> list[str]:
    """The packed parts of one transcript, oldest month first (none for a session never packed)."""
    folder = sessions_dir / ARCHIVE_DIR
    day = session_file.split("/")[1] if session_file.count("/") >= 2 else ""
    months = sorted(folder.glob("*.tar.zst")) if day and folder.is_dir() else []
    return [
        text
        for archive in months
        if day.startswith(archive.name.removesuffix(".tar.zst")) and (text := read_archive(archive).get(session_file))
    ]


def read_archive(archive: Path) -> dict[str, str]:
    """The transcripts inside one archive, by their relative path."""
    try:
        # a transcript packed after a crash may end inside a character: its reader copes
        return {name: data.decode("utf-8", errors="surrogateescape") for name, data in _read_members(archive).items()}
    except (OSError, tarfile.TarError, zstandard.ZstdError) as exc:
        raise KernelError(f"cannot read archive {archive}: {exc}") from exc

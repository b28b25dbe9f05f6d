"""Reading one transcript by its relative path, without ever leaving the user's transcript folder.

Only the layout huichat writes is accepted — ``<YYYY>-W<ww>/<YYYY-MM-DD>/chat_<session>.md``
— so ``..``, absolute paths, backslashes and encoded tricks fail the pattern (400); a
symlink anywhere on the way, or a file that resolves outside the folder, is not found (404).
A forgotten turn's block is left out, as exports leave it out (its tombstone stays).
"""

from __future__ import annotations

import re
from pathlib import Path

from huichat.app.serve.errors import ApiError
from huichat.memory.archive import ARCHIVE_DIR, read_archive
from huichat.memory.errors import KernelError
from huichat.memory.transcript_parse import parse_transcript, turn_block

TRANSCRIPT_PATH = re.compile(r"^(\d{4}-W\d{2})/((\d{4}-\d{2})-\d{2})/chat_[A-Za-z0-9_-][A-Za-z0-9_.-]{0,120}\.md$")


def _on_disk(root: Path, relative: str) -> Path | None:
    """The file, if it is a regular file inside ``root`` reached without any symlink."""
    base = root.resolve()
    current = root
    for part in relative.split("/"):
        current = current / part
        if current.is_symlink():
            return None
    if not current.is_file():
        return None
    resolved = current.resolve()
    return resolved if resolved.is_relative_to(base) else None


def read_transcript(root: Path, relative: str) -> str:
    """The text of transcript ``relative`` under ``root`` (live, or packed in its month's archive)."""
    match = TRANSCRIPT_PATH.match(relative)
    if match is None or ".." in relative:
        raise ApiError(400, "path must look like 2026-W48/2026-11-29/chat_<session>.md (relative, no '..')")
    if not root.is_dir() or root.is_symlink():
        raise ApiError(404, f"no transcript '{relative}'")
    found = _on_disk(root, relative)
    if found is not None:
        try:
            return _without_forgotten(found.read_bytes().decode("utf-8"), relative)
        except (OSError, UnicodeDecodeError) as exc:
            raise ApiError(404, f"transcript '{relative}' cannot be read: {exc}") from None
    archive = root / ARCHIVE_DIR / f"{match.group(3)}.tar.zst"
    if archive.is_file() and not archive.is_symlink() and not (root / ARCHIVE_DIR).is_symlink():
        try:
            members = read_archive(archive)
        except KernelError:
            members = {}
        if relative in members:
            return _without_forgotten(members[relative], relative)
    raise ApiError(404, f"no transcript '{relative}'")


def _without_forgotten(text: str, relative: str) -> str:
    """``text`` without the blocks of the turns a tombstone forgot (undo brings them back)."""
    for turn_id in parse_transcript(text, relative).forgotten:
        found = turn_block(text, turn_id)
        if found is not None:
            text = text[: found[0]] + text[found[1] :]
    return text

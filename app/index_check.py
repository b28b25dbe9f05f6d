"""Whether the memory index changed since ``huichat doctor`` last read it whole.

The full check imports lancedb (about a second on its own), reads every row in a child
process and runs a search: most of doctor's time, spent again on an index nobody has
touched since. So doctor keeps its last good check (``<data_dir>/.doctor-check.json``) with
a fingerprint of the index's files: each file's path, size, inode, mtime and ctime. A write,
a truncation, a flipped byte written by any program, a deleted, replaced or foreign file,
even a file whose mtime was put back, each change it (the ctime cannot be set). While the
fingerprint is unchanged and no reader died, doctor reports that check and when it ran,
without lancedb; ``doctor --full`` reads again. Damage that leaves every one of these alone
(the disk's own bit rot) is found by ``--full`` or by the next command that reads it.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
from dataclasses import asdict, dataclass
from pathlib import Path

RECORD = ".doctor-check.json"


@dataclass(frozen=True)
class GoodCheck:
    """A full check that found the index sound."""

    fingerprint: str
    checked: str
    """When it ran (ISO 8601, local time, to the second)."""
    detail: str
    """What its row said."""


def fingerprint(index_dir: Path) -> str | None:
    """A digest of every file under ``index_dir`` as the file system describes it (None: no folder)."""
    if not index_dir.is_dir():
        return None
    digest = hashlib.sha256()
    for root, folders, files in os.walk(index_dir):
        folders.sort()
        for name in sorted(files):
            path = Path(root, name)
            try:
                status = path.lstat()
            except OSError:
                continue  # removed while walked: the next look sees the change
            described = (
                path.relative_to(index_dir),
                status.st_size,
                status.st_ino,
                status.st_mtime_ns,
                status.st_ctime_ns,
            )
            digest.update(repr(described).encode("utf-8", "surrogateescape") + b"\n")
    return digest.hexdigest()


def last_good(data_dir: Path, current: str | None) -> GoodCheck | None:
    """The last good check, if it saw the index as ``current`` is."""
    if current is None:
        return None
    try:
        found = GoodCheck(**json.loads((data_dir / RECORD).read_text(encoding="utf-8")))
    except (OSError, ValueError, TypeError):
        return None  # none yet, or unreadable: a full check
    return found if found.fingerprint == current else None


def remember(data_dir: Path, check: GoodCheck) -> None:
    """Keep ``check`` (mode 0600, replaced atomically); best effort, like any cache."""
    temporary = data_dir / f"{RECORD}.{os.getpid()}.tmp"
    with contextlib.suppress(OSError):
        descriptor = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(descriptor, "w", encoding="utf-8") as handle:
            json.dump(asdict(check), handle)
        temporary.replace(data_dir / RECORD)


def forget(data_dir: Path) -> None:
    """A check failed: the next one reads the index whatever its fingerprint."""
    with contextlib.suppress(OSError):
        (data_dir / RECORD).unlink(missing_ok=True)

"""Which transcript states the index holds, so that an open reads only the transcripts that changed."""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Iterable
from pathlib import Path

_INDEX_KEY = "@index"
"""The manifest's entry naming the index (``TurnStore.instance``) its other entries are about."""


class Manifest:
    """Which transcript states are fully indexed (size and mtime) in which index, read once
    and kept in memory.

    Entries written for another index (deleted and made again, rebuilt by another process,
    restored from elsewhere) are dropped when read: they say nothing about this one. A stale
    manifest only makes the next open re-read a file, so it is written lazily.
    """

    def __init__(self, path: Path | None, sessions_dir: Path, index: str = "") -> None:
        self.path = path
        self.sessions_dir = sessions_dir
        self.index = index
        self.stale = False
        """Entries were found for another index than this one (and dropped)."""
        self._entries: dict[str, list[int]] | None = None
        self._dirty = False

    @property
    def entries(self) -> dict[str, list[int]]:
        """``relative path -> [size, mtime_ns]``."""
        if self._entries is None:
            self._entries = {}
            if self.path is not None and self.path.exists():
                try:
                    data = json.loads(self.path.read_text(encoding="utf-8"))
                except (OSError, ValueError):
                    data = {}
                if isinstance(data, dict):
                    entries = {str(k): list(v) for k, v in data.items() if isinstance(v, list)}
                    if str(data.get(_INDEX_KEY, "")) == self.index:
                        self._entries = entries
                    else:
                        self.stale, self._dirty = bool(entries), True
        return self._entries

    def rebind(self, index: str) -> None:
        """The index was made again: nothing is indexed in it yet."""
        self.index = index
        self.clear()

    def record(self, states: dict[str, list[int]]) -> None:
        """Remember these states as indexed."""
        self.entries.update(states)
        self._dirty = True

    def record_files(self, relpaths: Iterable[str]) -> None:
        """Remember the current state of these transcripts as indexed."""
        for rel in relpaths:
            try:
                stat = (self.sessions_dir / rel).stat()
            except OSError:
                self.entries.pop(rel, None)
                continue
            self.entries[rel] = [stat.st_size, stat.st_mtime_ns]
        self._dirty = True

    def forget(self, relpaths: Iterable[str]) -> None:
        """These transcripts are not (fully) indexed: read them again next time."""
        for rel in relpaths:
            self.entries.pop(rel, None)
        self._dirty = True

    def clear(self) -> None:
        """Nothing is indexed (the index is being rebuilt): said on disk at once, so that a
        rebuild cut short by a crash is started again at the next open."""
        self._entries, self._dirty = {}, True
        self.flush()

    def flush(self) -> None:
        """Write the manifest if it changed; a data folder that cannot be written keeps it in memory."""
        if self.path is None or not self._dirty or self._entries is None:
            return
        temporary = self.path.with_suffix(f".{os.getpid()}.tmp")
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            temporary.write_text(json.dumps({_INDEX_KEY: self.index, **self._entries}), encoding="utf-8")
            temporary.replace(self.path)
        except OSError:
            with contextlib.suppress(OSError):
                temporary.unlink()
            return
        self._dirty = False

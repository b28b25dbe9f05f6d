"""Live sync (the seed's 自动同步): watch the transcripts folder, debounce, then say what changed.

A transcript edited by hand, or written by another huichat process, is reconciled into the
index while the app runs: ``TranscriptWatcher`` (watchdog) collects changed transcript and
archive paths and, once nothing changed for ``debounce`` seconds, calls ``on_change`` with
them from its own timer thread. The caller runs ``MemoryKernel.reconcile`` (which keeps
access statistics, tier, importance and clusters, and skips files the index already holds,
so this process's own writes cost one ``stat``).
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path

from watchdog.events import FileSystemEvent, FileSystemEventHandler
from watchdog.observers import Observer

from huichat.memory.archive import ARCHIVE_DIR

OnChange = Callable[[set[str]], None]


def is_transcript(relative: str) -> bool:
    """True for ``<week>/<day>/chat_<session>.md`` and ``archive/<month>.tar.zst``."""
    parts = relative.split("/")
    if len(parts) == 3 and parts[2].startswith("chat_") and parts[2].endswith(".md"):
        return True
    return len(parts) == 2 and parts[0] == ARCHIVE_DIR and parts[1].endswith(".tar.zst")


class TranscriptWatcher(FileSystemEventHandler):
    """Watches ``root`` recursively; reports changed transcripts once they settle."""

    def __init__(self, root: Path, on_change: OnChange, debounce: float = 1.5) -> None:
        super().__init__()
        self.root = root
        self.on_change = on_change
        self.debounce = debounce
        self._changed: set[str] = set()
        self._timer: threading.Timer | None = None
        self._lock = threading.Lock()
        self._observer: Observer | None = None  # type: ignore[valid-type]

    def start(self) -> None:
        """Start watching (the folder is created when missing)."""
        self.root.mkdir(parents=True, exist_ok=True)
        observer = Observer()
        observer.daemon = True
        observer.schedule(self, str(self.root), recursive=True)
        observer.start()
        self._observer = observer

    def stop(self) -> None:
        """Stop watching; a pending report is dropped (the next open reconciles anyway)."""
        with self._lock:
            if self._timer is not None:
                self._timer.cancel()
                self._timer = None
        if self._observer is not None:
            self._observer.stop()
            self._observer = None

    def on_any_event(self, event: FileSystemEvent) -> None:
        if event.is_directory or event.event_type in ("opened", "closed_no_write"):
            return
        for raw in (event.src_path, getattr(event, "dest_path", "")):
            if not raw:
                continue
            path = Path(raw if isinstance(raw, str) else raw.decode())
            try:
                relative = path.relative_to(self.root).as_posix()
            except ValueError:
                continue
            if is_transcript(relative):
                self._note(relative)

    def _note(self, relative: str) -> None:
        with self._lock:
            self._changed.add(relative)
            if self._timer is not None:
                self._timer.cancel()
            self._timer = threading.Timer(self.debounce, self._fire)
            self._timer.daemon = True
            self._timer.start()

    def _fire(self) -> None:
        with self._lock:
            changed, self._changed = self._changed, set()
            self._timer = None
        if changed:
            self.on_change(changed)

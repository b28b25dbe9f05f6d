"""One process at a time computes the vectors that turns wait for, per memory.

The chat catches up in the background and ``huichat import`` or ``reindex`` in the foreground;
both take the waiting turns oldest first, so two processes open on one memory embedded the same
batch and one of them threw its work away at the commit (a trial: the import ran at a third of
its pace while the chat was open, and the chat's count of turns left kept growing). Now a
process embeds a batch only while it holds ``embedding.lock`` in the data folder (``flock``,
taken without waiting and let go after each batch). A foreground command also holds
``embedding.wanted`` for the whole of its catch-up; a background catch-up starts no batch while
another process holds that, and one in flight stops after the part it is computing (what it
finished is stored), so the command the user waits for goes first. The one that does not hold
the lease waits and looks again. A folder that cannot hold the files (read-only)
coordinates nothing: each process embeds as before, and the commit still stores each vector once.
"""

from __future__ import annotations

import contextlib
import fcntl
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import IO

_LOOK = 0.5
"""Seconds between a background batch's looks at whether a command wants the lease."""


class EmbeddingLease:
    """The lease of the memory whose files are in ``folder``."""

    def __init__(self, folder: Path) -> None:
        self._work = folder / "embedding.lock"
        self._wanted = folder / "embedding.wanted"
        self._foreground: IO[str] | None = None

    @contextlib.contextmanager
    def foreground(self) -> Iterator[None]:
        """Go before background catch-ups while the block runs (a command the user waits for)."""
        handle = _opened(self._wanted)
        if handle is not None:
            _take(handle)
        self._foreground = handle
        try:
            yield
        finally:
            self._foreground = None
            if handle is not None:
                handle.close()

    @contextlib.contextmanager
    def batch(self) -> Iterator[bool]:
        """Hold the lease while the block runs; yields False when another process holds it (or, in
        the background, when another process's foreground command wants it)."""
        if self._foreground is None and _held_elsewhere(self._wanted):
            yield False
            return
        handle = _opened(self._work)
        if handle is None:
            yield True
            return
        try:
            try:
                fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError:
                yield False
                return
            yield True
        finally:
            handle.close()

    def stop_for_others(self, stop: threading.Event) -> threading.Event:
        """``stop`` for a batch of this process's: in the background, also set once another process's
        foreground command wants the lease (looked at every half second)."""
        return stop if self._foreground is not None else _Yielding(stop, self._wanted)


class _Yielding(threading.Event):
    """Set when ``stop`` is, or once another process holds ``wanted`` (only ``is_set`` is asked: the
    catch-up looks between its parts and steps)."""

    def __init__(self, stop: threading.Event, wanted: Path) -> None:
        super().__init__()
        self._stop = stop
        self._wanted = wanted
        self._looked = -_LOOK  # the first question looks

    def is_set(self) -> bool:
        if self._stop.is_set():
            return True
        if not super().is_set() and time.monotonic() - self._looked >= _LOOK:
            self._looked = time.monotonic()
            if _held_elsewhere(self._wanted):
                self.set()
        return super().is_set()


def _opened(path: Path) -> IO[str] | None:
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        return path.open("a+")
    except OSError:
        return None


def _take(handle: IO[str]) -> None:
    """Hold ``handle``'s exclusive lock, tried again for a while: a background catch-up's look
    (``_held_elsewhere``) holds it shared for a moment. Still held after that, another command holds
    it: the two take batches in turn."""
    deadline = time.monotonic() + _LOOK
    while True:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return
        except OSError:
            if time.monotonic() >= deadline:
                return
            time.sleep(0.01)


def _held_elsewhere(path: Path) -> bool:
    """Whether another open file holds ``path``'s exclusive lock."""
    try:
        handle = path.open("r")
    except OSError:
        return False
    with handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except OSError:
            return True
        return False

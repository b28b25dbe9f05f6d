"""Transcripts kept in the shared store (``storage.uri``), so any replica can continue any session.

Object stores do not append, so a transcript there is a folder of immutable *segments*: every
append huichat makes to a session file (its header with the first turn, each later turn, a
new title) is written once as ``<prefix>/<session file>/<offset>-<writer>.md`` with
``If-None-Match: *`` — the bytes exactly as appended to the file, so the segments of a
session, concatenated in name order, are that session's Markdown transcript (readable once
fetched, and read by ``reconcile``, ``export`` and ``reindex`` like any other). ``offset`` is
the size of the file before the append (12 digits, so names sort by it) and ``writer`` a random
tag, so two replicas appending to one session at the same moment both keep their turn; their
order is then the tags' (a raced chain is repaired by the reader: links follow file order).

Each replica keeps a working copy of the files under its own data folder (the kernel reads and
locks files as on one machine). ``push`` writes a segment after the local append (a segment
the store refused undoes the local append: nothing is acknowledged that another replica
cannot read); ``pull`` lists the store and brings the working copy up to date — new
segments after everything known are appended, anything else rebuilds the file — and returns
the files that changed, which the caller reconciles (a turn whose writer died before indexing
it reaches the index there).
"""

from __future__ import annotations

import os
import secrets
import threading
from collections.abc import Callable, Mapping
from contextlib import AbstractContextManager
from pathlib import Path

from huichat.memory.errors import KernelError
from huichat.memory.location import MemoryLocation
from huichat.memory.objectstore import Conflict, ObjectStore, StoreError

_SUFFIX = ".md"


class SharedTranscripts:
    """One memory's transcripts in the store, and the working copy of them in ``root``."""

    def __init__(self, uri: str, options: Mapping[str, str], root: Path) -> None:
        self.store = ObjectStore(uri, options)
        self.root = root
        self._writer = secrets.token_hex(4)
        self._known: dict[str, list[str]] = {}
        """Per session file, the segments its working copy holds, in order."""
        self._lock = threading.Lock()

    def push(self, session_file: str, offset: int, data: bytes) -> None:
        """Store what was just appended at ``offset`` of ``session_file`` (``KernelError`` when it cannot be)."""
        name = f"{session_file}/{offset:012d}-{self._writer}{_SUFFIX}"
        try:
            self.store.create(name, data)
        except Conflict:
            name = (
                f"{session_file}/{offset:012d}-{secrets.token_hex(4)}{_SUFFIX}"  # this writer's tag reused: a new one
            )
            self.store.create(name, data)
        except StoreError as exc:
            raise KernelError(f"cannot store transcript {session_file} in {self.store.uri}: {exc}") from exc
        with self._lock:
            known = self._known.setdefault(session_file, [])
            known.append(name)
            known.sort()

    def pull(self, hold: Callable[[str], AbstractContextManager[int]]) -> list[str]:
        """Bring the working copy in line with the store; the session files that changed."""
        try:
            names = self.store.names("")
        except StoreError as exc:
            raise KernelError(f"cannot list the transcripts in {self.store.uri}: {exc}") from exc
        stored: dict[str, list[str]] = {}
        for name in names:
            folder, _, segment = name.rpartition("/")
            if segment.endswith(_SUFFIX) and folder:
                stored.setdefault(folder, []).append(name)
        changed = []
        for session_file, segments in sorted(stored.items()):
            with self._lock:
                known = list(self._known.get(session_file, []))
            if segments == known:
                continue
            with hold(session_file) as fd:
                self._bring(fd, session_file, known, sorted(segments))
            changed.append(session_file)
        return changed

    def _bring(self, fd: int, session_file: str, known: list[str], segments: list[str]) -> None:
        """Append the new segments to the working copy (open as ``fd``, locked), or rewrite it whole
        when one sorts among those it holds (a raced append): the store is the truth, so a copy cut
        short by a crash here is rewritten by the next process's first pull."""
        appended = bool(known) and segments[: len(known)] == known
        bodies = []
        for name in segments[len(known) :] if appended else segments:
            found = self.store.get(name)
            if found is None:
                raise KernelError(f"transcript segment {name} vanished from {self.store.uri}")
            bodies.append(found.body)
        data = b"".join(bodies)
        try:
            if appended:
                os.lseek(fd, 0, os.SEEK_END)
            else:
                os.ftruncate(fd, 0)
                os.lseek(fd, 0, os.SEEK_SET)
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view) :]
            os.fsync(fd)
        except OSError as exc:
            raise KernelError(f"cannot write transcript {session_file}: {exc.strerror or exc}") from exc
        with self._lock:
            self._known[session_file] = segments


def pull_working_copy(location: MemoryLocation) -> list[str]:
    """Bring ``location``'s working copy of its shared transcripts up to date without opening the
    index (what a command that reads transcripts only, like ``export``, starts with)."""
    from huichat.memory.transcript import TranscriptWriter

    if not location.transcripts_uri:
        return []
    writer = TranscriptWriter(location.sessions_dir)
    shared = SharedTranscripts(location.transcripts_uri, location.options, location.sessions_dir)
    return shared.pull(lambda session_file: writer.hold(session_file, create=True))

"""Session transcripts: human-readable Markdown files that are the source of truth.

Each turn is appended and fsynced before it is indexed. Message bodies are stored
verbatim between markers that carry their length, so any Markdown, code block or
Chinese text round-trips exactly; a body edited by hand (length changed) is still found
by its closing marker. Neighbour links come from the order of turns in the file; the
visible anchor line is kept in step for readers (``next`` is patched in place when the
following turn is written — it is padded to the width of an id).

Like a write-ahead log, a file is only ever extended by whole turns: a write that fails
(a full disk) is rolled back to the size before it, and an unfinished turn left at the
end by a crash is cut off — into ``<file>.torn-<time>`` beside it — before anything is
appended after it. Writers and repairs of one file take its ``flock`` in turn.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import json
import os
from collections.abc import Callable, Collection, Iterator, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, tzinfo
from pathlib import Path
from typing import TYPE_CHECKING, Any

from huichat.memory.errors import KernelError
from huichat.memory.transcript_parse import (
    MSG_END,
    ParsedSession,
    decode_transcript,
    encoded_length,
    parse_transcript,
)
from huichat.memory.turns import STATUS_OK, TEXT, Turn, anchor_line, one_line

if TYPE_CHECKING:
    from huichat.memory.shared_transcripts import SharedTranscripts

_CLEAN_END = f"{MSG_END}\n".encode()
"""How a file ends after a whole turn was written (anything else is looked at closely first)."""
_WEEKDAYS = ("Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun")


def _json(data: dict[str, Any]) -> str:
    # '>' is escaped so that no value can close the HTML comment early
    return json.dumps(data, ensure_ascii=False).replace(">", "\\u003e")


def format_local_time(moment: datetime, zone: tzinfo | None) -> str:
    """``2026-03-05 Thu 10:00:07`` in the display zone (the seed's format)."""
    local = moment.astimezone(zone) if zone else moment.astimezone()
    return f"{local:%Y-%m-%d} {_WEEKDAYS[local.weekday()]} {local:%H:%M:%S}"


_NEXT_PAD = "none  "
"""An unknown ``next`` is padded to the width of an id, so it can be patched in place."""
_TRANSCRIPT_FIELDS = ("id", "turn_index", "timestamp", "topic", "recalled_ids", "status")


def render_turn(turn: Turn, zone: tzinfo | None, next_id: str | None = None) -> str:
    """The Markdown block of one turn, as appended to its transcript."""
    # the topic and a speaker's name are kept exactly in the markers; their visible lines get one line
    topic = f" · 话题: {one_line(turn.topic)}" if turn.topic else ""
    failed = " · ⚠ failed" if turn.status != STATUS_OK else ""
    record = turn.to_record()
    meta = {name: record[name] for name in _TRANSCRIPT_FIELDS}
    if turn.extra:
        meta["extra"] = record["extra"]
    if turn.events:
        meta["events"] = record["events"]
    parts = [
        f"\n## {format_local_time(turn.timestamp, zone)}{topic}{failed}\n\n",
        anchor_line(turn.id, turn.prev_id, next_id or _NEXT_PAD),
        "\n",
        f"<!-- huichat:turn {_json(meta)} -->\n",
    ]
    for message in turn.messages:
        notes = [n for n in (message.role if message.who != message.role else "", message.kind) if n and n != TEXT]
        label = f"**{one_line(message.who)}**" + (f" ({' · '.join(notes)})" if notes else "")
        header = {**message.to_record(), "chars": len(message.text)}
        del header["text"]
        parts.append(f"\n{label}\n<!-- huichat:msg {_json(header)} -->\n{message.text}{MSG_END}\n")
    return "".join(parts)


def _fsync_dir(path: Path) -> None:
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


@dataclass(frozen=True)
class TailRepair:
    """An unfinished write found at the end of a transcript, and what was done about it."""

    session_file: str
    line: int
    turn_id: str | None
    cut_bytes: int
    """Bytes moved into ``backup`` (0 when the turn was closed instead: it was already indexed)."""
    backup: str
    """The file the cut bytes were kept in (relative to the transcripts' root), or ''."""

    def describe(self) -> str:
        """One line for the user."""
        what = f"turn {self.turn_id}" if self.turn_id else "an unfinished turn"
        if not self.cut_bytes:
            return f"{self.session_file}:{self.line}: closed {what}, which had lost its end marker"
        return f"{self.session_file}:{self.line}: cut off {what} left by an interrupted write ({self.cut_bytes} bytes kept in {self.backup})"


Write = Callable[[int, memoryview], int]


class TranscriptWriter:
    """Appends turns to session files under ``root`` durably.

    ``write`` is the system call that puts bytes in a file (a seam for fault injection).
    """

    def __init__(
        self,
        root: Path,
        zone: tzinfo | None = None,
        *,
        write: Write = os.write,
        shared: SharedTranscripts | None = None,
    ) -> None:
        self.root = root
        self.zone = zone
        self._write = write
        self._held: dict[str, int] = {}
        self.shared = shared
        """The store every append is also written to (``storage.uri``: replicas), or None."""

    def path_of(self, session_file: str) -> Path:
        """Absolute path of a session file given relative to the root."""
        return self.root / session_file

    @contextlib.contextmanager
    def hold(self, session_file: str, *, wait: bool = True, create: bool = False) -> Iterator[int]:
        """Hold a transcript's exclusive lock (re-entrant); yields its open descriptor.

        The kernel holds it from a turn's transcript write until its index write, so that
        no other process reconciles the file in between. ``wait=False`` raises
        ``BlockingIOError`` at once when another process holds it; a file that cannot be
        opened (or made, with ``create``) raises ``KernelError``.
        """
        if session_file in self._held:
            yield self._held[session_file]
            return
        path = self.path_of(session_file)
        fd = self._open(path, create)
        try:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX if wait else fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                raise
            except OSError as exc:
                raise KernelError(f"cannot lock transcript {path}: {exc.strerror or exc}") from exc
            self._held[session_file] = fd
            try:
                yield fd
            finally:
                del self._held[session_file]
        finally:
            os.close(fd)

    @staticmethod
    def _open(path: Path, create: bool) -> int:
        try:
            if create:
                path.parent.mkdir(parents=True, exist_ok=True)
            try:
                return os.open(path, os.O_RDWR | (os.O_CREAT if create else 0), 0o600)
            except OSError as exc:
                if create or exc.errno not in (errno.EROFS, errno.EACCES, errno.EPERM):
                    raise
                return os.open(path, os.O_RDONLY)  # a read-only folder can still be read (and locked)
        except OSError as exc:
            verb = "write" if create else "read"
            raise KernelError(f"cannot {verb} transcript {path}: {exc.strerror or exc}") from exc

    def append(
        self,
        turns: Sequence[Turn],
        indexed: Collection[str] = (),
        session_meta: Mapping[str, Any] | None = None,
        *,
        durable: bool = True,
    ) -> None:
        """Write consecutive turns of one session at the end of its file, then fsync once.

        Links inside the batch are written directly; the turn before the batch gets its
        visible ``next`` patched afterwards (a crash leaves at worst a stale label). An
        unfinished turn left at the end by an earlier crash is repaired first (see
        ``repair_tail``; ``indexed`` are the ids already in the index). When the write
        fails, the file is cut back to its size before it and ``KernelError`` is raised.
        ``session_meta`` (a title, where an imported session came from…) goes into the
        session's header when the file is created. Without ``durable`` nothing is fsynced:
        the caller flushes many files at once (``memory.durability``).
        """
        if not turns:
            return
        first = turns[0]
        path = self.path_of(first.session_file)
        following = [t.id for t in turns[1:]] + [None]
        body = "".join(render_turn(t, self.zone, n) for t, n in zip(turns, following, strict=True))
        size = -1
        try:
            with self.hold(first.session_file, create=True) as fd:
                size = os.fstat(fd).st_size
                if size and not _ends_cleanly(fd, size):
                    self._repair(path, fd, indexed)
                    size = os.fstat(fd).st_size
                if size == 0:
                    head = {
                        **(session_meta or {}),
                        "session_id": first.session_id,
                        "created": first.timestamp.isoformat(),
                    }
                    body = f"# huichat session {first.session_id}\n<!-- huichat:session {_json(head)} -->\n" + body
                data = body.encode("utf-8")
                self._append_or_roll_back(fd, size, data, durable)
                self._share(fd, path, first.session_file, size, data)
                if size == 0 and durable:
                    _fsync_dir(path.parent)
        except OSError as exc:
            if size == 0:
                with contextlib.suppress(OSError):
                    if path.stat().st_size == 0:
                        path.unlink()
            raise KernelError(f"cannot write transcript {path}: {exc.strerror or exc}") from exc
        if first.prev_id:
            with contextlib.suppress(OSError):  # only the visible label: the link is the file's order
                self._patch_next(path, first.prev_id, first.id, durable)

    def _share(self, fd: int, path: Path, session_file: str, size: int, data: bytes) -> None:
        """Write what was appended to the shared store too; when it cannot be, the append is undone
        (``KernelError``): nothing is acknowledged that another replica could not read."""
        if self.shared is None:
            return
        try:
            self.shared.push(session_file, size, data)
        except KernelError:
            with contextlib.suppress(OSError):
                os.ftruncate(fd, size)
                if size == 0:
                    path.unlink()
            raise

    def _append_or_roll_back(self, fd: int, size: int, data: bytes, durable: bool = True) -> None:
        os.lseek(fd, size, os.SEEK_SET)
        try:
            view = memoryview(data)
            while view:
                view = view[self._write(fd, view) :]
            if durable:
                os.fsync(fd)
        except OSError:
            # nothing of a failed write stays behind: the file is as it was before
            with contextlib.suppress(OSError):
                os.ftruncate(fd, size)
                os.fsync(fd)
            raise

    def repair_tail(self, session_file: str, indexed: Collection[str], *, wait: bool = False) -> TailRepair | None:
        """Repair an unfinished turn at the end of a transcript, unless another process holds the file.

        An unfinished turn that was never indexed (a write cut off by a crash or a full
        disk) is cut off and kept in ``<file>.torn-<time>``; one that is indexed was edited:
        it is closed when only its end marker is missing, else left as it is.
        """
        path = self.path_of(session_file)
        try:
            with self.hold(session_file, wait=wait) as fd:
                return self._repair(path, fd, indexed)
        except BlockingIOError:
            return None
        except OSError as exc:
            raise KernelError(f"cannot repair transcript {path}: {exc.strerror or exc}") from exc

    def _repair(self, path: Path, fd: int, indexed: Collection[str]) -> TailRepair | None:
        data = _read_all(fd)
        text = decode_transcript(data)
        parsed = parse_transcript(text, "")
        if parsed.tail is None:
            return None
        rel = path.relative_to(self.root).as_posix()
        line = text.count("\n", 0, parsed.tail) + 1
        if parsed.tail_turn is not None and parsed.tail_turn in indexed:
            # an edit, not a crash: the turn is known; close it when that restores it exactly,
            # else leave it (the index keeps its copy, and what follows is appended after it)
            if not parsed.tail_closable:
                return None
            closing = ("" if text.endswith("\n") else "\n") + MSG_END.lstrip("\n") + "\n"
            self._append_or_roll_back(fd, len(data), closing.encode())
            return TailRepair(rel, line, parsed.tail_turn, 0, "")
        cut = encoded_length(text[: parsed.tail])
        backup = _backup_path(path, os.fstat(fd).st_mtime)
        with backup.open("xb") as handle:
            handle.write(data[cut:])
            handle.flush()
            os.fsync(handle.fileno())
        os.ftruncate(fd, cut)
        os.fsync(fd)
        _fsync_dir(path.parent)
        return TailRepair(rel, line, parsed.tail_turn, len(data) - cut, backup.relative_to(self.root).as_posix())

    def update_session(self, session_file: str, fields: Mapping[str, Any]) -> None:
        """Record new session-level facts (a new title…) at the end of its file; later ones win."""
        path = self.path_of(session_file)
        if not path.exists():
            raise KernelError(f"no transcript {session_file}")
        try:
            with self.hold(session_file) as fd:
                size = os.fstat(fd).st_size
                lead = "" if size and _ends_cleanly(fd, size) else "\n"
                data = f"{lead}<!-- huichat:session {_json(dict(fields))} -->\n".encode()
                self._append_or_roll_back(fd, size, data)
                self._share(fd, path, session_file, size, data)
        except OSError as exc:
            raise KernelError(f"cannot write transcript {path}: {exc.strerror or exc}") from exc

    @staticmethod
    def _patch_next(path: Path, prev_id: str, next_id: str, durable: bool) -> None:
        needle = f"\n[id:{prev_id} | prev: ".encode()
        with path.open("r+b") as handle:
            size = handle.seek(0, os.SEEK_END)
            # the predecessor is normally the last turn: look at the tail before reading it all
            for window in (65536, size):
                offset = max(0, size - window)
                handle.seek(offset)
                data = handle.read()
                start = data.find(needle)
                if start >= 0 or offset == 0:
                    break
            if start < 0:
                return
            end = data.find(b"\n", start + 1)
            where = data.find(f"next: {_NEXT_PAD}]".encode(), start, end if end > 0 else len(data))
            if where < 0:
                return
            handle.seek(offset + where + len("next: "))
            handle.write(next_id.encode("ascii"))
            handle.flush()
            if durable:
                os.fsync(handle.fileno())


def _ends_cleanly(fd: int, size: int) -> bool:
    """Whether the file ends after a complete message or a session marker (nothing torn)."""
    if os.pread(fd, len(_CLEAN_END), max(0, size - len(_CLEAN_END))) == _CLEAN_END:
        return True
    start = max(0, size - 4096)
    last = os.pread(fd, size - start, start).decode("utf-8", errors="replace").rsplit("\n<!--", 1)[-1]
    return last.startswith(" huichat:session ") and last.endswith(" -->\n") and last.count("\n") == 1


def _read_all(fd: int) -> bytes:
    size = os.fstat(fd).st_size
    chunks = []
    offset = 0
    while offset < size:
        chunk = os.pread(fd, size - offset, offset)
        if not chunk:
            break
        chunks.append(chunk)
        offset += len(chunk)
    return b"".join(chunks)


def _backup_path(path: Path, mtime: float) -> Path:
    stamp = datetime.fromtimestamp(mtime, UTC).strftime("%Y%m%dT%H%M%SZ")
    candidate = path.with_name(f"{path.name}.torn-{stamp}")
    number = 1
    while candidate.exists():
        number += 1
        candidate = path.with_name(f"{path.name}.torn-{stamp}-{number}")
    return candidate


class TurnChunker:
    """Parses transcripts back into turns (the seed's ``TurnChunker``)."""

    def __init__(self, root: Path | None = None) -> None:
        self.root = root

    def chunk_file(self, path: Path | str) -> list[Turn]:
        """The turns of one transcript that can be read, linked prev/next in file order."""
        return self.read_file(path).turns

    def read_file(self, path: Path | str) -> ParsedSession:
        """One transcript: its readable turns and the problems found in it."""
        path = Path(path)
        try:
            data = path.read_bytes()  # bytes: keep \r\n inside messages as written
        except OSError as exc:
            raise KernelError(f"cannot read transcript {path}: {exc.strerror or exc}") from exc
        return self.parse(decode_transcript(data), self._relative(path), path.stem.removeprefix("chat_"))

    def _relative(self, path: Path) -> str:
        if self.root is not None:
            try:
                return path.resolve().relative_to(self.root.resolve()).as_posix()
            except ValueError:
                pass
        return path.as_posix()

    @staticmethod
    def parse(text: str, session_file: str, fallback_session: str = "") -> ParsedSession:
        """Parse transcript ``text``: every turn that can be read, and what could not be."""
        return parse_transcript(text, session_file, fallback_session)

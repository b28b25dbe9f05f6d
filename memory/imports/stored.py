"""Sessions as stored — transcript and import record — found by conversation and read back.

``SessionLocator`` lists the session files once (live, archived, and import records whose
transcript was never written) and finds the session of a conversation by the digest in
its id, checked against the header's source block: no cache is needed, and a changed time
zone or start time does not lose it. ``restore`` turns a stored session back into an
``ImportedConversation``: the visible branch ends at the last recorded current node, every
other kept message is an alternative — the same shape the readers produce, for export and
for merging two installs.
"""

from __future__ import annotations

import tarfile
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import zstandard

from huichat.memory.archive import ARCHIVE_DIR, read_archive
from huichat.memory.errors import KernelError
from huichat.memory.imports import sidecar
from huichat.memory.imports.codec import HUICHAT, decode_turn, imported, with_details
from huichat.memory.imports.model import (
    Branch,
    ImportedConversation,
    ImportedMessage,
    Note,
    NoteKind,
    SkippedNode,
    SourceFormat,
    SourceTime,
)
from huichat.memory.transcript import TurnChunker
from huichat.memory.turns import Turn


@dataclass(frozen=True)
class StoredSession:
    """One session: its header facts (later updates merged), its turns, its import record."""

    session_id: str
    session_file: str
    meta: Mapping[str, Any]
    turns: Sequence[Turn]
    records: Sequence[Mapping[str, Any]] = ()
    beside: Sequence[Turn] = ()
    """The turns kept beside the current branch (``memory.branches``), in the order written."""

    @property
    def source(self) -> Mapping[str, Any]:
        """The header's source block (empty for a session written in huichat)."""
        block = self.meta.get("source")
        return block if isinstance(block, dict) else {}

    @property
    def title(self) -> str:
        """The title its turns show: the header's latest, else (no title recorded) its first turn's topic."""
        return str(self.meta.get("title") or "") or (self.turns[0].topic if self.turns else "")

    @property
    def key(self) -> tuple[str, str]:
        """(service, conversation id): a session written in huichat is its own conversation."""
        source = self.source
        if source.get("service") and source.get("conversation_id"):
            return str(source["service"]), str(source["conversation_id"])
        return HUICHAT, self.session_id

    def messages(self) -> Iterator[tuple[ImportedMessage, str | None]]:
        """The stored source messages of the turns, in order, each with the message it follows."""
        previous: str | None = None
        for turn in self.turns:
            for message, after in decode_turn(turn, previous):
                yield message, after
                previous = message.id

    def beside_messages(self) -> Iterator[tuple[ImportedMessage, str | None]]:
        """The messages of the turns kept beside the current branch, each with the message it follows."""
        ends: dict[str, str] = {}
        beside = {t.id for t in self.beside}
        for turn in (*self.turns, *self.beside):  # a turn is written after the one it follows
            found = decode_turn(turn, ends.get(turn.prev_id or ""))
            if found:
                ends[turn.id] = found[-1][0].id
            if turn.id in beside:
                yield from found

    def of_type(self, kind: str) -> list[Mapping[str, Any]]:
        """The import records of one type, in order."""
        return [r for r in self.records if r.get("type") == kind]

    @property
    def current(self) -> str | None:
        """The current node the last import recorded."""
        found = [r.get("current") for r in self.of_type(sidecar.IMPORT)]
        return str(found[-1]) if found and found[-1] else None

    @property
    def leaf(self) -> str | None:
        """The message the conversation ends at now: the last one of the current branch when a
        turn written here ends it (the conversation went on in huichat, or a reply was asked
        again), else the current node the last import recorded.

        An import records the source's current node, not the turns said after it: those follow
        their predecessor in the transcript, and that branch is the one the user was shown.
        """
        last = self.turns[-1] if self.turns else None
        if last is not None and not imported(last):
            found = decode_turn(last, None)
            return found[-1][0].id if found else None
        return self.current


def parse_session(texts: Sequence[str], session_file: str, records: Sequence[Mapping[str, Any]]) -> StoredSession:
    """A session from its transcript parts (archived part first) and its import records."""
    stem = session_file.rsplit("/", 1)[-1].removesuffix(".md").removeprefix("chat_")
    parsed = TurnChunker.parse("\n".join(texts), session_file, stem)
    meta = dict(parsed.meta)
    header = next((r for r in records if r.get("type") == sidecar.HEADER), None)
    if header is not None:  # a transcript never written: the record's header stands in
        for key in ("title", "source"):
            meta.setdefault(key, header.get(key))
    return StoredSession(parsed.session_id, session_file, meta, parsed.turns, list(records), parsed.beside)


@dataclass
class _Place:
    live: bool = False
    archives: list[Path] = field(default_factory=list)


class SessionLocator:
    """Where each session of a sessions folder is, by id; read on demand."""

    def __init__(self, sessions_dir: Path) -> None:
        self.sessions_dir = sessions_dir
        self._places: dict[str, _Place] = {}
        self._by_digest: dict[str, list[str]] = {}
        self._archive: tuple[Path, dict[str, str]] | None = None
        if sessions_dir.is_dir():
            for path in sessions_dir.glob("*/*/chat_*"):
                name = path.name
                if name.endswith(".md"):
                    self._add(path.relative_to(sessions_dir).as_posix()).live = True
                elif name.endswith(sidecar.SUFFIX):
                    self._add(path.relative_to(sessions_dir).as_posix().removesuffix(sidecar.SUFFIX) + ".md")
            for archive in sorted((sessions_dir / ARCHIVE_DIR).glob("*.tar.zst")):
                for member in _member_names(archive):
                    self._add(member).archives.append(archive)

    def _add(self, relpath: str) -> _Place:
        if relpath not in self._places:
            self._places[relpath] = _Place()
            session_id = relpath.rsplit("/", 1)[-1].removeprefix("chat_").removesuffix(".md")
            self._by_digest.setdefault(session_id.rsplit("-", 1)[-1][:4], []).append(relpath)
        return self._places[relpath]

    def register(self, session_file: str) -> None:
        """Note a session written since the folder was listed."""
        self._add(session_file).live = True

    def session_files(self) -> list[str]:
        """Every session known, by relative path, in path order."""
        return sorted(self._places)

    def exists(self, session_file: str) -> bool:
        """True when a session (transcript or import record) has this path."""
        return session_file in self._places

    def abandoned(self, session_file: str) -> bool:
        """True for an import record with no transcript and no readable header: what an import
        killed inside a new session's first record leaves. The same conversation, imported
        again, takes that place (its records then follow the cut-short line, which is skipped)."""
        place = self._places.get(session_file)
        if place is None or place.live or place.archives:
            return False
        records = sidecar.read_records(sidecar.sidecar_of(self.sessions_dir / session_file))
        return not any(r.get("type") == sidecar.HEADER for r in records)

    def candidates(self, session_id: str) -> list[str]:
        """The session files whose id has the same digest characters as ``session_id``."""
        return list(self._by_digest.get(session_id.rsplit("-", 1)[-1][:4], ()))

    def load(self, session_file: str) -> StoredSession:
        """Read one session: archived parts, the live transcript, the import record."""
        place = self._places.get(session_file, _Place())
        texts = [self._archived(archive, session_file) for archive in place.archives]
        path = self.sessions_dir / session_file
        if place.live and path.exists():
            try:
                texts.append(path.read_bytes().decode("utf-8"))
            except (OSError, UnicodeDecodeError) as exc:
                raise KernelError(f"cannot read transcript {path}: {exc}") from exc
        return parse_session(texts, session_file, sidecar.read_records(sidecar.sidecar_of(path)))

    def find(self, key: tuple[str, str], session_id: str) -> StoredSession | None:
        """The stored session of the conversation ``key`` (whose computed id is ``session_id``)."""
        for session_file in self.candidates(session_id):
            stored = self.load(session_file)
            if stored.key == key:
                return stored
        return None

    def _archived(self, archive: Path, session_file: str) -> str:
        if self._archive is None or self._archive[0] != archive:
            self._archive = (archive, read_archive(archive))  # one month at a time
        return self._archive[1].get(session_file, "")


def _member_names(archive: Path) -> list[str]:
    try:
        with (
            archive.open("rb") as raw,
            zstandard.ZstdDecompressor().stream_reader(raw) as stream,
            tarfile.open(fileobj=stream, mode="r|") as tar,
        ):
            return [member.name for member in tar if member.isfile()]
    except (OSError, tarfile.TarError, zstandard.ZstdError) as exc:
        raise KernelError(f"cannot read archive {archive}: {exc}") from exc


def _path(kept: Mapping[str, tuple[ImportedMessage, str | None]], leaf: str | None) -> list[str]:
    path: list[str] = []
    seen: set[str] = set()
    while leaf is not None and leaf in kept and leaf not in seen:
        seen.add(leaf)
        path.append(leaf)
        leaf = kept[leaf][1]
    return path[::-1]


def _branches(kept: Mapping[str, tuple[ImportedMessage, str | None]], visible: set[str]) -> list[Branch]:
    groups: list[tuple[str | None, list[ImportedMessage]]] = []
    for message, after in kept.values():
        if message.id in visible:
            continue
        if groups and groups[-1][1][-1].id == after:
            groups[-1][1].append(message)
        else:
            groups.append((after, [message]))
    return [Branch(parent, tuple(messages)) for parent, messages in groups]


def _notes(stored: StoredSession) -> tuple[Note, ...]:
    kinds = {k.value: k for k in NoteKind}
    notes: dict[tuple[str, str, str], Note] = {}
    for entry in stored.of_type(sidecar.IMPORT):
        for note in entry.get("notes") or ():
            if isinstance(note, dict) and note.get("kind") in kinds:
                item = Note(kinds[note["kind"]], str(note.get("detail", "")), str(note.get("message_id", "")))
                notes.setdefault((item.kind.value, item.detail, item.message_id), item)
    return tuple(notes.values())


def restore(stored: StoredSession, origin: str) -> ImportedConversation:
    """The conversation a stored session holds (see the module doc); ``origin`` names where it was read."""
    kept: dict[str, tuple[ImportedMessage, str | None]] = {}
    for message, after in stored.messages():
        kept.setdefault(message.id, (message, after))
    for entry in stored.of_type(sidecar.ALTERNATIVE):
        try:
            message = ImportedMessage.from_record(entry["message"])
        except (KeyError, ValueError, TypeError):
            continue
        after = entry.get("after")
        kept.setdefault(message.id, (message, str(after) if after is not None else None))
    for message, after in stored.beside_messages():
        kept.setdefault(message.id, (message, after))
    for entry in stored.of_type(sidecar.PARTS):
        message_id = str(entry.get("id"))
        details = entry.get("parts")
        if message_id in kept and isinstance(details, list):
            message, after = kept[message_id]
            kept[message_id] = (with_details(message, [d for d in details if isinstance(d, dict)]), after)
    turn_ids = [m.id for m, _ in stored.messages()]
    leaf = stored.leaf
    leaf = leaf if leaf in kept else (turn_ids[-1] if turn_ids else None)
    path = _path(kept, leaf)
    skipped: dict[str, SkippedNode] = {}
    for entry in stored.of_type(sidecar.SKIPPED):
        try:
            node = SkippedNode.from_record(entry["node"])
        except (KeyError, ValueError, TypeError):
            continue
        skipped.setdefault(node.id, node)
    source = stored.source
    first = stored.turns[0] if stored.turns else None
    native_time = SourceTime(first.timestamp.isoformat(), first.timestamp) if first else None
    created = _time(source.get("created")) or native_time
    if created is None:
        raise KernelError(f"{stored.session_file}: the session has no turns and no start time")
    service_format = str(source.get("format") or SourceFormat.HUICHAT.value)
    formats = {f.value: f for f in SourceFormat}
    return ImportedConversation(
        source=formats.get(service_format, SourceFormat.HUICHAT),
        conversation_id=stored.key[1],
        title=str(stored.meta.get("title") or "") if source else (first.topic if first else ""),
        created=created,
        updated=_time(source.get("updated")),
        messages=tuple(kept[i][0] for i in path),
        alternatives=tuple(_branches(kept, set(path))),
        skipped=tuple(skipped.values()),
        notes=_notes(stored),
        origin=origin,
        model=str(source.get("model") or ""),
        branch_heuristic=bool(source.get("branch_heuristic")),
        extra=tuple((str(k), str(v)) for k, v in (source.get("extra") or {}).items()),
    )


def _time(data: object) -> SourceTime | None:
    if not isinstance(data, dict):
        return None
    try:
        return SourceTime.from_record(data)
    except (KeyError, ValueError):
        return None

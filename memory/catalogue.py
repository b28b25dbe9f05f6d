"""What each transcript holds, summarised: sessions and turn ids without opening the index.

The transcripts are the source of truth; the catalogue is a small JSON summary of them
(per file: its size and mtime when read, the session, its times, title and who wrote it,
turn count and turn ids) kept beside the index. Reading it costs milliseconds, so listing sessions or showing
one turn never waits for LanceDB or a model. Any file whose size or mtime changed is read
again; a lost or unreadable catalogue is rebuilt from the transcripts.
"""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Iterator
from dataclasses import asdict, dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from huichat.memory.archive import ARCHIVE_DIR, read_archive
from huichat.memory.errors import KernelError
from huichat.memory.results import SessionInfo
from huichat.memory.transcript import TurnChunker
from huichat.memory.transcript_parse import ParsedSession, decode_transcript
from huichat.memory.turns import SessionTitle, Turn

FORMAT = 2
"""2: transcripts are decoded as the index reads them (a damaged header id gives way to the file name)."""
_ARCHIVED = "::"
"""Separates an archive's name from a member's path in a catalogue key."""


@dataclass
class Entry:
    """The summary of one transcript (or one archived transcript)."""

    stat: list[int]
    """``[size, mtime_ns]`` of the file (of the archive, for archived ones) when it was read."""
    session_id: str
    started: str
    last: str
    turns: int
    title: str
    first_text: str
    ids: list[str] = field(default_factory=list)
    title_source: str = ""
    """Who wrote the title (``model``, ``local``, ``imported``, ``user``), '' for a session never titled."""
    hidden: list[str] = field(default_factory=list)
    """Turns forgotten by a tombstone (``memory.tombstones``): in the file, not in ``ids``."""
    beside: list[str] = field(default_factory=list)
    """Turns kept beside the current branch (``memory.branches``): in the file, not in ``ids``."""


def _summary(parsed: ParsedSession, stat: list[int]) -> Entry | None:
    if not parsed.turns:
        if parsed.forgotten:  # every turn forgotten: the session is listed nowhere, its turns can still come back
            beside = [t.id for t in parsed.beside]
            return Entry(stat, parsed.session_id, "", "", 0, "", "", [], "", sorted(parsed.forgotten), beside)
        return None
    first = parsed.turns[0]
    said = next((m.text for m in first.messages if m.is_chat), "")
    title = SessionTitle.from_meta(parsed.meta)
    return Entry(
        stat,
        parsed.session_id,
        min(t.timestamp for t in parsed.turns).isoformat(),
        max(t.timestamp for t in parsed.turns).isoformat(),
        len(parsed.turns),
        str(parsed.meta.get("title") or first.topic or ""),
        said[:200],
        [t.id for t in parsed.turns],
        title.source if title is not None else "",
        sorted(parsed.forgotten),
        [t.id for t in parsed.beside],
    )


class Catalogue:
    """The summaries of every transcript under ``sessions_dir``, cached in ``path``."""

    def __init__(self, sessions_dir: Path, path: Path) -> None:
        self.sessions_dir = sessions_dir
        self.path = path
        self._entries: dict[str, Entry] = {}
        self._loaded = False

    def _load(self) -> None:
        if self._loaded:
            return
        self._loaded = True
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
            if data.get("format") == FORMAT:
                self._entries = {key: Entry(**value) for key, value in data["files"].items()}
        except (OSError, ValueError, TypeError, KeyError, AttributeError):
            self._entries = {}

    def _save(self) -> None:
        payload = {"format": FORMAT, "files": {key: asdict(entry) for key, entry in self._entries.items()}}
        temporary = self.path.with_name(f".{self.path.name}.{os.getpid()}.tmp")
        try:
            data = json.dumps(payload, ensure_ascii=False).encode("utf-8")
        except UnicodeEncodeError:  # a file name that is not UTF-8
            data = json.dumps(payload).encode("ascii")
        with contextlib.suppress(OSError):  # a read-only data dir: the summary is only a cache
            self.path.parent.mkdir(parents=True, exist_ok=True)
            temporary.write_bytes(data)
            temporary.replace(self.path)

    def _sources(self) -> Iterator[tuple[str, Path, list[int]]]:
        """Every transcript file and archive, with its ``[size, mtime_ns]``."""
        if not self.sessions_dir.is_dir():
            return
        for path in sorted(self.sessions_dir.glob("*/*/chat_*.md")):
            with contextlib.suppress(OSError):
                stat = path.stat()
                yield path.relative_to(self.sessions_dir).as_posix(), path, [stat.st_size, stat.st_mtime_ns]
        for path in sorted((self.sessions_dir / ARCHIVE_DIR).glob("*.tar.zst")):
            with contextlib.suppress(OSError):
                stat = path.stat()
                yield f"{ARCHIVE_DIR}/{path.name}", path, [stat.st_size, stat.st_mtime_ns]

    def refresh(self) -> None:
        """Read again what changed since the summary was made; forget what is gone."""
        self._load()
        present: set[str] = set()
        changed = False
        for key, path, stat in self._sources():
            if key.startswith(ARCHIVE_DIR + "/"):
                changed |= self._refresh_archive(key, path, stat, present)
            else:
                present.add(key)
                changed |= self._refresh_file(key, stat)
        for gone in set(self._entries) - present:
            del self._entries[gone]
            changed = True
        if changed:
            self._save()

    def _refresh_file(self, key: str, stat: list[int]) -> bool:
        known = self._entries.get(key)
        if known is not None and known.stat == stat:
            return False
        self._entries.pop(key, None)
        content = self._text(key)
        entry = _summary(TurnChunker.parse(content, key, _stem(key)), stat) if content is not None else None
        if entry is not None:
            self._entries[key] = entry
        return True

    def _refresh_archive(self, key: str, path: Path, stat: list[int], present: set[str]) -> bool:
        members = [k for k in self._entries if k.startswith(key + _ARCHIVED)]
        present.update(members)
        if members and all(self._entries[m].stat == stat for m in members):
            return False
        for member in members:
            del self._entries[member]
        try:
            archived = read_archive(path)
        except KernelError:
            return True
        for name, content in archived.items():
            entry = _summary(TurnChunker.parse(content, name, _stem(name)), stat)
            if entry is not None:
                self._entries[key + _ARCHIVED + name] = entry
                present.add(key + _ARCHIVED + name)
        return True

    def sessions(self) -> list[SessionInfo]:
        """Stored sessions, most recent first (a session split by archiving is one session)."""
        self.refresh()
        merged: dict[str, dict[str, Any]] = {}
        for key, entry in self._entries.items():
            if not entry.turns:
                continue  # every turn of it forgotten
            relpath = key.split(_ARCHIVED)[-1]
            info = merged.setdefault(
                entry.session_id,
                {
                    "file": relpath,
                    "started": entry.started,
                    "last": entry.last,
                    "turns": 0,
                    "first": entry,
                    "latest": entry,
                },
            )
            info["turns"] += entry.turns
            if entry.started <= info["started"]:
                info["started"], info["first"] = entry.started, entry
            if entry.started >= info["latest"].started:
                info["latest"] = entry  # a title set after archiving is recorded in the live part
            info["last"] = max(info["last"], entry.last)
            if _ARCHIVED not in key:
                info["file"] = relpath
        infos = [
            SessionInfo(
                session_id,
                info["file"],
                datetime.fromisoformat(info["started"]),
                datetime.fromisoformat(info["last"]),
                info["turns"],
                info["first"].first_text,
                info["latest"].title or info["first"].title,
                info["latest"].title_source,
            )
            for session_id, info in merged.items()
        ]
        return sorted(infos, key=lambda s: s.last, reverse=True)

    def turn(self, turn_id: str, *, beside: bool = False) -> Turn | None:
        """One turn read from its transcript, linked to its neighbours (None if unknown); with
        ``beside``, also a turn kept beside its session's current branch (an edit's or a reply
        asked again's earlier turn, which the index no longer holds).

        A session continued after its month was archived is read whole — archived part
        first — so the turns on either side of the cut keep their links.
        """
        self.refresh()
        holder = next((e for e in self._entries.values() if turn_id in e.ids or (beside and turn_id in e.beside)), None)
        if holder is None:
            return None
        parts = sorted(
            (key for key, entry in self._entries.items() if entry.session_id == holder.session_id),
            key=lambda key: (_ARCHIVED not in key, key),
        )
        texts = [text for text in (self._text(key) for key in parts) if text is not None]
        relpath = parts[-1].split(_ARCHIVED)[-1]
        parsed = TurnChunker.parse("\n".join(texts), relpath, _stem(relpath))
        return next((turn for turn in (*parsed.turns, *parsed.beside) if turn.id == turn_id), None)

    def locate(self, turn_id: str) -> tuple[str, bool] | None:
        """The transcript (a key: archived ones hold ``::``) that holds ``turn_id``, and whether
        the turn is forgotten there; None when no transcript holds it."""
        self.refresh()
        for key, entry in self._entries.items():
            if turn_id in entry.ids or turn_id in entry.hidden or turn_id in entry.beside:
                return key, turn_id in entry.hidden
        return None

    def beside_ids(self, key: str) -> frozenset[str]:
        """The turns transcript ``key`` (``locate``'s) keeps beside its current branch."""
        entry = self._entries.get(key)
        return frozenset(entry.beside) if entry is not None else frozenset()

    def _text(self, key: str) -> str | None:
        if _ARCHIVED in key:
            archive, member = key.split(_ARCHIVED)
            try:
                return read_archive(self.sessions_dir / archive)[member]
            except (KernelError, KeyError):
                return None
        try:
            return decode_transcript((self.sessions_dir / key).read_bytes())
        except OSError:
            return None


def _stem(relpath: str) -> str:
    return relpath.rsplit("/", 1)[-1].removesuffix(".md").removeprefix("chat_")

"""Bringing the index in line with the transcripts, the source of truth.

Turns missing from the index are added, turns whose text changed are re-embedded
(keeping their access statistics), turns removed from an edited transcript are removed
— but never because a neighbour could not be read. Unfinished writes at the end of a
transcript are repaired first (see ``TranscriptWriter.repair_tail``). Each transcript is
read under its lock: a file another process is writing right now is left to that process,
which indexes its own turns (reading it here would index the same turn twice).
"""

from __future__ import annotations

import contextlib
from collections.abc import Collection, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from huichat.memory.archive import ARCHIVE_DIR, read_archive
from huichat.memory.errors import KernelError
from huichat.memory.index_schema import IndexEntry
from huichat.memory.indexing import Indexer, Progress
from huichat.memory.manifest import Manifest
from huichat.memory.store import TurnStore
from huichat.memory.transcript import TranscriptWriter
from huichat.memory.transcript_parse import ParsedSession, decode_transcript, parse_transcript
from huichat.memory.turns import index_digest

_FILES_AT_ONCE = 64
"""Transcripts locked and compared with the index together (bounded: each lock holds a file open)."""
_TURNS_AT_ONCE = 256
"""Turns per batch: the kernel's lock is held for one batch, so live writes interleave with a rebuild."""


@dataclass
class ReconcileReport:
    """What reconciling the index with the transcripts did, and what the user should know."""

    files_checked: int = 0
    """Transcripts compared with the index."""
    files_parsed: int = 0
    """Transcripts (and archives) changed since the index last saw them, read again."""
    added: int = 0
    """Turns in the transcripts that the index lacked."""
    updated: int = 0
    """Turns whose stored text or facts differed from the transcript, re-indexed."""
    removed: int = 0
    """Index rows whose turn no transcript holds any more."""
    retopicked: int = 0
    """Turns whose topic alone changed (a session's new title): updated in place, not re-embedded."""
    unreadable: list[str] = field(default_factory=list)
    """Transcripts or archives that could not be read at all."""
    repaired: list[str] = field(default_factory=list)
    """One line per transcript whose unfinished end was repaired (see ``TailRepair.describe``)."""
    problems: list[str] = field(default_factory=list)
    """``file:line: reason`` for each part of a transcript that could not be read."""
    duplicates: int = 0
    """Extra index rows of one turn id that were removed."""
    rebuilt: bool = False
    """Every transcript was read again: the index was missing or empty while transcripts exist,
    or the manifest was written for another index (made again by another process)."""
    was_empty: bool = False
    """The index held no turn when that full pass began (it was missing or emptied)."""
    access_lost: bool = False
    """A rebuild could not read every access statistic from the old (damaged) index."""
    changed_ids: set[str] = field(default_factory=set)
    """Turns added, re-indexed or removed (a view showing one of them is out of date)."""
    unread: set[str] = field(default_factory=set)
    """Turns a transcript names but cannot read: only the index has them (a rebuild carries them over)."""
    hidden_in: set[str] = field(default_factory=set)
    """Transcripts with a part that cannot be read nor tied to a turn: any of their indexed turns may be in it."""
    set_aside: str = ""
    """Where a rebuild moved the old table (kept, never deleted)."""
    salvaged: int = 0
    """Turns only the old table had (their transcript part cannot be read), carried over by a rebuild."""

    def notices(self, limit: int | None = None) -> list[str]:
        """What to tell the user, one line each; empty when everything was in order. With
        ``limit``, at most that many lines, the last saying how many more there are."""
        lines: list[str] = []
        if self.rebuilt and self.was_empty:
            lines.append(f"the memory index was missing or empty: rebuilt {self.added} turns from the transcripts")
        elif self.rebuilt and self.added:
            # a manifest about another index (a rebuild elsewhere, cut short?): what it lacked is back
            lines.append(f"the memory index lacked {self.added} turns: added them from the transcripts")
        lines.extend(f"repaired {line}" for line in self.repaired)
        lines.extend(f"could not read {line}" for line in self.problems)
        lines.extend(f"could not read transcript {name}" for name in self.unreadable)
        if self.duplicates:
            lines.append(f"removed {self.duplicates} duplicate index rows")
        if self.salvaged:
            lines.append(
                f"kept {self.salvaged} turns that only the old index had (their transcript part cannot be read)"
            )
        if self.access_lost:
            lines.append("some access statistics could not be read from the damaged index; they start again")
        if self.set_aside:
            lines.append(f"the old index was moved to {self.set_aside}; delete it when you no longer need it")
        if limit is not None and len(lines) > limit:
            more = len(lines) - (limit - 1)
            lines = [*lines[: limit - 1], f"… and {more} more (huichat reindex lists them all)"]
        return lines


def _state(path: Path) -> list[int]:
    stat = path.stat()
    return [stat.st_size, stat.st_mtime_ns]


Indexed = dict[str, tuple[str, str, dict[str, Any], str]]


@dataclass
class _File:
    """One transcript to reconcile: its archived parts, its live state, what it holds."""

    rel: str
    archived: list[str]
    state: list[int] | None
    """Size and mtime of the live file when read (None: only archived)."""
    session: ParsedSession


class Reconciler:
    """One reconciliation pass over the transcripts.

    Every changed transcript is read first (to know how many turns there are); then, a
    batch at a time under ``lock``, each is locked, read again if it changed meanwhile, and
    compared with what the index holds at that moment.
    """

    def __init__(
        self,
        indexer: Indexer,
        transcripts: TranscriptWriter,
        manifest: Manifest,
        progress: Progress | None,
        lock: AbstractContextManager[object] | None = None,
        *,
        embed: bool = True,
        known: Collection[str] = (),
    ) -> None:
        self.lock = lock or contextlib.nullcontext()
        self.known = set(known)
        """Turns known to an index outside this one (the table a rebuild moved aside): a torn end
        of one of them is kept in place, as for an indexed turn, not cut off as a crash's."""
        self.indexer = indexer
        self.store: TurnStore = indexer.store
        self.transcripts = transcripts
        self.root = transcripts.root
        self.manifest = manifest
        self.progress = progress
        self.embed = embed
        self.only = False
        """Only named session files are reconciled: the index is read for those files alone."""
        self.report = ReconcileReport()
        self.added_ids: set[str] = set()
        self._done = 0
        self._total = 0

    def run(self, *, full: bool, only: Collection[str] | None = None) -> ReconcileReport:
        """Reconcile every transcript that changed since it was last indexed (all of them when
        ``full``; only these session files, and no new archive, with ``only``)."""
        known = {} if full else dict(self.manifest.entries)
        self.only = only is not None
        if only is not None:
            paths = [self.root / rel for rel in sorted(only) if (self.root / rel).is_file()]
        else:
            paths = sorted(self.root.glob("*/*/chat_*.md")) if self.root.exists() else []
        self.report.files_checked = len(paths)
        changed: list[str] = []
        for path in paths:
            rel = path.relative_to(self.root).as_posix()
            try:
                if known.get(rel) != _state(path):
                    changed.append(rel)
            except OSError:
                self.report.unreadable.append(rel)
        archived = self._archived(changed, known, new_archives=only is None)
        rels = dict.fromkeys([*changed, *archived])
        files = [f for f in (self._read(rel, archived.get(rel, [])) for rel in rels) if f]
        self.report.files_parsed = len(files)
        self._total = sum(len(f.session.turns) for f in files)
        batch: list[_File] = []
        for file in files:
            batch.append(file)
            if len(batch) == _FILES_AT_ONCE or sum(len(f.session.turns) for f in batch) >= _TURNS_AT_ONCE:
                with self.lock:
                    self._batch(batch)
                batch = []
        if batch:
            with self.lock:
                self._batch(batch)
        return self.report

    def _archived(
        self, changed: list[str], known: dict[str, list[int]], *, new_archives: bool = True
    ) -> dict[str, list[str]]:
        """Archived transcripts new to the index (with ``new_archives``), and archived halves of changed live files."""
        parts: dict[str, list[str]] = {}
        archive_dir = self.root / ARCHIVE_DIR
        if not archive_dir.is_dir():
            return parts
        for archive in sorted(archive_dir.glob("*.tar.zst")):
            key = f"{ARCHIVE_DIR}/{archive.name}"
            state = _state(archive)
            fresh = new_archives and known.get(key) != state
            month = archive.name.removesuffix(".tar.zst")
            if not fresh and not any(rel.split("/")[1].startswith(month) for rel in changed):
                continue
            try:
                members = read_archive(archive)
            except KernelError:
                self.report.unreadable.append(key)
                continue
            for rel, text in members.items():
                if rel in changed or fresh:
                    parts.setdefault(rel, []).append(text)
            self.manifest.record({key: state})
        return parts

    def _read(self, rel: str, archived: list[str]) -> _File | None:
        live = self.root / rel
        texts = list(archived)
        state = None
        if live.exists():
            try:
                state = _state(live)
                texts.append(decode_transcript(live.read_bytes()))
            except OSError:
                self.report.unreadable.append(rel)
                return None
        stem = rel.rsplit("/", 1)[-1].removesuffix(".md").removeprefix("chat_")
        # an archived part of a session comes first, then what was written after packing
        return _File(rel, archived, state, parse_transcript("\n".join(texts), rel, stem))

    def _batch(self, files: list[_File]) -> None:
        with contextlib.ExitStack() as held:
            ready: list[_File] = []
            for file in files:
                if file.state is not None:
                    try:
                        held.enter_context(self.transcripts.hold(file.rel, wait=False))
                    except BlockingIOError:
                        continue  # another process is writing it, and indexes its own turns
                    except KernelError:
                        self.report.unreadable.append(file.rel)
                        continue
                    try:
                        if _state(self.root / file.rel) != file.state:
                            file = self._read(file.rel, file.archived) or file
                    except OSError:
                        continue
                ready.append(file)
            if not ready:
                return
            if self.only:  # a few sessions (a new title): their own rows, not a scan of the whole index
                indexed = {k: v for file in ready for k, v in self.store.hashes(file.rel).items()}
            else:
                indexed = self.store.hashes()
            ready = [self._repaired(file, indexed) if file.session.tail is not None else file for file in ready]
            self._apply(ready, indexed)
            self.manifest.record({f.rel: f.state for f in ready if f.state is not None})

    def _repaired(self, file: _File, indexed: Indexed) -> _File:
        if file.state is None:
            return file
        try:
            repair = self.transcripts.repair_tail(file.rel, indexed.keys() | self.known)
        except KernelError as exc:
            self.report.problems.append(f"{file.rel}: {exc}")
            return file
        if repair is None:
            return file
        self.report.repaired.append(repair.describe())
        return self._read(file.rel, file.archived) or file

    def _apply(self, files: list[_File], indexed: Indexed) -> None:
        to_add: list[IndexEntry] = []
        stale: list[IndexEntry] = []
        to_remove: list[str] = []
        unchanged = 0
        for file in files:
            session = file.session
            self.report.problems.extend(f"{file.rel}:{p.line}: {p.reason}" for p in session.problems)
            for entry in self.indexer.transcript_entries(session.turns):
                turn = entry.turn
                known = indexed.get(turn.id)
                if known is None:
                    to_add.append(entry)
                elif known[1] != entry.digest or known[0] != file.rel or known[3] != turn.session_id:
                    stale.append(replace(entry, turn=replace(turn, **known[2])))  # what only the index knows is kept
                else:
                    unchanged += 1
            read = {t.id for t in session.turns}
            self.report.unread |= {p.turn_id for p in session.problems if p.turn_id and p.turn_id not in read}
            if any(p.hides_turn for p in session.problems):
                self.report.hidden_in.add(file.rel)
                continue  # a turn that cannot be read may be any of those indexed: remove none
            present = read | {p.turn_id for p in session.problems if p.turn_id}
            to_remove.extend(i for i, meta in indexed.items() if meta[0] == file.rel and i not in present)
        retopic = self._topic_only(stale, indexed)
        to_update = [e for e in stale if e.turn.id not in retopic]
        self._advance(unchanged + len(retopic))
        self.indexer.write(to_add, self._step(), embed=self.embed)
        self.indexer.write(to_update, self._step(), upsert=True, embed=self.embed)
        moved = [e for e in stale if e.turn.id in retopic]
        self.store.set_topics(moved)
        self.store.delete(to_remove)
        self.report.added += len(to_add)
        self.report.updated += len(to_update)
        self.report.retopicked += len(moved)
        self.report.removed += len(to_remove)
        self.added_ids.update(e.turn.id for e in to_add)
        self.report.changed_ids |= {e.turn.id for e in (*to_add, *to_update)} | retopic | set(to_remove)

    def _topic_only(self, stale: Sequence[IndexEntry], indexed: Indexed) -> set[str]:
        """The changed turns that differ from the index by their topic alone (a session's new title)."""
        if not stale:
            return set()
        stored = self.store.get(e.turn.id for e in stale)
        same: set[str] = set()
        for entry in stale:
            turn = entry.turn
            old = stored.get(turn.id)
            known = indexed[turn.id]
            if old is None or known[0] != turn.session_file or known[3] != turn.session_id:
                continue
            if known[1] == index_digest(entry.text, replace(turn, topic=old.topic)):
                same.add(turn.id)
        return same

    def _advance(self, count: int) -> None:
        self._done += count
        if self.progress is not None and count:
            self._total = max(self._total, self._done)
            self.progress(self._done, self._total)

    def _step(self) -> Progress:
        start = self._done

        def advance(finished: int, _total: int) -> None:
            self._advance(start + finished - self._done)

        return advance

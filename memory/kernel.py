"""The memory kernel: every turn written to its transcript, then indexed, then searchable.

``MemoryKernel`` joins the transcript writer, the LanceDB store, the embedder and the
retriever. It owns the write path (live chat, imports and benchmarks all use it), the
reconciliation of the index with the transcripts, and access statistics.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import threading
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime, tzinfo
from pathlib import Path
from typing import IO, Any

from memory.archive import ARCHIVE_DIR, read_archive
from memory.catalogue import Catalogue
from memory.config import RetrieverConfig
from memory.embedding import Embedder
from memory.errors import KernelError
from memory.filters import Compare
from memory.results import OnRound, RecallResult, SearchRequest, SearchResults, SessionInfo, format_turn
from memory.retrieval import Fusion, Retriever
from memory.store import TurnStore
from memory.timeparse import TimeResolver
from memory.transcript import TranscriptWriter, TurnChunker
from memory.turns import (
    Turn,
    TurnDraft,
    index_digest,
    is_turn_id,
    new_session_id,
    new_turn_id,
    search_text,
    session_relpath,
)

Progress = Callable[[int, int], None]
_EMBED_BATCH = 64
_BULK_BATCH = 2048
"""Turns per index commit when nothing is embedded (imports, rebuilds: words first, vectors later)."""
_ACCESS_FLUSH_AT = 64
_MAINTAIN_AFTER_WRITES = 32


@dataclass
class SessionHandle:
    """Where the next turn of a session goes."""

    session_id: str
    session_file: str
    next_index: int = 0
    last_turn: Turn | None = None
    """The previous turn: the next one links to it, and its tail is embedded with the next one when in context."""


@dataclass
class ReconcileReport:
    """What reconciling the index with the transcripts did."""

    files_checked: int = 0
    files_parsed: int = 0
    added: int = 0
    updated: int = 0
    removed: int = 0
    unreadable: list[str] = field(default_factory=list)


class MemoryKernel:
    """Stores, indexes and searches turns. Plain synchronous code; call it off the UI thread."""

    def __init__(
        self,
        store: TurnStore,
        embedder: Embedder,
        sessions_dir: Path,
        retriever_config: RetrieverConfig,
        zone: tzinfo,
        *,
        manifest_path: Path | None = None,
        catalogue_path: Path | None = None,
        fusion: Fusion | None = None,
        id_source: Callable[[], str] | None = None,
    ) -> None:
        self.store = store
        self.embedder = embedder
        self.sessions_dir = sessions_dir
        self.zone = zone
        self.config = retriever_config
        self.transcripts = TranscriptWriter(sessions_dir, zone)
        self.resolver = TimeResolver(zone, retriever_config.week_start)
        self.retriever = Retriever(store, embedder, retriever_config, self.resolver, zone, fusion)
        self.manifest_path = manifest_path
        self.catalogue = Catalogue(sessions_dir, catalogue_path or sessions_dir.parent / "catalogue.json")
        self._lock = threading.RLock()
        self._known_ids: set[str] | None = None
        self._pending_access: dict[str, int] = {}
        self._access_time: datetime | None = None
        self._writes_since_maintenance = 0
        self._lock_file: IO[str] | None = None
        self._id_source = id_source
        self._manifest: dict[str, list[int]] | None = None
        self._manifest_dirty = False

    # ------------------------------------------------------------- lifecycle

    def acquire_process_lock(self, lock_path: Path) -> bool:
        """Hold a shared lock for this process's lifetime; True when no other process holds one.

        Only a process that is alone may delete files left by a killed writer.
        """
        lock_path.parent.mkdir(parents=True, exist_ok=True)
        handle = lock_path.open("a+")
        alone = True
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            alone = False
        fcntl.flock(handle, fcntl.LOCK_SH)
        self._lock_file = handle
        return alone

    def close(self) -> None:
        """Flush access statistics and the manifest, release the process lock."""
        self.flush_access()
        self.flush_manifest()
        if self._lock_file is not None:
            with contextlib.suppress(OSError):
                self._lock_file.close()
            self._lock_file = None

    # ----------------------------------------------------------------- write

    def _taken(self) -> set[str]:
        if self._known_ids is None:
            self._known_ids = self.store.all_ids()
        return self._known_ids

    def _fresh_id(self, reserved: set[str]) -> str:
        # checked against every id in the index (read once) and every id written since
        taken = self._taken()
        while True:
            candidate = self._id_source() if self._id_source else new_turn_id()
            if candidate not in taken and candidate not in reserved:
                return candidate

    def new_session(self, now: datetime, session_id: str | None = None) -> SessionHandle:
        """A handle for a new session started at ``now`` (nothing is written yet)."""
        local = now.astimezone(self.zone)
        sid = session_id or (
            local.strftime("%Y%m%d-%H%M%S-") + self._id_source()[:4] if self._id_source else new_session_id(local)
        )
        return SessionHandle(sid, session_relpath(sid, local))

    def resume_session(self, session_id: str) -> SessionHandle:
        """A handle that continues an existing session's anchor chain."""
        turns = self.session_turns(session_id)
        if not turns:
            raise KernelError(f"no session '{session_id}'")
        last = turns[-1]
        return SessionHandle(session_id, last.session_file, last.turn_index + 1, last)

    def append_turn(self, session: SessionHandle, draft: TurnDraft) -> Turn:
        """Write one turn: transcript (fsynced) first, then the index."""
        return self.append_turns(session, [draft])[0]

    def append_turns(
        self,
        session: SessionHandle,
        drafts: Sequence[TurnDraft],
        progress: Progress | None = None,
        *,
        embed: bool = True,
        session_meta: Mapping[str, Any] | None = None,
    ) -> list[Turn]:
        """Write several turns of one session (imports, benchmarks) through the same path.

        Each turn reaches its transcript before anything is indexed; the index gets one
        commit per batch. Without ``embed`` the turns are found by their words at once and
        get their vectors later (``embed_pending``). ``session_meta`` goes into the header of
        a new session's transcript.
        """
        with self._lock:
            turns: list[Turn] = []
            reserved: set[str] = set()
            for draft in drafts:
                turn_id = self._fresh_id(reserved)
                reserved.add(turn_id)
                turns.append(
                    Turn(
                        id=turn_id,
                        session_id=session.session_id,
                        session_file=session.session_file,
                        turn_index=session.next_index + len(turns),
                        timestamp=draft.timestamp.astimezone(UTC),
                        messages=draft.messages,
                        topic=draft.topic,
                        prev_id=turns[-1].id if turns else (session.last_turn.id if session.last_turn else None),
                        recalled_ids=draft.recalled_ids,
                        status=draft.status,
                        extra=draft.extra,
                    )
                )
            # the times each turn talks about go into its transcript for readers; the index
            # derives the same ranges from the text (so reconcile and reindex rebuild them)
            turns = [replace(t, events=self.store.read_events(t.text, t.timestamp)) for t in turns]
            self.transcripts.append(turns, session_meta)
            previous = session.last_turn
            if turns:
                session.next_index += len(turns)
                session.last_turn = turns[-1]
            self._index(turns, _search_texts(turns, previous), progress, embed=embed)
            self._taken().update(t.id for t in turns)
            self._writes_since_maintenance += 1
            self._record_manifest({session.session_file})
            return turns

    def _index(
        self,
        turns: Sequence[Turn],
        texts: Sequence[str],
        progress: Progress | None = None,
        *,
        upsert: bool = False,
        embed: bool = True,
    ) -> None:
        """Index turns in batches; without ``embed`` their vectors come later (``embed_pending``)."""
        done = 0
        step = _EMBED_BATCH * 4 if embed else _BULK_BATCH
        for start in range(0, len(turns), step):
            batch = list(turns[start : start + step])
            batch_texts = list(texts[start : start + step])
            vectors = self.embedder.embed_passages(batch_texts) if embed else None
            if upsert:
                self.store.upsert(batch, batch_texts, vectors)
            else:
                self.store.add(batch, batch_texts, vectors)
            done += len(batch)
            if progress is not None:
                progress(done, len(turns))

    @property
    def pending_vectors(self) -> int:
        """Turns found by their words but still waiting for their vector."""
        return self.store.pending_count

    def embed_pending(self, limit: int = _EMBED_BATCH, progress: Progress | None = None) -> int:
        """Embed up to ``limit`` turns that were indexed without a vector; returns how many.

        Call it repeatedly in the background until it returns 0. Each turn is embedded with
        its predecessor's tail, exactly as if it had been embedded when written.
        """
        with self._lock:
            waiting = self.store.pending(limit)
            if not waiting:
                return 0
            previous = self.store.get(t.prev_id for t in waiting if t.prev_id)
            texts = [search_text(t, previous.get(t.prev_id) if t.prev_id else None) for t in waiting]
            self.store.set_vectors([t.id for t in waiting], self.embedder.embed_passages(texts))
            if progress is not None:
                progress(len(waiting), len(waiting) + self.store.pending_count)
            return len(waiting)

    # ------------------------------------------------------------------ read

    def recall_by_id(self, turn_id: str) -> RecallResult:
        """One turn with its anchors; a bad or unknown id gives an error value, not an exception."""
        cleaned = (turn_id or "").strip().lower().removeprefix("id:").strip()
        if not is_turn_id(cleaned):
            return RecallResult(
                None,
                f"'{(turn_id or '')[:40]}' is not a turn id (6 lowercase letters or digits, e.g. a3f2c7)",
            )
        found = self.store.get([cleaned]).get(cleaned)
        if found is None:
            return RecallResult(None, f"no turn with id {cleaned}")
        return RecallResult(found)

    def format_turn(self, turn: Turn) -> str:
        """A stored turn in the seed's result format (no similarity: it was not searched for)."""
        return format_turn(turn, self.zone)

    def search(self, request: SearchRequest, on_round: OnRound | None = None) -> SearchResults:
        """Search memory (see ``Retriever.run``) and count the hits as accessed."""
        results = self.retriever.run(request, on_round)
        if request.record_access:
            self.note_access([h.turn.id for h in results.hits], request.now)
        return results

    def note_access(self, ids: Iterable[str], now: datetime) -> None:
        """Count turns as retrieved; flushed to the index in batches."""
        with self._lock:
            for turn_id in ids:
                self._pending_access[turn_id] = self._pending_access.get(turn_id, 0) + 1
            self._access_time = now
            if sum(self._pending_access.values()) >= _ACCESS_FLUSH_AT:
                self.flush_access()

    def flush_access(self) -> None:
        """Persist pending access statistics."""
        with self._lock:
            if not self._pending_access:
                return
            pending, self._pending_access = self._pending_access, {}
            if self._access_time is not None:
                self.store.record_access(pending, self._access_time)

    def session_turns(self, session_id: str) -> list[Turn]:
        """All turns of a session, in order."""
        return sorted(self.store.where(Compare("session_id", "=", session_id)), key=lambda t: t.turn_index)

    def sessions(self) -> list[SessionInfo]:
        """Stored sessions, most recent first (read from the transcripts' catalogue)."""
        return self.catalogue.sessions()

    def count(self) -> int:
        """Number of stored turns."""
        return self.store.count()

    def needs_maintenance(self) -> bool:
        """True when enough writes piled up that compaction and an index refresh pay off."""
        return self._writes_since_maintenance >= _MAINTAIN_AFTER_WRITES

    def maintain(self, *, force: bool = False, cleanup_unverified: bool = False) -> list[str]:
        """Create missing indexes and compact the table when enough writes piled up."""
        with self._lock:
            self.flush_manifest()
            created = self.store.ensure_indexes(self.config.ann_min_rows)
            if force or cleanup_unverified or self.needs_maintenance() or self.store.fragments() > 64:
                self.store.optimize(cleanup_unverified=cleanup_unverified)
                self._writes_since_maintenance = 0
            return created

    def _transcript_files(self) -> list[Path]:
        if not self.sessions_dir.exists():
            return []
        return sorted(self.sessions_dir.glob("*/*/chat_*.md"))

    def _read_manifest(self) -> dict[str, list[int]]:
        """Which transcript states are fully indexed (read once, then kept in memory)."""
        if self._manifest is None:
            self._manifest = {}
            if self.manifest_path is not None and self.manifest_path.exists():
                try:
                    data = json.loads(self.manifest_path.read_text(encoding="utf-8"))
                except (OSError, ValueError):
                    data = {}
                if isinstance(data, dict):
                    self._manifest = {str(k): list(v) for k, v in data.items()}
        return self._manifest

    def _record_manifest(self, relpaths: Iterable[str]) -> None:
        # written to disk lazily: a stale manifest only makes the next open re-read a file
        manifest = self._read_manifest()
        for rel in relpaths:
            try:
                stat = (self.sessions_dir / rel).stat()
            except OSError:
                manifest.pop(rel, None)
                continue
            manifest[rel] = [stat.st_size, stat.st_mtime_ns]
        self._manifest_dirty = True

    def flush_manifest(self) -> None:
        """Write the manifest of indexed transcript states, if it changed."""
        if self.manifest_path is None or not self._manifest_dirty or self._manifest is None:
            return
        self.manifest_path.parent.mkdir(parents=True, exist_ok=True)
        temporary = self.manifest_path.with_suffix(f".{os.getpid()}.tmp")
        temporary.write_text(json.dumps(self._manifest), encoding="utf-8")
        temporary.replace(self.manifest_path)
        self._manifest_dirty = False

    def reconcile(self, progress: Progress | None = None, *, full: bool = False, embed: bool = True) -> ReconcileReport:
        """Bring the index in line with the transcripts.

        Turns missing from the index are added, turns whose text changed are re-embedded
        (keeping their access statistics), turns removed from an edited transcript are
        removed. Unchanged files (same size and mtime as last indexed) are skipped. Without
        ``embed``, vectors come later (``embed_pending``): every turn is found by its words
        as soon as this returns.
        """
        with self._lock:
            report = ReconcileReport()
            manifest = {} if full else dict(self._read_manifest())
            files = self._transcript_files()
            report.files_checked = len(files)
            parts: dict[str, list[str]] = {}
            seen: dict[str, list[int]] = {}
            for path in files:
                rel = path.relative_to(self.sessions_dir).as_posix()
                try:
                    stat = path.stat()
                    if manifest.get(rel) == [stat.st_size, stat.st_mtime_ns]:
                        continue
                    parts[rel] = [path.read_bytes().decode("utf-8")]
                    seen[rel] = [stat.st_size, stat.st_mtime_ns]
                except (OSError, UnicodeDecodeError):
                    report.unreadable.append(rel)
            self._add_archived(parts, seen, manifest, report)
            changed: list[tuple[str, list[Turn]]] = []
            for rel, texts in parts.items():
                stem = rel.rsplit("/", 1)[-1].removesuffix(".md").removeprefix("chat_")
                # an archived part of a session comes first, then what was written after packing
                changed.append((rel, TurnChunker.parse("\n".join(texts), rel, stem).turns))
            report.files_parsed = len(changed)
            if not changed:
                return report
            indexed = self.store.hashes()
            to_add: list[Turn] = []
            add_texts: list[str] = []
            to_update: list[Turn] = []
            update_texts: list[str] = []
            to_remove: list[str] = []
            for rel, turns in changed:
                present = {t.id for t in turns}
                for turn, text in zip(turns, _search_texts(turns, None), strict=True):
                    known = indexed.get(turn.id)
                    if known is None:
                        to_add.append(turn)
                        add_texts.append(text)
                    elif known[1] != index_digest(text, turn) or known[0] != rel:
                        to_update.append(replace(turn, access_count=known[2], last_accessed_at=known[3]))
                        update_texts.append(text)
                to_remove.extend(i for i, meta in indexed.items() if meta[0] == rel and i not in present)
            total = len(to_add) + len(to_update)

            def step(offset: int) -> Progress | None:
                if progress is None:
                    return None
                return lambda done, _n: progress(offset + done, total)

            self._index(to_add, add_texts, step(0), embed=embed)
            self._index(to_update, update_texts, step(len(to_add)), upsert=True, embed=embed)
            self.store.delete(to_remove)
            report.added, report.updated, report.removed = (
                len(to_add),
                len(to_update),
                len(to_remove),
            )
            if self._known_ids is not None:
                self._known_ids.update(t.id for t in to_add)
            self._read_manifest().update(seen)
            self._manifest_dirty = True
            self.flush_manifest()
            return report

    def _add_archived(
        self,
        parts: dict[str, list[str]],
        seen: dict[str, list[int]],
        manifest: dict[str, list[int]],
        report: ReconcileReport,
    ) -> None:
        """Archived transcripts that are new to the index, and archived halves of changed live files."""
        archive_dir = self.sessions_dir / ARCHIVE_DIR
        if not archive_dir.is_dir():
            return
        for archive in sorted(archive_dir.glob("*.tar.zst")):
            key = f"{ARCHIVE_DIR}/{archive.name}"
            stat = archive.stat()
            fresh = manifest.get(key) != [stat.st_size, stat.st_mtime_ns]
            month = archive.name.removesuffix(".tar.zst")
            needed = fresh or any(rel.split("/")[1].startswith(month) for rel in parts if rel.count("/") == 2)
            if not needed:
                continue
            try:
                members = read_archive(archive)
            except KernelError:
                report.unreadable.append(key)
                continue
            for rel, text in members.items():
                if rel in parts:
                    parts[rel].insert(0, text)
                elif fresh:
                    parts[rel] = [text]
            seen[key] = [stat.st_size, stat.st_mtime_ns]

    def reindex(self, progress: Progress | None = None, *, embed: bool = True) -> ReconcileReport:
        """Rebuild the whole index from the transcripts (e.g. after changing the model).

        Access statistics survive the rebuild. Without ``embed`` every turn is searchable by
        its words when this returns and gets its vector from ``embed_pending``.
        """
        with self._lock:
            self.flush_access()
            saved = {i: (meta[2], meta[3]) for i, meta in self.store.hashes().items() if meta[2]}
            self.store.reset()
            self._known_ids = None
            self._manifest, self._manifest_dirty = {}, True
            report = self.reconcile(progress, full=True, embed=embed)
            self.store.restore_access(saved)
            self.maintain(force=True)
            return report


def _search_texts(turns: Sequence[Turn], previous: Turn | None) -> list[str]:
    """Search texts of consecutive turns of one session (each with its predecessor's tail when in context)."""
    texts = []
    for turn in turns:
        texts.append(search_text(turn, previous))
        previous = turn
    return texts

"""The memory kernel: every turn written to its transcript, then indexed, then searchable.

``MemoryKernel`` joins the transcript writer, the LanceDB store, the embedder and the
retriever. It owns the write path (live chat, imports and benchmarks all use it), the
reconciliation of the index with the transcripts (``memory.reconcile``), and access
statistics. A turn is stored once it is in its transcript: when the index write fails
after that (a full disk, a damaged index), the turn is indexed again by a later
reconcile, and the kernel's ``health`` (``memory.health``) says why it is not searchable
yet. When the index cannot be opened at all the kernel runs on the transcripts alone.
"""

from __future__ import annotations

import contextlib
import fcntl
import threading
import time
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from datetime import datetime, tzinfo
from pathlib import Path
from typing import IO, Any

from huichat.memory import index_probe
from huichat.memory.archive import archived_texts
from huichat.memory.branches import BRANCH
from huichat.memory.catalogue import Catalogue
from huichat.memory.config import MAX_TOP_K, LifecycleConfig, RetrieverConfig
from huichat.memory.crossling import prepare as prepare_crossling
from huichat.memory.deadline import call_with_deadline
from huichat.memory.durability import make_durable
from huichat.memory.embedding import Embedder, Interruptible, Releasable
from huichat.memory.embedding_lease import EmbeddingLease
from huichat.memory.errors import BadTurnId, DeadlinePassed, IndexUnavailable, KernelError, TooLong, UnknownTurn
from huichat.memory.filters import Compare
from huichat.memory.fusion import Fusion
from huichat.memory.health import OK, IndexHealth, IndexState
from huichat.memory.index_schema import IndexEntry, kept_fields, turns_from
from huichat.memory.indexing import EMBED_BATCH, Indexer, Progress, session_entries
from huichat.memory.manifest import Manifest
from huichat.memory.reconcile import Reconciler, ReconcileReport
from huichat.memory.results import (
    OnRound,
    RecallResult,
    SearchRequest,
    SearchResults,
    SessionInfo,
    format_results,
    format_turn,
)
from huichat.memory.retrieval import Retriever
from huichat.memory.sessions import SessionHandle, SessionWrite, drafted_turns
from huichat.memory.shared_transcripts import SharedTranscripts
from huichat.memory.store import TurnStore
from huichat.memory.timeparse import TimeResolver
from huichat.memory.tombstones import Correction, correction, tombstone
from huichat.memory.transcript import TranscriptWriter, TurnChunker
from huichat.memory.transcript_parse import ParsedSession, decode_transcript
from huichat.memory.turns import (
    TITLE_LOCAL,
    TITLE_MODEL,
    TITLE_USER,
    SessionTitle,
    Turn,
    TurnDraft,
    is_turn_id,
    local_title,
    new_session_id,
    new_turn_id,
    not_a_turn_id,
    one_line,
    parse_turn_id,
    session_relpath,
)

__all__ = ["MemoryKernel", "Progress", "ReconcileReport", "SessionHandle", "SessionWrite"]

_ACCESS_FLUSH_AT = 64
_ACCESS_FLUSH_SECONDS = 30.0
"""Access statistics reach the index at most this often (besides at close, and when a
report reads them): each flush is a commit that adds a fragment, and a search service that
flushed every few searches made every later search read more fragments until compaction."""
_ACCESS_PENDING_MAX = 8_192
_MAINTAIN_AFTER_WRITES = 32
_PREPARE_SECONDS = 120.0
"""The longest a search waits for what every search needs (the calibration's reference: 32
embeddings, measured once per embedder) before it is given up with one line."""


@dataclass(frozen=True)
class _Index:
    """The index and what works on it (a kernel running on its transcripts alone has none)."""

    store: TurnStore
    embedder: Embedder
    retriever: Retriever
    indexer: Indexer


class MemoryKernel:
    """Stores, indexes and searches turns. Plain synchronous code; call it off the UI thread."""

    def __init__(
        self,
        store: TurnStore | None,
        embedder: Embedder | None,
        sessions_dir: Path,
        retriever_config: RetrieverConfig,
        zone: tzinfo,
        *,
        manifest_path: Path | None = None,
        catalogue_path: Path | None = None,
        fusion: Fusion | None = None,
        id_source: Callable[[], str] | None = None,
        lifecycle: LifecycleConfig | None = None,
        data_dir: Path | None = None,
        unavailable: str = "",
        on_close: Callable[[], None] | None = None,
        shared: SharedTranscripts | None = None,
    ) -> None:
        """``store`` and ``embedder`` None, with the reason ``unavailable``: the index could not be
        opened, and this kernel writes transcripts only (``open_transcripts_only``)."""
        if (store is None or embedder is None) and not unavailable:
            raise ValueError("a kernel without an index needs the reason it is unavailable")
        self._health = IndexHealth.unavailable(unavailable) if unavailable else store.health if store else OK
        self.data_dir = data_dir or sessions_dir.parent
        """Where this memory keeps its own files (the job log, the manifest)."""
        self.sessions_dir = sessions_dir
        self.zone = zone
        self.config = retriever_config
        self.lifecycle = lifecycle or LifecycleConfig()
        self.transcripts = TranscriptWriter(sessions_dir, zone, shared=shared)
        self.resolver = TimeResolver(zone, retriever_config.week_start)
        self._index: _Index | None = None
        if store is not None and embedder is not None:
            retriever = Retriever(
                store,
                embedder,
                retriever_config,
                self.resolver,
                zone,
                fusion or Fusion(),
                self.lifecycle.tier_prior,
                self.data_dir / "cache",
            )
            indexer = Indexer(store, embedder, self.lifecycle.importance, self.resolver.event_ranges)
            self._index = _Index(store, embedder, retriever, indexer)
        self.manifest = Manifest(manifest_path, sessions_dir, store.instance if store is not None else "")
        self.catalogue = Catalogue(sessions_dir, catalogue_path or sessions_dir.parent / "catalogue.json")
        self._lock = threading.RLock()
        self._embedding = threading.Lock()
        """Held by the one catch-up (``embed_pending``) at a time; the embedding itself runs outside ``_lock``."""
        self._stop_embedding = threading.Event()
        self._lease = EmbeddingLease(self.data_dir)
        self.embedding_elsewhere = False
        """Whether the last ``embed_pending`` found another process computing the vectors (it then did nothing)."""
        self._known_ids: set[str] | None = None
        self._pending_access: dict[str, int] = {}
        self._access_time: datetime | None = None
        self._access_flushed_at = time.monotonic()
        self._writes_since_maintenance = 0
        self._lock_file: IO[str] | None = None
        self._id_source = id_source
        self._rebuilding = False
        self.last_report: ReconcileReport | None = None
        """What the last reconcile found and did (the app shows its ``notices()``)."""
        self.searches_over_deadline = 0
        self._on_close = on_close
        """Run once by ``close`` (``open_kernel`` removes this process's mark of an open index)."""

    # ---------------------------------------------------------------- health

    @property
    def health(self) -> IndexHealth:
        """How the index is doing (``memory.health``): what every face shows about memory.

        ``UNAVAILABLE`` lasts until memory is reopened (``open_kernel`` reconciles what was
        written meanwhile) or rebuilt (``reindex``); ``BEHIND`` until the next reconcile.
        """
        return self._health

    def _usable(self) -> _Index:
        """The index and what works on it; ``IndexUnavailable`` (one line, the reason) while it is unavailable."""
        if self._index is None or not self._health.usable:
            raise self._health.error()
        return self._index

    @property
    def store(self) -> TurnStore:
        """The LanceDB table of turns (see ``_usable``)."""
        return self._usable().store

    @property
    def embedder(self) -> Embedder:
        """The embedding model (see ``_usable``)."""
        return self._usable().embedder

    @property
    def retriever(self) -> Retriever:
        """The search over the index (see ``_usable``)."""
        return self._usable().retriever

    @property
    def indexer(self) -> Indexer:
        """How turns enter the index (see ``_usable``)."""
        return self._usable().indexer

    def _lost(self, exc: IndexUnavailable) -> IndexUnavailable:
        """The index cannot be read: memory is unavailable (for the first reason) until reopened."""
        if self._health.usable:
            self._health = IndexHealth.unavailable(str(exc))
        return exc

    @contextlib.contextmanager
    def _reading(self) -> Iterator[TurnStore]:
        """The index for a read; a read that finds it unreadable makes memory unavailable."""
        store = self.store
        try:
            yield store
        except IndexUnavailable as exc:
            raise self._lost(exc) from None

    def _write_failed(self, exc: KernelError, files: set[str]) -> None:
        """An index write failed after the transcripts were written: index them later.

        A full disk or a passing conflict leaves the index readable (searches go on, the
        next ``maintain`` reconciles: memory is ``BEHIND``); an index that cannot even be read
        any more (deleted, damaged) makes memory unavailable until it is reopened.
        """
        self.manifest.forget(files)
        with contextlib.suppress(IndexUnavailable), self._reading() as store:
            store.count()
            self._health = IndexHealth.behind(str(exc))

    # ------------------------------------------------------------- lifecycle

    def acquire_process_lock(self, lock_path: Path) -> bool:
        """Hold a shared lock for this process's lifetime; True when no other process holds one.

        Only a process that is alone may delete files left by a killed writer.
        """
        try:
            lock_path.parent.mkdir(parents=True, exist_ok=True)
            handle = lock_path.open("a+")
        except OSError as exc:
            raise KernelError(
                f"cannot use the data folder {lock_path.parent}: {exc.strerror or exc} "
                "(it must be writable; set storage.data_dir to another folder)"
            ) from exc
        alone = True
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            alone = False
        fcntl.flock(handle, fcntl.LOCK_SH)
        self._lock_file = handle
        return alone

    def close(self) -> None:
        """Stop the catch-up, flush access statistics and the manifest, release the process lock; never raises."""
        self.stop_embedding()
        with contextlib.suppress(KernelError):
            self.flush_access()  # statistics only: a damaged or full index loses the last few
        self.flush_manifest()
        if self._lock_file is not None:
            with contextlib.suppress(OSError):
                self._lock_file.close()
            self._lock_file = None
        if self._on_close is not None:
            self._on_close()

    # ----------------------------------------------------------------- write

    def _taken(self) -> set[str]:
        if self._known_ids is None:
            # unavailable: ids are checked against those written since (a clash is ~1 in 2·10⁹ per stored turn)
            self._known_ids = set()
            with contextlib.suppress(IndexUnavailable), self._reading() as store:
                self._known_ids = store.all_ids()
        return self._known_ids

    def _fresh_id(self, reserved: set[str], wanted: str = "") -> str:
        """An id unused in the index (read once), since, and in ``reserved`` (which it joins):
        ``wanted`` where it is free (a turn read back from a huichat export keeps its id)."""
        taken = self._taken()
        if is_turn_id(wanted) and wanted not in taken and wanted not in reserved:
            reserved.add(wanted)
            return wanted
        while True:
            candidate = self._id_source() if self._id_source else new_turn_id()
            if candidate not in taken and candidate not in reserved:
                reserved.add(candidate)
                return candidate

    def new_session(self, now: datetime, session_id: str | None = None) -> SessionHandle:
        """A handle for a new session started at ``now`` (nothing is written yet)."""
        local = now.astimezone(self.zone)
        sid = session_id or (
            local.strftime("%Y%m%d-%H%M%S-") + self._id_source()[:4] if self._id_source else new_session_id(local)
        )
        return SessionHandle(sid, session_relpath(sid, local))

    def resume_session(self, session_id: str) -> SessionHandle:
        """A handle that continues an existing session's anchor chain (its current branch)."""
        turns = self.session_turns(session_id)
        if not turns:
            raise KernelError(f"no session {session_id[:60]!r}")
        last = turns[-1]
        try:
            written = self.read_session(last.session_file).tree.order
        except KernelError:  # the index alone knows the session (its transcript is gone): one branch
            written = ()
        fork = bool(written) and written[-1] != last.id  # the user switched to a branch written earlier
        return SessionHandle(session_id, last.session_file, last.turn_index + 1, last, fork)

    def branch_before(self, session_id: str, turn_id: str) -> SessionHandle:
        """A handle whose next turn starts a new branch in place of ``turn_id`` (a message edited
        and sent again, a reply asked again): ``turn_id`` and what followed it are kept beside it."""
        turns = self.session_turns(session_id)
        at = next((i for i, t in enumerate(turns) if t.id == turn_id), None)
        if at is None:
            raise KernelError(f"turn {turn_id[:60]!r} is not on session {session_id[:60]!r}'s current branch")
        turn = turns[at]
        return SessionHandle(session_id, turn.session_file, turn.turn_index, turns[at - 1] if at else None, True)

    def read_session(self, session_file: str) -> ParsedSession:
        """A session's transcript as read — its packed months first (``memory.archive``), then its
        live file —: its current branch, the turns kept beside it, its branch tree."""
        live = self.transcripts.path_of(session_file)
        texts = archived_texts(self.sessions_dir, session_file)
        if live.exists() or not texts:
            try:
                texts.append(decode_transcript(live.read_bytes()))
            except OSError as exc:
                raise KernelError(f"cannot read transcript {live}: {exc.strerror or exc}") from exc
        return TurnChunker.parse("\n".join(texts), session_file, live.stem.removeprefix("chat_"))

    def switch_branch(self, session_file: str, turn_id: str) -> None:
        """Make the branch through ``turn_id`` (to its newest end) the session's current one.

        Recorded in the transcript first; then the index follows: the turns of the branch left
        leave search and recall, those of the branch taken come back under their own ids.
        """
        tree = self.read_session(session_file).tree
        if turn_id not in tree.parent:
            raise KernelError(f"no turn {turn_id[:60]!r} in {session_file}")
        with self._lock:
            self.transcripts.update_session(session_file, {BRANCH: tree.leaf_from(turn_id)})
            self._follow_branches(session_file)

    def _follow_branches(self, session_file: str) -> None:
        """Bring the index in line with the session's current branch (its file is read again)."""
        self.manifest.forget([session_file])
        self.reconcile(only={session_file})

    def session_meta(self, session_file: str) -> dict[str, Any]:
        """A session's own facts from its transcript header and updates (its title…); {} if unreadable."""
        try:
            return TurnChunker(self.sessions_dir).read_file(self.transcripts.path_of(session_file)).meta
        except KernelError:
            return {}

    def update_session(self, session_file: str, fields: Mapping[str, Any]) -> None:
        """Record session-level facts that the index does not hold (the role a session is held in)."""
        with self._lock:
            self.transcripts.update_session(session_file, fields)

    def set_title(self, session_file: str, title: SessionTitle) -> ReconcileReport:
        """Record a session's new title in its transcript, then make it every turn's topic in the index.

        The transcript comes first (the source of truth); a crash before the index is updated
        is repaired by the next reconcile, which moves the topic in place without re-embedding.
        A title the user gave is replaced only by another of theirs: an automatic one that comes
        after it (a title request that was under way, another window, another process) is dropped.
        """
        with self._lock:
            if title.source != TITLE_USER:
                held = SessionTitle.from_meta(self.session_meta(session_file))
                if held is not None and held.source == TITLE_USER:
                    return ReconcileReport()
            self.transcripts.update_session(session_file, title.to_meta())
            return self.reconcile(only={session_file})

    def rename_session(self, session_id: str, text: str) -> SessionTitle:
        """Give a session the title the user chose (on one line), kept over any automatic title.

        ``KernelError`` for an empty title or a session no transcript holds."""
        cleaned = one_line(text).strip()
        if not cleaned:
            raise KernelError("a session's title cannot be empty")
        info = next((s for s in self.catalogue.sessions() if s.session_id == session_id), None)
        if info is None:
            raise KernelError(f"no session {session_id[:60]!r}")
        title = SessionTitle(cleaned, TITLE_USER, info.turns)
        self.set_title(info.session_file, title)
        return title

    # ------------------------------------------------------- forget / correct

    def forget(self, turn_id: str, now: datetime, *, restore: bool = False) -> tuple[str, bool]:
        """Forget a turn (``restore``: bring a forgotten one back); returns its id and whether anything changed.

        A tombstone is appended to its transcript (``memory.tombstones``), then its session is
        reconciled: the index drops the turn (or has it again) before this returns, so search,
        recall and every face stop (or start again) showing it at once. While the index is
        unavailable the next reconcile does it. ``BadTurnId``/``UnknownTurn`` for what is not
        a turn id / no transcript holds.
        """
        cleaned, rel, forgotten = self.locate(turn_id)
        if forgotten != restore:
            return cleaned, False
        if restore and all(t.id != cleaned for t in self.read_session(rel).hidden):
            raise KernelError(f"turn {cleaned} was purged: its text is gone for good")
        with self._lock:
            self.transcripts.update_session(rel, tombstone(cleaned, now, restore=restore))
            self._reconcile_marked(rel)
        self._retitle_after_forget(rel, cleaned)
        return cleaned, True

    def recalled_by(self, turn_id: str) -> list[str]:
        """The turns whose reply was written with ``turn_id`` recalled (their ``recalled_ids``), oldest
        first: they may quote it, and forgetting it leaves them as they are (a forgotten one is not
        listed). ``BadTurnId`` for what is not a turn id; ``IndexUnavailable`` while memory is."""
        cleaned = _checked_id(turn_id)
        with self._reading() as store:
            return store.recalling(cleaned)

    def _retitle_after_forget(self, session_file: str, turn_id: str) -> None:
        """A session whose title (every turn's topic) came from the turn just forgotten — cut
        from its first message, or written by the model while it was in view — is titled again
        from its first turn left, so the forgotten words leave the topic too; a turn brought
        back that is first again gives the session's local title back."""
        parsed = self.read_session(session_file)
        if not parsed.turns:
            return
        title = SessionTitle.from_meta(parsed.meta)
        shown = title.text if title is not None else parsed.turns[0].topic
        local = local_title(parsed.turns)
        gone = next((t for t in parsed.hidden if t.id == turn_id), None)
        if gone is not None:
            drawn_from_it = title is not None and title.source == TITLE_MODEL and gone.turn_index < title.turns
            if not drawn_from_it and shown != local_title([gone]):
                return
        elif title is not None and title.source != TITLE_LOCAL:
            return  # brought back: a title the model wrote stays
        if local and local != shown:
            self.set_title(session_file, SessionTitle(local, TITLE_LOCAL, len(parsed.turns)))

    def forgotten_in(self, session_file: str) -> frozenset[str]:
        """The turns of a session forgotten or purged, by any process (read from its transcript)."""
        try:
            return self.read_session(session_file).forgotten
        except KernelError:
            return frozenset()

    def correct(self, turn_id: str, text: str, now: datetime) -> str:
        """Attach a correction to a turn (recalled and searched with it, marked as a later correction).

        Appended to its transcript like a tombstone; the turn is indexed again with it at once.
        Returns the turn's id; a forgotten turn cannot be corrected (``KernelError``).
        """
        note = text.strip()
        if not note:
            raise KernelError("a correction needs some text")
        cleaned, rel, forgotten = self.locate(turn_id)
        if forgotten:
            raise KernelError(f"turn {cleaned} is forgotten: restore it first (huichat forget --undo {cleaned})")
        with self._lock:
            self.transcripts.update_session(rel, correction(Correction(cleaned, note, now)))
            self._reconcile_marked(rel)
        return cleaned

    def purged(self, session_file: str, turn_id: str) -> None:
        """A turn's text was removed from its transcript (``memory.purging``): the index drops its row
        and every older version of the table, so no copy of the text stays in it."""
        if self._index is None or not self._health.usable:
            raise self._health.error()
        with self._lock:
            self.reconcile(only={session_file})
            self.store.erase_history()
            self.store.ensure_indexes(self.config.ann_min_rows)
            self.catalogue.refresh()

    def locate(self, turn_id: str) -> tuple[str, str, bool]:
        """A turn's id, the transcript that holds it and whether it is forgotten there
        (``BadTurnId``, ``UnknownTurn``; ``KernelError`` for a turn in an archived month)."""
        cleaned = _checked_id(turn_id)
        found = self.catalogue.locate(cleaned)
        if found is None:
            raise UnknownTurn(f"no turn with id {cleaned}")
        key, forgotten = found
        if "::" in key:
            raise KernelError(f"turn {cleaned} is in an archived month ({key.split('::')[0]}): it cannot be changed")
        return cleaned, key, forgotten

    def _reconcile_marked(self, session_file: str) -> None:
        """Bring the index in line with a transcript that just got a tombstone or a correction."""
        if self._index is None or not self._health.usable:
            return  # the transcript holds it: the reconcile after memory reopens applies it
        self.reconcile(only={session_file})

    def pull_shared(self) -> list[str]:
        """Bring the working copy of transcripts kept in the shared store up to date (what other
        replicas wrote; see ``memory.shared_transcripts``) and read the index's newest version; the
        session files that changed. Their
        turns are in the index already (each writer indexes its own before it answers); a turn whose
        writer died first is indexed by the next open's reconcile. A no-op on one machine."""
        shared = self.transcripts.shared
        if shared is None:
            return []
        with self._lock:
            changed = shared.pull(lambda session_file: self.transcripts.hold(session_file, create=True))
        if self._index is not None and self._health.usable:
            self._index.store.refresh()  # the turns of a session continued here, not those of a second ago
        return changed

    def append_turn(self, session: SessionHandle, draft: TurnDraft) -> Turn:
        """Write one turn: transcript (fsynced) first, then the index."""
        [turn] = self.append_turns(session, [draft])
        return turn

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
        a new session's transcript. When the index fails the turns are still returned: they
        are in their transcript, and ``health`` says when they will be searchable.
        """
        return self._append([SessionWrite(session, drafts, session_meta)], progress, embed)

    def append_sessions(
        self, writes: Sequence[SessionWrite], progress: Progress | None = None, *, embed: bool = True
    ) -> list[list[Turn]]:
        """Write the turns of several sessions: every transcript first, then one index commit for all.

        An import writes many small sessions; one LanceDB commit per session would cost more
        than the writing itself. A process killed between the transcripts and the index loses
        nothing: the next open reconciles the index with the transcripts.
        """
        stored = iter(self._append(writes, progress, embed))
        return [[next(stored) for _ in write.drafts] for write in writes]

    def _append(self, writes: Sequence[SessionWrite], progress: Progress | None, embed: bool) -> list[Turn]:
        """Every turn of ``writes`` into its transcript, then all of them into the index: the turns as stored."""
        with self._lock:
            entries: list[IndexEntry] = []
            files: set[str] = set()
            reserved: set[str] = set()
            one = len(writes) == 1  # one session: fsync its file; many: flush them all at once
            forked = {w.session.session_file for w in writes if w.session.fork}
            with contextlib.ExitStack() as held:
                for write in writes:
                    session = write.session
                    turns = drafted_turns(
                        session,
                        write.drafts,
                        lambda wanted: self._fresh_id(reserved, wanted),
                        self.resolver.event_ranges,
                    )
                    if not turns:
                        continue
                    # the transcript stays locked until the index holds the turns: another process
                    # reconciling this file now would index them a second time
                    held.enter_context(self.transcripts.hold(session.session_file, create=True))
                    self.transcripts.append(turns, self._taken(), write.session_meta, durable=one)
                    entries += session_entries(turns, session.last_turn)
                    session.next_index += len(turns)
                    session.last_turn = turns[-1]
                    session.fork = False
                    files.add(session.session_file)
                if not files:
                    return []
                if not one:
                    make_durable(self.sessions_dir, [self.transcripts.path_of(f) for f in files])
                self._taken().update(reserved)
                try:
                    stored = self.indexer.write(entries, progress, embed=embed)
                except KernelError as exc:
                    # stored all the same: the transcripts have them; reopening memory or the next
                    # maintain (for a failed write) indexes them
                    self._write_failed(exc, files)
                    return [e.turn for e in entries]
            self._writes_since_maintenance += 1
            # recorded only now: the manifest marks transcript states that are fully indexed
            self.manifest.record_files(files)
            for session_file in forked:  # the branch left behind leaves the index
                self._follow_branches(session_file)
            return stored

    @property
    def pending_vectors(self) -> int:
        """Turns found by their words but still waiting for their vector."""
        return self._index.store.pending_count if self._index is not None and self._health.usable else 0

    def embed_pending(
        self, limit: int = EMBED_BATCH, progress: Progress | None = None, embedder: Embedder | None = None
    ) -> int:
        """Embed up to ``limit`` turns that were indexed without a vector; returns how many.

        Call it repeatedly in the background until it returns 0 (see ``Indexer.embed_waiting``).
        Searches and writes go on while it embeds: only the final write takes the kernel's
        lock. After ``stop_embedding`` it returns 0. ``progress(done, of)`` follows the
        parts of this call (``of``: ``limit`` or fewer). ``embedder`` embeds instead of the index's own
        (``memory.ray_embedding``: the same model on a cluster).
        """
        with self._embedding:
            self.embedding_elsewhere = False
            if self._stop_embedding.is_set():
                return 0
            done = 0
            with self._lease.batch() as ours:
                if not ours:  # another process computes them now: ``embedding_elsewhere``, look again later
                    self.embedding_elsewhere = True
                else:
                    self.recount_pending()  # what another process embedded since is not picked again
                    stop = self._lease.stop_for_others(self._stop_embedding)
                    done = self.indexer.embed_waiting(limit, self._lock, stop, progress, embedder)
                    # stopped for another process's command: what was finished is stored, the rest is theirs
                    self.embedding_elsewhere = stop.is_set() and not self._stop_embedding.is_set()
            own = self._index.embedder if self._index is not None else None
            if (self.embedding_elsewhere or not self.pending_vectors) and isinstance(own, Releasable):
                own.release_bulk()  # the catch-up rests: the bulk runtime's memory goes back until the next one
            return done

    def embedding_in_foreground(self) -> AbstractContextManager[None]:
        """While the block runs, this process's catch-up goes before other processes' background ones
        (a command the user waits for: import, reindex); see ``memory.embedding_lease``."""
        return self._lease.foreground()

    def recount_pending(self) -> int:
        """``pending_vectors`` read again from the newest version of the index (another process's
        vectors count too)."""
        if self._index is None or not self._health.usable:
            return 0
        # under the write lock: a commit of vectors and its update of the count are one step to a recount
        with self._lock, contextlib.suppress(IndexUnavailable):
            self._index.store.recount_pending()
        return self.pending_vectors

    def stop_embedding(self) -> None:
        """Stop the catch-up for good (Ctrl-C, quitting): the call in flight returns within about a
        second, its finished vectors written; later calls do nothing. Safe from any thread."""
        self._stop_embedding.set()
        if self._index is not None and isinstance(self._index.embedder, Interruptible):
            self._index.embedder.interrupt()

    # ------------------------------------------------------------------ read

    def recall_by_id(self, turn_id: str) -> RecallResult:
        """One turn with its anchors; a bad or unknown id gives an error value, not an exception."""
        cleaned = parse_turn_id(turn_id)
        if cleaned is None:
            return RecallResult(None, not_a_turn_id(turn_id))
        with self._reading() as store:
            found = store.get([cleaned]).get(cleaned)
        if found is None:
            located = self.catalogue.locate(cleaned)
            if located is not None and not located[1] and cleaned in self.catalogue.beside_ids(located[0]):
                return RecallResult(
                    None,
                    f"turn {cleaned} is on a branch kept beside the current one, which recall does not hold "
                    f"(← → on its turn in the chat; huichat show {cleaned} prints it)",
                )
            return RecallResult(None, f"no turn with id {cleaned}")
        return RecallResult(found)

    def format_turn(self, turn: Turn) -> str:
        """A stored turn in the seed's result format (no similarity: it was not searched for)."""
        return format_turn(turn, self.zone)

    def format_results(self, results: SearchResults) -> str:
        """A search's results in the seed's format (hits first, context under each), in this memory's zone."""
        return format_results(results, self.zone)

    def search(self, request: SearchRequest, on_round: OnRound | None = None) -> SearchResults:
        """Search memory (see ``Retriever.run``) and count the hits as accessed.

        A search that takes longer than ``retriever.search_timeout_seconds`` raises
        ``DeadlinePassed`` (it is left to finish in the background: LanceDB cannot be interrupted).
        Raises ``IndexUnavailable`` while memory is unavailable (its index cannot be read).
        """
        retriever = self.retriever
        if request.top_k is not None and not 1 <= request.top_k <= MAX_TOP_K:
            raise KernelError(f"top_k must be between 1 and {MAX_TOP_K} (got {request.top_k})")
        if len(request.query) > self.config.max_query_chars:
            # refused before the embedder and the word index see it: their work grows with the text
            raise TooLong(
                f"the query is {len(request.query)} characters long; at most {self.config.max_query_chars} "
                "are searched (retriever.max_query_chars)"
            )
        limit = self.config.search_timeout_seconds
        try:  # bounded work of its own, not counted against the search's deadline (only the first search does it)
            if not retriever.reference_ready:
                call_with_deadline(self.prepare_search, max(limit, _PREPARE_SECONDS))
        except TimeoutError:
            self.searches_over_deadline += 1
            raise DeadlinePassed(
                "memory is still preparing its first search (the embedding model is slow to answer); try again"
            ) from None
        try:
            with self._reading():
                results = call_with_deadline(lambda: retriever.run(request, on_round), limit)
        except TimeoutError:
            self.searches_over_deadline += 1
            raise DeadlinePassed(
                f"the search took longer than {limit:g} s and was given up; try fewer conditions or a shorter query"
            ) from None
        if request.record_access:
            self.note_access([h.turn.id for h in results.hits], request.now)
        return results

    def prepare_search(self) -> None:
        """Have what every search needs ready: the calibration's reference (measured once per
        embedder and kept in ``<data_dir>/cache``; read from there by later processes) and the
        dictionary of ``memory.crossling``."""
        _ = self.retriever.reference
        prepare_crossling(self.retriever.reference_dir)

    def note_access(self, ids: Iterable[str], now: datetime) -> None:
        """Count turns as retrieved; flushed to the index in batches."""
        with self._lock:
            for turn_id in ids:
                self._pending_access[turn_id] = self._pending_access.get(turn_id, 0) + 1
            self._access_time = now
            pending = sum(self._pending_access.values())
            due = time.monotonic() - self._access_flushed_at >= _ACCESS_FLUSH_SECONDS
            if (pending >= _ACCESS_FLUSH_AT and due) or pending >= _ACCESS_PENDING_MAX:
                self.flush_access()

    def update_turns(self, ids: Sequence[str], columns: dict[str, Sequence[Any]]) -> None:
        """Set derived columns (tier, importance, cluster) of stored turns in one commit.

        Only what the index derives: a turn's words, time and anchors come from its transcript.
        """
        if not ids:
            return
        with self._lock:
            self.store.update_columns(ids, columns)

    def flush_access(self) -> None:
        """Persist pending access statistics (dropped, not raised, when the index fails: they are statistics)."""
        with self._lock:
            if not self._pending_access or not self._health.usable:
                return
            pending, self._pending_access = self._pending_access, {}
            self._access_flushed_at = time.monotonic()
            if self._access_time is not None:
                with contextlib.suppress(IndexUnavailable), self._reading() as store:
                    store.record_access(pending, self._access_time)

    def session_turns(self, session_id: str) -> list[Turn]:
        """All turns of a session, in order."""
        with self._reading() as store:
            return sorted(store.where(Compare("session_id", "=", session_id)), key=lambda t: t.turn_index)

    def sessions(self) -> list[SessionInfo]:
        """Stored sessions, most recent first (read from the transcripts' catalogue)."""
        return self.catalogue.sessions()

    def count(self) -> int:
        """Number of stored turns."""
        with self._reading() as store:
            return store.count()

    def check(self) -> int:
        """Read every row's id and run a tiny search (``huichat doctor``): the number of turns.

        A damaged index raises ``KernelError`` saying what to run; an unreadable one also makes
        memory unavailable.
        """
        with self._reading() as store:
            return store.check()

    def needs_maintenance(self) -> bool:
        """True when enough writes piled up that compaction and an index refresh pay off,
        or when turns written earlier still wait to be indexed (never while the index is unavailable)."""
        if not self._health.usable:
            return False
        return self._writes_since_maintenance >= _MAINTAIN_AFTER_WRITES or self._health.state is IndexState.BEHIND

    def maintain(self, *, force: bool = False, cleanup_unverified: bool = False, merge_parts: bool = True) -> list[str]:
        """Index what a failed write left behind, create missing indexes, compact the table,
        drop old versions and duplicate rows, and (``merge_parts``) build the ANN index again once
        the maintenances left it in too many parts (``TurnStore.merge_ann_parts``: ~20 s at 100k
        turns). Call it off the UI thread, after replies.

        Commit conflicts with other processes are retried inside; ``KernelError`` means
        the disk or the index itself is in trouble.
        """
        with self._lock:
            if self._health.state is IndexState.BEHIND:
                self.reconcile()
            self.flush_manifest()
            created = self.store.ensure_indexes(self.config.ann_min_rows)
            if force or self.needs_maintenance():
                self.store.remove_duplicates()  # at open, reconcile has just done it
            if force or cleanup_unverified or self.needs_maintenance() or self.store.fragments() > 64:
                self.store.optimize(cleanup_unverified=cleanup_unverified)
                self._writes_since_maintenance = 0
            merged = self.store.merge_ann_parts() if merge_parts else None
            return [*created, merged] if merged else created

    def flush_manifest(self) -> None:
        """Write the manifest of indexed transcript states, if it changed."""
        self.manifest.flush()

    @property
    def rebuilding(self) -> bool:
        """True while the whole index is being rebuilt from the transcripts (recall is partial)."""
        return self._rebuilding

    def index_lost(self) -> bool:
        """True when the index is missing or empty although transcripts were indexed before.

        ``reconcile`` then rebuilds it from every transcript; the app can run that in a
        worker with progress instead of at open.
        """
        entries = self.manifest.entries  # read first: it notices an index made again
        return self.manifest.stale or (bool(entries) and self.store.count() == 0)

    def reconcile(
        self,
        progress: Progress | None = None,
        *,
        full: bool = False,
        embed: bool = True,
        only: Collection[str] | None = None,
        known: Collection[str] = (),
    ) -> ReconcileReport:
        """Bring the index in line with the transcripts (see ``memory.reconcile``); ``only``: these session files.

        Unchanged files (same size and mtime as last indexed) are skipped, unless
        ``full`` or the index was lost. Unfinished writes at the ends of transcripts are
        repaired, duplicate rows removed; ``last_report`` keeps what was done. Without
        ``embed``, vectors come later (``embed_pending``): every turn is found by its words
        as soon as this returns. ``known``: turns a table moved aside by a rebuild holds (a torn
        end of one of them is kept in place, as for an indexed turn).
        """
        with self._lock:
            lost = not full and self.index_lost()
            was_empty = lost and self.store.count() == 0
            if lost:
                self.manifest.clear()
            self._rebuilding = full or lost
            # what failed to be indexed before now is picked up by this pass (a failure after it sets this again)
            before = self._health
            if before.state is IndexState.BEHIND:
                self._health = OK
            reconciler = Reconciler(
                self.indexer, self.transcripts, self.manifest, progress, self._lock, embed=embed, known=known
            )
        try:
            # the lock is taken batch by batch: a reply can be stored while the index is rebuilt
            report = reconciler.run(full=full or lost, only=None if lost else only)
            with self._lock:
                report.rebuilt, report.was_empty = lost, was_empty
                # at open (or any full pass) duplicates go; a pass over a few named files leaves that to it
                report.duplicates = self.store.remove_duplicates() if only is None else 0
        except KernelError:
            if self._health == OK:
                self._health = before
            raise
        finally:
            self._rebuilding = False
        with self._lock:
            self.manifest.stale = False
            if self._known_ids is not None:
                self._known_ids.update(reconciler.added_ids)
            self.manifest.flush()
            self.last_report = report
            return report

    def reindex(self, progress: Progress | None = None, *, embed: bool = True) -> ReconcileReport:
        """Rebuild the whole index from the transcripts (after changing the model, or a damaged index).

        The old table is moved aside first and never read on the way (``TurnStore.reset``).
        Then, in a child process (``memory.index_probe.salvage``: reading damaged data can
        abort), its newest version that still reads gives what only it knew: the turns whose
        transcript part cannot be read, and access statistics. Without ``embed`` every turn
        is searchable by its words when this returns and gets its vector from ``embed_pending``.
        """
        with self._lock:
            if self._index is None:
                raise self._health.error()
            store = self._index.store
            with contextlib.suppress(KernelError):
                self.flush_access()
            self.manifest.clear()  # first: a rebuild cut short starts again at the next open
            old_table = store.set_aside  # one that could not even be opened was moved aside at open
            old_table = store.reset() or old_table
            self._health = store.health  # a fresh table: whatever failed before is gone with the old one
            self.manifest.rebind(store.instance)
            self._known_ids = None
            # what the old table still reads is read first: a torn part of a turn it knows is kept, not cut off
            found = index_probe.salvage(store.uri, Path(old_table).name.removesuffix(".lance")) if old_table else None
            report = self.reconcile(progress, full=True, embed=embed, known=found.ids if found else ())
            report.set_aside = old_table
            kept_all = self._carry_over(found, report, embed=embed)
            report.access_lost = not kept_all and (bool(old_table) or "://" in store.uri)  # remote: dropped
            self.maintain(force=True)
            return report

    def _carry_over(self, found: index_probe.Salvaged | None, report: ReconcileReport, *, embed: bool) -> bool:
        """Bring what only the moved-aside table knew into the rebuilt one; False when some of it is lost."""
        assert self._index is not None
        if found is None:
            return False
        store = self._index.store
        present = store.all_ids()
        rows = found.turns(report.unread - present, report.hidden_in)
        salvaged = [t for t in turns_from(rows) if t.id not in present and is_turn_id(t.id)] if rows else []
        before = store.get(t.prev_id for t in salvaged if t.prev_id)
        entries = [e for t in salvaged for e in session_entries([t], before.get(t.prev_id or ""))]
        self._index.indexer.write(entries, embed=embed)
        present |= {t.id for t in salvaged}
        store.restore_kept({row["id"]: kept_fields(row) for row in found.kept.to_pylist() if row["id"] in present})
        report.salvaged = len(salvaged)
        report.changed_ids |= {t.id for t in salvaged}
        return found.newest and rows is not None


def _checked_id(turn_id: str) -> str:
    """``turn_id`` as a turn id (``a3f2c7`` or ``id:a3f2c7``); ``BadTurnId`` for anything else."""
    cleaned = parse_turn_id(turn_id)
    if cleaned is None:
        raise BadTurnId(not_a_turn_id(turn_id))
    return cleaned

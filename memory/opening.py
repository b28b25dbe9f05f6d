"""The one way to open memory: used by the app, the CLI, the services, the benchmarks and the tests."""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from datetime import date, datetime, tzinfo

from huichat.memory import index_probe
from huichat.memory.config import ArchiveConfig, LifecycleConfig, RetrieverConfig
from huichat.memory.embedding import Embedder
from huichat.memory.fusion import Fusion
from huichat.memory.kernel import MemoryKernel
from huichat.memory.location import MemoryLocation
from huichat.memory.shared_transcripts import SharedTranscripts
from huichat.memory.store import TurnStore
from huichat.memory.timeparse import TimeResolver

REMOTE_CONSISTENCY_SECONDS = 1.0
"""How stale an index on object storage may be read: another process's (replica's) commit is
seen within this time, well inside the 2 s a turn stored through one replica must take to be
found through another. Each check is one small read of the table's latest version."""


def open_kernel(
    location: MemoryLocation,
    embedder: Embedder,
    retriever: RetrieverConfig,
    zone: tzinfo,
    *,
    now: datetime,
    archive: ArchiveConfig | None = None,
    reconcile: bool = True,
    embed: bool = True,
    for_rebuild: bool = False,
    id_source: Callable[[], str] | None = None,
    fusion: Fusion | None = None,
    lifecycle: LifecycleConfig | None = None,
) -> MemoryKernel:
    """Open the index and the transcripts, and bring them in line.

    Old months are packed into archives first when ``archive.pack_after_months`` says so
    (only by a process that is alone); then turns written since the index last saw the
    transcripts are reconciled into it — embedded at once, or (``embed`` false) found by
    their words at once and embedded later by ``embed_pending``. ``for_rebuild`` opens an index that is about to be
    rebuilt (``reindex``): it is not checked against the embedder, packed or reconciled.

    A local index is first probed in a child process when a process that had it open died
    since (``memory.index_probe.guard``: the damage that aborts a reader is said in one
    line, ``IndexUnavailable``, instead of ending this process too).
    """
    release = None
    if not location.remote:
        if not for_rebuild:  # a rebuild moves the old table aside unread
            index_probe.guard(location.data_dir, location.db_uri)
        release = index_probe.reading(location.data_dir)
    try:
        store = _store(location, embedder, retriever, zone, for_rebuild)
    except BaseException:
        if release is not None:
            release()
        raise
    digest = hashlib.sha1(location.db_uri.encode()).hexdigest()[:10]
    manifest = location.data_dir / (f"index-manifest-{digest}.json" if location.remote else "index-manifest.json")
    kernel = MemoryKernel(
        store,
        embedder,
        location.sessions_dir,
        retriever,
        zone,
        manifest_path=manifest,
        catalogue_path=location.catalogue_path,
        fusion=fusion,
        id_source=id_source,
        lifecycle=lifecycle,
        data_dir=location.data_dir,
        on_close=release,
        shared=_shared(location),
    )
    kernel.pull_shared()  # the working copy first: the reconcile below reads it
    alone = kernel.acquire_process_lock(location.data_dir / ".huichat.lock")
    if for_rebuild:
        return kernel
    months = archive.pack_after_months if archive else 0
    if months and alone:
        from huichat.memory.archive import pack_months

        today = now.astimezone(zone).date()
        index = today.year * 12 + today.month - 1 - months
        pack_months(location.sessions_dir, date(index // 12, index % 12 + 1, 1), archive.level if archive else 3)
    if reconcile:
        # a new (or lost and recreated) index is noticed by its instance name: every transcript is read
        kernel.reconcile(embed=embed)
        # not the ANN index built again (tens of seconds at 100k turns): the next maintenance does it, after replies
        kernel.maintain(cleanup_unverified=alone and not location.remote, merge_parts=False)
    return kernel


def _store(
    location: MemoryLocation, embedder: Embedder, retriever: RetrieverConfig, zone: tzinfo, for_rebuild: bool
) -> TurnStore:
    return TurnStore(
        location.db_uri,
        embedder.dim,
        embedder.name,
        TimeResolver(zone, retriever.week_start).event_ranges,
        consistency_seconds=REMOTE_CONSISTENCY_SECONDS if location.remote else 0.0,
        for_rebuild=for_rebuild,
        storage_options=location.options,
    )


def open_transcripts_only(
    location: MemoryLocation, retriever: RetrieverConfig, zone: tzinfo, reason: str
) -> MemoryKernel:
    """Memory whose index could not be opened (``reason``): unavailable from the start.

    No index and no embedder: turns are written to the transcripts as usual and reach the
    index when ``open_kernel`` succeeds again (it reconciles them); every search raises
    ``IndexUnavailable`` with the reason.
    """
    return MemoryKernel(
        None,
        None,
        location.sessions_dir,
        retriever,
        zone,
        catalogue_path=location.catalogue_path,
        data_dir=location.data_dir,
        unavailable=reason,
        shared=_shared(location),
    )


def _shared(location: MemoryLocation) -> SharedTranscripts | None:
    if not location.transcripts_uri:
        return None
    return SharedTranscripts(location.transcripts_uri, location.options, location.sessions_dir)

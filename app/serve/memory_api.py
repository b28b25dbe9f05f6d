"""The memory API under ``/v1/memory`` (the seed's paths): search, turns, sessions, transcripts, upkeep.

Every route works on the caller's own memory (``user`` lets an admin key pick another
user's); an id or a path from another user's memory is simply not found there (404).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from typing import Annotated, Any, Self

from fastapi import APIRouter, Query, Request
from fastapi.responses import PlainTextResponse
from pydantic import BaseModel, ConfigDict, Field, model_validator
from pydantic_core import PydanticCustomError

from huichat.app.runtime import Runtime
from huichat.app.serve.auth import Caller, Principal, user_for
from huichat.app.serve.chat import memory_state
from huichat.app.serve.errors import ApiError
from huichat.app.serve.jobs import JOBS
from huichat.app.serve.service import Service, service_of
from huichat.app.serve.transcripts import read_transcript
from huichat.app.users.memories import UpkeepBusy
from huichat.memory.config import MAX_CONTEXT_WINDOW, MAX_TOP_K
from huichat.memory.errors import BadTurnId, IndexUnavailable, KernelError, UnknownTurn
from huichat.memory.filters import FilterError
from huichat.memory.kernel import MemoryKernel
from huichat.memory.results import SearchRequest, format_search_result, hits_first, turn_record
from huichat.memory.turns import is_turn_id

router = APIRouter(prefix="/v1/memory", tags=["memory"])
UserParam = Annotated[str | None, Query(description="whose memory (admin keys only; default: the key's user)")]


class SearchBody(BaseModel):
    """A memory search, as the seed's API takes it. A field it does not know is an error: a
    client sending another API's name for one (``top_k``) must hear so, not get the default."""

    model_config = ConfigDict(extra="forbid")

    query: str = Field(description="words or a question; time phrases (上周三下午, last week) are understood")
    max_results: int = Field(default=5, ge=1, le=MAX_TOP_K, description="hits wanted")
    filter: str | None = Field(default=None, description="kernel filter, e.g. \"timestamp >= '2026-04-06'\"")
    context_window: int = Field(
        default=0, ge=0, le=MAX_CONTEXT_WINDOW, description="neighbouring turns (±N) around each hit"
    )

    @model_validator(mode="after")
    def _something_to_search(self) -> Self:
        # the kernel would list recent turns, each with similarity 1.0: no search at all
        if not self.query.strip() and not self.filter:
            raise PydanticCustomError("empty_query", "query is empty: give the words to search for (or a filter)")
        return self


def body_limits(runtime: Runtime) -> dict[str, int]:
    """The search's body limit: its query at the most escaped JSON spells a character in (12
    bytes, a surrogate pair), plus room for a filter and the options; what is larger is no search."""
    return {f"{router.prefix}/search": runtime.loaded.config.retriever.max_query_chars * 12 + 2048}


async def _kernel(request: Request, caller: Principal, user: str | None) -> tuple[Service, str, MemoryKernel]:
    service = service_of(request)
    name = user_for(request, caller, user)
    return service, name, await service.kernel(name)


@router.post("/search", summary="Search memory (hybrid, time-aware)")
async def search(body: SearchBody, request: Request, caller: Caller, user: UserParam = None) -> dict[str, Any]:
    """Hits (and ±N neighbours) with similarity, anchors and the seed's text format per hit."""
    service, name, kernel = await _kernel(request, caller, user)
    zone = service.runtime.zone.tz
    search_request = SearchRequest(
        body.query, service.runtime.clock(), body.max_results, body.filter, body.context_window
    )
    try:
        results = await asyncio.to_thread(kernel.search, search_request)
    except FilterError as exc:
        raise ApiError(400, f"filter: {exc}") from None
    record = results.to_record(zone)
    for hit, row in zip(hits_first(results.results), record["results"], strict=True):
        row["formatted"] = format_search_result(hit, zone)
    return {"user": name, **record}


@router.get("/turn/{turn_id}", summary="One turn by id, with its anchors and neighbours")
async def turn(turn_id: str, request: Request, caller: Caller, user: UserParam = None) -> dict[str, Any]:
    """The turn, the seed's text format, and the previous and next turns of its session."""
    if not is_turn_id(turn_id):
        raise ApiError(400, f"{turn_id[:40]!r} is not a turn id (6 lowercase letters or digits, e.g. a3f2c7)")
    service, _name, kernel = await _kernel(request, caller, user)
    zone = service.runtime.zone.tz
    found = await asyncio.to_thread(kernel.recall_by_id, turn_id)
    if found.turn is None:
        raise ApiError(404, found.error)
    linked = [i for i in (found.turn.prev_id, found.turn.next_id) if i]
    around = await asyncio.to_thread(kernel.store.get, linked) if linked else {}
    prev = around.get(found.turn.prev_id or "")
    after = around.get(found.turn.next_id or "")
    return {
        "turn": turn_record(found.turn, zone),
        "formatted": kernel.format_turn(found.turn),
        "prev": turn_record(prev, zone) if prev else None,
        "next": turn_record(after, zone) if after else None,
    }


@router.delete("/turn/{turn_id}", summary="Forget a turn (or restore it with ?undo=true)")
async def forget(
    turn_id: str,
    request: Request,
    caller: Caller,
    user: UserParam = None,
    undo: Annotated[bool, Query(description="bring a forgotten turn back")] = False,
) -> dict[str, Any]:
    """A tombstone in the turn's transcript: it leaves search and recall before this answers."""
    service, name, kernel = await _kernel(request, caller, user)
    try:
        cleaned, changed = await asyncio.to_thread(kernel.forget, turn_id, service.runtime.clock(), restore=undo)
    except BadTurnId as exc:
        raise ApiError(400, str(exc)) from None
    except UnknownTurn as exc:
        raise ApiError(404, str(exc)) from None
    return {"user": name, "id": cleaned, "forgotten": not undo, "changed": changed}


@router.get("/sessions", summary="Stored sessions, most recent first, a page at a time")
async def sessions(
    request: Request,
    caller: Caller,
    user: UserParam = None,
    limit: Annotated[int, Query(ge=1, le=10_000, description="sessions in this page")] = 100,
    offset: Annotated[int, Query(ge=0, description="sessions to skip (the last page's next_offset)")] = 0,
) -> dict[str, Any]:
    """Each session's id, transcript path, first and last time, turn count, title and first
    message; ``total`` counts them all, ``next_offset`` asks for the next page (null after the last)."""
    service, name, kernel = await _kernel(request, caller, user)
    infos = await asyncio.to_thread(kernel.sessions)
    zone = service.runtime.zone.tz
    page = infos[offset : offset + limit]
    return {
        "user": name,
        "total": len(infos),
        "offset": offset,
        "next_offset": offset + len(page) if offset + len(page) < len(infos) else None,
        "sessions": [
            {
                "session_id": s.session_id,
                "session_file": s.session_file,
                "started": s.started.astimezone(zone).isoformat(),
                "last": s.last.astimezone(zone).isoformat(),
                "turns": s.turns,
                "title": s.title,
                "first_message": s.first_text[:200],
            }
            for s in page
        ],
    }


@router.get("/file", summary="A transcript by its path relative to the user's transcript folder")
async def transcript_file(
    request: Request,
    path: Annotated[str, Query(description="e.g. 2026-W48/2026-11-29/chat_<session>.md")],
    caller: Caller,
    user: UserParam = None,
) -> PlainTextResponse:
    """The Markdown transcript (also from a monthly archive). Nothing outside the folder is reachable."""
    service = service_of(request)
    name = user_for(request, caller, user)
    root = service.stores.location(name).sessions_dir
    text = await asyncio.to_thread(read_transcript, root, path)
    return PlainTextResponse(text, media_type="text/markdown; charset=utf-8")


@router.post("/sync", summary="Reconcile the index with the transcripts (and reopen degraded memory)")
async def sync(request: Request, caller: Caller, user: UserParam = None) -> dict[str, Any]:
    """Turns added, updated and removed; a degraded memory is reopened first."""
    await _no_options(request, "sync")
    service = service_of(request)
    name = user_for(request, caller, user)
    kernel = await service.memory(name).reopen()
    if not kernel.health.usable:
        raise kernel.health.error()
    report = await asyncio.to_thread(kernel.reconcile, embed=False)
    return {
        "user": name,
        "files_checked": report.files_checked,
        "files_parsed": report.files_parsed,
        "added": report.added,
        "updated": report.updated,
        "removed": report.removed,
        "unreadable": report.unreadable,
    }


@router.get("/status", summary="Whether memory works, and how much it holds")
async def status(request: Request, caller: Caller, user: UserParam = None) -> dict[str, Any]:
    """``memory`` is ``ok`` or ``degraded`` (then ``reason`` says why; chat goes on without recall);
    ``index`` is the kernel's health: ``ok``, ``behind`` (some turns not searchable yet) or ``unavailable``."""
    _service, name, kernel = await _kernel(request, caller, user)
    turns = None
    if kernel.health.usable:
        with contextlib.suppress(IndexUnavailable):  # a count that finds the index unreadable makes it unavailable
            turns = await asyncio.to_thread(kernel.count)
    health = kernel.health
    state: dict[str, Any] = {"user": name, "memory": memory_state(health), "index": health.state.value}
    if not health.usable:
        return {**state, "reason": health.reason, "turns": None, "pending_vectors": None}
    return {
        **state,
        "reason": health.reason or None,
        "turns": turns,
        "pending_vectors": kernel.pending_vectors,
        "embedder": kernel.embedder.name,
    }


@router.get("/stats", summary="Memory statistics (what the dashboard draws)")
async def stats(request: Request, caller: Caller, user: UserParam = None) -> dict[str, Any]:
    """Totals, turns per week, recent and most-recalled turns; tiers and importance once the lifecycle exists."""
    from huichat.memory.stats import MemoryStats, collect

    service, name, kernel = await _kernel(request, caller, user)

    def counted() -> MemoryStats:
        kernel.flush_access()  # recalls are counted in batches; the figures include the latest
        return collect(kernel, service.runtime.clock())

    collected = await asyncio.to_thread(counted)
    return {"user": name, **collected.to_record()}


_DRY_RUNS = {"consolidate": "huichat consolidate --dry-run", "cleanup": "huichat lifecycle run --dry-run"}
_DRY_RUNS["promote"] = _DRY_RUNS["cleanup"]


async def _no_options(request: Request, name: str) -> None:
    """A route that takes no body refuses one holding options (another API's ``dry_run``): run
    without them, it would do what the client asked it not to."""
    raw = (await request.body()).strip()
    if not raw:
        return
    try:
        sent = json.loads(raw)
    except ValueError:
        sent = None
    if sent == {}:
        return
    what = ", ".join(sorted(str(k) for k in sent))[:200] if isinstance(sent, dict) else "a body"
    hint = f"; {_DRY_RUNS[name]} shows what it would do" if name in _DRY_RUNS else ""
    raise ApiError(400, f"{request.url.path} takes no options (sent: {what}){hint}")


async def _job(name: str, request: Request, caller: Principal, user: str | None) -> dict[str, Any]:
    await _no_options(request, name)
    job = JOBS[name]
    service = service_of(request)
    who = user_for(request, caller, user)
    config = service.runtime.loaded.config.consolidation
    now = service.runtime.clock()
    try:
        done = await service.memory(who).upkeep(
            lambda kernel: job(kernel, now, config), service.settings.memory_retry_seconds
        )
    except UpkeepBusy as exc:
        return {"user": who, "skipped": str(exc)}  # as a job another process runs says so
    except IndexUnavailable:
        raise
    except KernelError as exc:
        raise ApiError(400, str(exc)) from None
    return {"user": who, **done}


@router.post("/consolidate", summary="Merge similar memories (lifecycle job)")
async def consolidate(request: Request, caller: Caller, user: UserParam = None) -> dict[str, Any]:
    """The seed's ``clusters_found`` / ``clusters_consolidated`` / ``memories_consolidated``."""
    return await _job("consolidate", request, caller, user)


@router.post("/cleanup", summary="Move expired working memory on (lifecycle job)")
async def cleanup(request: Request, caller: Caller, user: UserParam = None) -> dict[str, Any]:
    """The seed's ``cleaned``."""
    return await _job("cleanup", request, caller, user)


@router.post("/promote", summary="Promote often-recalled memories (lifecycle job)")
async def promote(request: Request, caller: Caller, user: UserParam = None) -> dict[str, Any]:
    """The seed's ``promoted``."""
    return await _job("promote", request, caller, user)


@router.get("/users", summary="The users whose memory the caller may see")
async def users(request: Request, caller: Caller) -> dict[str, Any]:
    """Every user for an admin (or the loopback owner); only the caller's own user for other keys.

    ``current`` is the caller's own user (the dashboard opens on it).
    """
    service = service_of(request)
    names = [caller.user]
    if caller.admin:
        names = await asyncio.to_thread(lambda: service.stores.users(k.user for k in service.keys.entries()))
    return {"users": [{"id": n, "name": n} for n in names], "current": caller.user}

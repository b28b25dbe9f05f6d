"""Commands that run without the TUI: doctor, recall, show, reindex, sessions."""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING

from app.config import LoadedConfig

if TYPE_CHECKING:
    from app.runtime import Runtime

EXIT_FAIL = 1


def _error(message: str) -> int:
    print(f"huichat: error: {message}", file=sys.stderr)
    return EXIT_FAIL


def run_command(args: argparse.Namespace, runtime: Runtime) -> int:
    """Dispatch a non-TUI command."""
    from memory.errors import KernelError

    handlers: dict[str, Callable[[argparse.Namespace, Runtime], int]] = {
        "doctor": doctor,
        "recall": recall,
        "show": show,
        "reindex": reindex,
        "sessions": sessions,
    }
    try:
        return handlers[args.command](args, runtime)
    except KernelError as exc:
        return _error(str(exc))
    except KeyboardInterrupt:
        return 130


# -------------------------------------------------------------------- recall/show


def recall(args: argparse.Namespace, runtime: Runtime) -> int:
    """Search memory and print the seed's format (or JSON)."""
    from memory.config import MAX_TOP_K
    from memory.filters import FilterError
    from memory.results import SearchRequest, time_summary
    from memory.turns import utc_now

    if args.top_k is not None and not 1 <= args.top_k <= MAX_TOP_K:
        return _error(f"--top-k must be between 1 and {MAX_TOP_K} (got {args.top_k})")
    now = utc_now()
    if args.now:
        try:
            now = datetime.fromisoformat(args.now)
        except ValueError:
            return _error(f"--now: not an ISO date-time: {args.now!r}")
        if now.tzinfo is None:
            now = now.replace(tzinfo=runtime.zone.tz)
    kernel = runtime.open_kernel()
    try:
        request = SearchRequest(
            args.query, now, args.top_k, args.filter_expr, max(0, args.context), include_failed=args.include_failed
        )
        results = kernel.search(request)
    except FilterError as exc:
        return _error(f"--filter: {exc}")
    finally:
        kernel.close()
    if args.json:
        payload = results.to_record(runtime.zone.tz)
        print(json.dumps(payload, ensure_ascii=False, indent=2))
        return 0
    if results.time_range is not None:
        scan = f" (progressive scan: {len(results.rounds)} weeks)" if results.rounds else ""
        summary = time_summary(results)
        print(f"# time: {results.time_range.phrase} → {results.time_range.describe()}{scan} · {summary}\n")
    if not results.results:
        near = results.below
        below = f" (nearest: {near.turn.id} at {near.similarity or 0.0:.3f}, below the threshold)" if near else ""
        print(f"no relevant memory{below}")
        return 0
    print(kernel.retriever.format_results(results))
    return 0


def show(args: argparse.Namespace, runtime: Runtime) -> int:
    """Print one turn by id: from its transcript, or with ``--json`` from the index (every field)."""
    from memory.results import format_turn, turn_record
    from memory.turns import is_turn_id

    turn_id = args.turn_id.strip().lower().removeprefix("id:").strip()
    if not is_turn_id(turn_id):
        return _error(f"{args.turn_id[:40]!r} is not a turn id (6 lowercase letters or digits, e.g. a3f2c7)")
    if args.json:
        kernel = runtime.open_kernel()
        try:
            found = kernel.recall_by_id(turn_id)
        finally:
            kernel.close()
        if found.turn is None:
            return _error(found.error)
        print(json.dumps(turn_record(found.turn, runtime.zone.tz), ensure_ascii=False, indent=2))
        return 0
    turn = runtime.open_catalogue().turn(turn_id)
    if turn is None:
        return _error(f"no turn with id {turn_id}")
    print(format_turn(turn, runtime.zone.tz))
    return 0


def sessions(args: argparse.Namespace, runtime: Runtime) -> int:
    """List stored sessions, most recent first (from the transcripts; the index is not opened)."""
    infos = runtime.open_catalogue().sessions()
    if args.json:
        rows = [
            {
                "session_id": s.session_id,
                "session_file": s.session_file,
                "started": s.started.isoformat(),
                "last": s.last.isoformat(),
                "turns": s.turns,
                "title": s.title,
                "title_source": s.title_source,
                "first_message": s.first_text[:200],
            }
            for s in infos
        ]
        print(json.dumps(rows, ensure_ascii=False, indent=2))
        return 0
    if not infos:
        print("no sessions yet")
    for info in infos:
        about = info.title or (info.first_text.splitlines()[0] if info.first_text else "")
        turns = f"{info.turns} turn{'' if info.turns == 1 else 's'}"
        print(f"{info.session_id}  {info.last.astimezone(runtime.zone.tz):%Y-%m-%d %H:%M}  {turns:>9}  {about[:60]}")
    return 0


def reindex(args: argparse.Namespace, runtime: Runtime) -> int:
    """Rebuild the index from the transcripts with a progress bar."""
    from rich.progress import Progress

    kernel = runtime.open_kernel(reconcile=False, for_rebuild=True)
    with Progress(transient=True) as progress:
        # words first (every turn searchable in seconds), then the vectors
        task = progress.add_task("indexing turns", total=None)

        def advance(done: int, total: int) -> None:
            progress.update(task, completed=done, total=total)

        try:
            report = kernel.reindex(advance, embed=False)
            embedding = progress.add_task("embedding turns", total=kernel.pending_vectors)
            while batch := kernel.embed_pending(limit=256):
                progress.advance(embedding, batch)
        finally:
            kernel.close()
    print(
        f"reindexed {report.added + report.updated} turns from {report.files_checked} transcripts into {runtime.loaded.paths.db_uri}"
    )
    for line in report.notices():  # every one: this is where "… and N more" sends the user
        print(f"huichat: {line}", file=sys.stderr)
    return 0


# ------------------------------------------------------------------------ doctor


@dataclass
class Check:
    """One row of the doctor's table."""

    name: str
    ok: bool
    detail: str


def _check_config(loaded: LoadedConfig) -> Check:
    files = ", ".join(str(f) for f in loaded.files) or f"defaults only (no {loaded.paths.config_file})"
    return Check("config", True, f"valid · merged: {files}")


def _check_data_dir(loaded: LoadedConfig) -> Check:
    data_dir = loaded.paths.data_dir
    try:
        data_dir.mkdir(parents=True, exist_ok=True)
        loaded.paths.sessions_dir.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile(dir=data_dir, prefix=".doctor-", delete=True) as handle:
            handle.write(b"ok")
    except OSError as exc:
        return Check("data dir", False, f"{data_dir}: not writable ({exc.strerror or exc})")
    return Check("data dir", True, f"{data_dir} (writable) · transcripts in {loaded.paths.sessions_dir}")


def doctor(args: argparse.Namespace, runtime: Runtime) -> int:
    """Print a table of checks; exit non-zero when one fails."""
    from rich.console import Console
    from rich.table import Table

    from memory.errors import KernelError

    loaded = runtime.loaded
    checks = [_check_config(loaded), Check("time zone", True, runtime.zone.name), _check_data_dir(loaded)]
    embedder = None
    started = time.perf_counter()
    try:
        embedder = runtime.open_embedder()
        seconds = time.perf_counter() - started
        checks.append(
            Check(
                "embedding model",
                True,
                f"{embedder.name} · {embedder.dim} dimensions · loaded in {seconds:.1f} s",
            )
        )
    except KernelError as exc:
        checks.append(Check("embedding model", False, str(exc)))
    if embedder is not None:
        try:
            kernel = runtime.open_kernel(embedder, reconcile=False)  # a check reads; it does not catch up
            try:
                count = kernel.store.check()  # reads every row's id and runs a tiny search
            finally:
                kernel.close()
            checks.append(Check("memory index", True, f"{loaded.paths.db_uri} · {count} turns"))
        except KernelError as exc:
            checks.append(Check("memory index", False, str(exc)))
    checks.extend(_provider_checks(loaded, args.ping))
    table = Table(title=f"huichat doctor · {loaded.paths.config_file}", show_lines=False)
    table.add_column("check")
    table.add_column("status")
    table.add_column("detail", overflow="fold")
    for check in checks:
        table.add_row(check.name, "[green]ok[/]" if check.ok else "[red]FAIL[/]", check.detail)
    Console().print(table)
    return 0 if all(c.ok for c in checks) else EXIT_FAIL


def _provider_checks(loaded: LoadedConfig, ping: bool) -> list[Check]:
    providers = loaded.config.providers
    if not providers.named:
        return [
            Check(
                "providers",
                False,
                f"none configured: add providers.named.<name>.model (and api_key_env) to {loaded.paths.config_file}",
            )
        ]
    from providers.config import key_problem
    from providers.errors import ProviderError
    from providers.llm import LLMClient

    client = LLMClient(providers) if ping else None
    checks = []
    default = providers.default_name()
    for name, provider in providers.named.items():
        label = f"provider {name}" + (" (default)" if name == default else "")
        problem = key_problem(name, provider, os.environ)
        key = f"${provider.api_key_env} set" if provider.api_key_env and not problem else "no key needed"
        detail = f"{provider.model}" + (f" @ {provider.api_base}" if provider.api_base else "")
        if problem:
            checks.append(Check(label, False, f"{detail} · {problem}"))
            continue
        if client is not None:
            try:
                answer = asyncio.run(client.ping(name, timeout=min(provider.timeout, 15.0)))
            except ProviderError as exc:
                checks.append(Check(label, False, f"{detail} · ping failed: {exc}"))
                continue
            try:
                tools = (
                    asyncio.run(client.probe_tools(name)) if provider.supports_tools else "off (supports_tools: false)"
                )
            except ProviderError as exc:
                tools = f"probe failed: {exc}"
            checks.append(Check(label, True, f"{detail} · {key} · ping: {answer!r} · tools: {tools}"))
            continue
        checks.append(Check(label, True, f"{detail} · {key}"))
    return checks

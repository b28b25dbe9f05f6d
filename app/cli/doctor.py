"""``huichat doctor``: config, data dir, embedding model, index and providers, as a table."""

from __future__ import annotations

import argparse
import asyncio
import os
import stat
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING

from huichat.app import index_check, visible
from huichat.app.wording import plural

if TYPE_CHECKING:
    from huichat.app.config import LoadedConfig
    from huichat.app.memory_modes import ModeBook
    from huichat.app.runtime import Runtime
    from huichat.memory.embedding import Embedder
    from huichat.providers.config import ProvidersConfig

HELP = "check config, data dir, embedding model, index and providers"


def add_parser(parser: argparse.ArgumentParser) -> None:
    """``--ping``, ``--full``."""
    parser.add_argument(
        "--ping", action="store_true", help="ask each provider, all at once, a tiny question and a tool probe"
    )
    parser.add_argument(
        "--full", action="store_true", help="read the whole index even when it is unchanged since the last check"
    )


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


def _check_private(loaded: LoadedConfig) -> Check:
    """Folders of memory that other users can enter (made before huichat kept them private)."""
    roots = [root for root in dict.fromkeys((loaded.paths.data_dir, loaded.paths.cache_dir)) if root.is_dir()]
    wide: list[tuple[Path, int]] = []
    for root in roots:
        for name, _, _ in os.walk(root):
            folder = Path(name)
            mode = stat.S_IMODE(folder.stat().st_mode)
            if mode & 0o077:
                wide.append((folder, mode))
    if not wide:
        return Check("private", True, "only you can read memory (folders 0700, files 0600)")
    first, mode = wide[0]
    more = f" and {len(wide) - 1} more" if len(wide) > 1 else ""
    fix = " ".join(str(root) for root in roots if any(folder.is_relative_to(root) for folder, _ in wide))
    return Check(
        "private",
        False,
        f"other users can read {len(wide)} folder{'s' if len(wide) > 1 else ''}: {first} ({mode:04o}){more}; "
        f"run chmod -R go-rwx {fix}",
    )


def run(args: argparse.Namespace, runtime: Runtime) -> int:
    """Print a table of checks; exit non-zero when one fails."""
    from rich.table import Table
    from rich.text import Text

    loaded = runtime.loaded
    # the providers are checked beside memory, not after it: importing litellm (seconds of CPU)
    # and the pings overlap the model's load and the index's read, which mostly wait
    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="doctor-providers") as pool:
        providers = pool.submit(_provider_checks, loaded, args.ping)
        checks = _memory_checks(runtime, full=args.full)
        checks.extend(providers.result())
    table = Table(title=Text(f"huichat doctor · {loaded.paths.config_file}"), show_lines=False)
    table.add_column("check")
    table.add_column("status")
    table.add_column("detail", overflow="fold")
    for check in checks:
        # a detail quotes paths and errors: text, never markup
        table.add_row(check.name, "[green]ok[/]" if check.ok else "[red]FAIL[/]", Text(check.detail))
    visible.console().print(table)
    return 0 if all(c.ok for c in checks) else 1


def _memory_checks(runtime: Runtime, *, full: bool) -> list[Check]:
    """Config, data folder, privacy, embedding model and index."""
    from huichat.memory.errors import KernelError

    loaded = runtime.loaded
    checks = [
        _check_config(loaded),
        Check("time zone", True, runtime.zone.name),
        _check_data_dir(loaded),
        _check_private(loaded),
    ]
    started = time.perf_counter()
    try:
        embedder = runtime.open_embedder()
    except KernelError as exc:
        return [*checks, Check("embedding model", False, str(exc))]
    seconds = time.perf_counter() - started
    loaded_in = f"{embedder.name} · {embedder.dim} dimensions · loaded in {seconds:.1f} s"
    return [*checks, Check("embedding model", True, loaded_in), _check_index(runtime, embedder, full=full)]


def _check_index(runtime: Runtime, embedder: Embedder, *, full: bool) -> Check:
    """The last good full check when the index is unchanged since (``app.index_check``), else a
    full one: every row read in a child process first (damage can abort a reader: it ends only
    the child), then the index opened here and a search run."""
    from huichat.memory import index_probe

    paths = runtime.loaded.paths
    local = "://" not in paths.db_uri
    died = index_probe.readers_that_died(paths.data_dir) if local else []
    before = index_check.fingerprint(Path(paths.db_uri)) if local else None
    known = None if full or died else index_check.last_good(paths.data_dir, before)
    if known is not None:
        return Check("memory index", True, f"{known.detail} · unchanged since the full check at {known.checked}")
    check = _read_index(runtime, embedder, died)
    if not check.ok:
        index_check.forget(paths.data_dir)
    elif before is not None and index_check.fingerprint(Path(paths.db_uri)) == before:
        checked = datetime.now().astimezone().isoformat(timespec="seconds")
        index_check.remember(paths.data_dir, index_check.GoodCheck(before, checked, check.detail))
    return check


def _read_index(runtime: Runtime, embedder: Embedder, died: list[Path]) -> Check:
    from huichat.memory import index_probe
    from huichat.memory.errors import KernelError

    paths = runtime.loaded.paths
    if "://" not in paths.db_uri:
        reason = index_probe.probe(paths.db_uri)
        if reason is not None:
            return Check("memory index", False, f"{paths.db_uri} is damaged ({reason}); run `huichat reindex`")
        index_probe.vouch(died)
    try:
        kernel = runtime.open_kernel(embedder, reconcile=False)  # a check reads; it does not catch up
        try:
            count = kernel.check()  # reads every row's id and runs a tiny search
        finally:
            kernel.close()
    except KernelError as exc:
        return Check("memory index", False, str(exc))
    health = kernel.health
    detail = f"{paths.db_uri} · {plural(count, 'turn')}" + (f" · {health.reason}" if health.reason else "")
    return Check("memory index", health.usable, detail)


PING_SECONDS = 4.0
"""How long ``--ping`` waits for each provider (all are asked at once): a tiny prompt, then the tool probe."""
_PROBE_QUESTION = "What did I tell you my cat is called? It was in one of our earlier conversations."


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
    from huichat.app.memory_modes import ModeBook
    from huichat.providers.config import key_problem

    book = ModeBook.shared(loaded.paths.data_dir)
    default = providers.default_name()
    rows: dict[str, Check] = {}
    asked: list[str] = []
    for name, provider in providers.named.items():
        label = f"provider {name}" + (" (default)" if name == default else "")
        problem = key_problem(name, provider, os.environ)
        detail = f"{provider.model}" + (f" @ {provider.api_base}" if provider.api_base else "")
        if problem:
            rows[name] = Check(label, False, f"{detail} · {problem}")
            continue
        key = f"${provider.api_key_env} set" if provider.api_key_env else "no key needed"
        rows[name] = Check(label, True, f"{detail} · {key}")
        asked.append(name)
    if ping and asked:
        pinged = asyncio.run(ping_all(providers, book, asked))
        for name, (ok, said) in zip(asked, pinged, strict=True):
            rows[name] = Check(rows[name].name, ok, f"{rows[name].detail} · {said}")
    for name, check in rows.items():
        if check.ok:
            choice = book.choose(name, providers.named[name])
            rows[name] = Check(check.name, True, f"{check.detail} · memory: {choice.label()}")
    return list(rows.values())


async def ping_all(providers: ProvidersConfig, book: ModeBook, names: list[str]) -> list[tuple[bool, str]]:
    """Every provider of ``names`` at once, each within ``PING_SECONDS``: (reachable, what to show);
    each probe's verdict goes into ``book`` (``bench loop --probe`` runs it as a user would)."""
    from huichat.app.prompts import system_prompt
    from huichat.app.tool_arguments import TOOL_NAMES, TOOLS
    from huichat.providers.errors import ProviderError
    from huichat.providers.llm import LLMClient

    client = LLMClient(providers)
    probe = [{"role": "system", "content": system_prompt("en")}, {"role": "user", "content": _PROBE_QUESTION}]

    async def one(name: str) -> tuple[bool, str]:
        provider = providers.named[name]
        started = time.monotonic()
        tiny = asyncio.ensure_future(client.ping(name, timeout=PING_SECONDS))
        tools = (
            asyncio.ensure_future(client.probe_tools(name, probe, TOOLS, TOOL_NAMES))
            if provider.supports_tools
            else None
        )
        waiting = [task for task in (tiny, tools) if task is not None]
        await asyncio.wait(waiting, timeout=PING_SECONDS)
        for task in waiting:
            task.cancel()
        if not tiny.done() or tiny.cancelled():
            return False, f"ping: no answer within {PING_SECONDS:.0f} s"
        if tiny.exception() is not None:
            error = tiny.exception()
            return False, f"ping failed: {error}" if isinstance(error, ProviderError) else f"ping failed: {error!r}"
        said = f"ping: {tiny.result()!r} ({time.monotonic() - started:.1f} s)"
        if tools is None:
            return True, f"{said} · tools: off (supports_tools: false)"
        if not tools.done() or tools.cancelled():
            return True, f"{said} · tools: not known (the probe took over {PING_SECONDS:.0f} s)"
        if tools.exception() is not None:
            return True, f"{said} · tools: probe failed: {tools.exception()}"
        verdict = tools.result()
        await asyncio.to_thread(book.record_probe, provider, verdict.startswith("yes"))
        return True, f"{said} · tools: {verdict}"

    return list(await asyncio.gather(*(one(name) for name in names)))

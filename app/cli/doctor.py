"""``huichat doctor``: config, data dir, embedding model, index and providers, as a table."""

from __future__ import annotations

import argparse
import asyncio
import os
import stat
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from huichat.app import visible

if TYPE_CHECKING:
    from huichat.app.config import LoadedConfig
    from huichat.app.runtime import Runtime

HELP = "check config, data dir, embedding model, index and providers"


def add_parser(parser: argparse.ArgumentParser) -> None:
    """``--ping``."""
    parser.add_argument("--ping", action="store_true", help="send one tiny request to each provider")


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

    from huichat.memory.errors import KernelError

    loaded = runtime.loaded
    checks = [
        _check_config(loaded),
        Check("time zone", True, runtime.zone.name),
        _check_data_dir(loaded),
        _check_private(loaded),
    ]
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
                count = kernel.check()  # reads every row's id and runs a tiny search
            finally:
                kernel.close()
            health = kernel.health
            detail = f"{loaded.paths.db_uri} · {count} turns" + (f" · {health.reason}" if health.reason else "")
            checks.append(Check("memory index", health.usable, detail))
        except KernelError as exc:
            checks.append(Check("memory index", False, str(exc)))
    checks.extend(_provider_checks(loaded, args.ping))
    table = Table(title=f"huichat doctor · {loaded.paths.config_file}", show_lines=False)
    table.add_column("check")
    table.add_column("status")
    table.add_column("detail", overflow="fold")
    for check in checks:
        table.add_row(check.name, "[green]ok[/]" if check.ok else "[red]FAIL[/]", check.detail)
    visible.console().print(table)
    return 0 if all(c.ok for c in checks) else 1


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
    from huichat.providers.config import key_problem
    from huichat.providers.errors import ProviderError
    from huichat.providers.llm import LLMClient

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

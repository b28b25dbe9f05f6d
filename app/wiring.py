"""The composition root: the one place that builds everything from the config.

Nothing heavy is imported at module level: the TUI paints first, and lancedb, torch and
litellm load in background workers through the factories built here. Faces receive a
``Runtime`` and never import this module.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import replace
from datetime import UTC
from pathlib import Path
from typing import TYPE_CHECKING, Any

from app.config import ConfigError, LoadedConfig, load_config
from app.runtime import KernelOpener, Runtime, Zone
from memory.turns import utc_now

if TYPE_CHECKING:
    from memory.catalogue import Catalogue
    from memory.embedding import Embedder
    from memory.kernel import MemoryKernel
    from memory.location import MemoryLocation
    from providers.llm import LLMClient

EXIT_CONFIG = 2
EXIT_BROKEN_PIPE = 141
"""128 + SIGPIPE: what a shell tool reports when its reader closed the pipe."""
MODULE_COMMANDS = ("lifecycle", "consolidate", "stats")
"""Commands with a module of their own in ``app.commands`` (``add_parser`` and ``run``)."""


def resolve_zone(loaded: LoadedConfig) -> Zone:
    """The configured IANA zone, or the system's."""
    from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

    name = loaded.config.retriever.timezone
    if name:
        try:
            return Zone(ZoneInfo(name), name)
        except (ZoneInfoNotFoundError, ValueError):
            raise ConfigError(f"{loaded.paths.config_file}: 'retriever.timezone': unknown time zone '{name}'") from None
    try:
        import tzlocal

        local = tzlocal.get_localzone()
        return Zone(local, str(local))
    except (ImportError, LookupError, ValueError):
        return Zone(UTC, "UTC")


def runtime(loaded: LoadedConfig, zone: Zone | None = None) -> Runtime:
    """The factories every face uses, built from the configuration."""
    zone = zone or resolve_zone(loaded)

    def open_embedder() -> Embedder:
        from memory.embedding import load_embedder

        return load_embedder(loaded.config.embedding, loaded.paths.models_dir, loaded.paths.cache_dir)

    def open_kernel(
        embedder: Embedder | None = None,
        *,
        reconcile: bool = True,
        embed: bool = True,
        for_rebuild: bool = False,
        location: MemoryLocation | None = None,
    ) -> MemoryKernel:
        from memory.location import MemoryLocation
        from memory.opening import open_kernel as open_memory

        paths = loaded.paths
        return open_memory(
            location or MemoryLocation(paths.data_dir, paths.sessions_dir, paths.db_uri),
            embedder or open_embedder(),
            loaded.config.retriever,
            zone.tz,
            now=utc_now(),
            archive=loaded.config.archive,
            reconcile=reconcile,
            embed=embed,
            for_rebuild=for_rebuild,
            lifecycle=loaded.config.lifecycle,
        )

    def open_llm() -> LLMClient:
        from providers.llm import LLMClient

        return LLMClient(loaded.config.providers)

    def open_catalogue() -> Catalogue:
        from memory.catalogue import Catalogue
        from memory.location import MemoryLocation

        paths = loaded.paths
        location = MemoryLocation(paths.data_dir, paths.sessions_dir, paths.db_uri)
        return Catalogue(location.sessions_dir, location.catalogue_path)

    return Runtime(loaded, zone, open_kernel, open_embedder, open_llm, open_catalogue, utc_now, _tracer())


NOTICE_LINES = 20
"""At most this many lines about what opening memory found (the rest are counted)."""


def _telling(opener: KernelOpener) -> KernelOpener:
    """``opener``, saying on stderr what the reconcile at open found and did (a transcript
    repaired, a part that could not be read, …): a command's output stays on stdout."""

    def open_and_tell(*args: Any, **kwargs: Any) -> MemoryKernel:
        kernel = opener(*args, **kwargs)
        if kernel.last_report is not None:
            for line in kernel.last_report.notices(NOTICE_LINES):
                print(f"huichat: {line}", file=sys.stderr)
        return kernel

    return open_and_tell


def _tracer() -> Callable[[str], None]:
    """Where the app notes its milestones: the file named by $HUICHAT_TRACE (the start-up benchmark), else nowhere."""
    target = os.environ.get("HUICHAT_TRACE")
    if not target:
        return lambda _event: None
    path = Path(target)

    def trace(event: str) -> None:
        with path.open("a", encoding="utf-8") as handle:
            handle.write(f"{time.time():.6f} {event}\n")

    return trace


class _VersionAction(argparse.Action):
    """``--version``: the installed version, read only when asked for."""

    def __init__(self, option_strings: Sequence[str], dest: str, **kwargs: object) -> None:
        super().__init__(option_strings, dest, nargs=0, default=argparse.SUPPRESS, help=str(kwargs.get("help", "")))

    def __call__(self, parser: argparse.ArgumentParser, *_args: object, **_kwargs: object) -> None:
        from app import __version__

        print(f"huichat {__version__}")
        parser.exit()


def _module_command(name: str) -> Any:
    """The module of a command in ``MODULE_COMMANDS`` (``add_parser`` and ``run``), imported when needed."""
    import importlib

    return importlib.import_module(f"app.commands.{name}")


def _top_level(parser: argparse.ArgumentParser) -> argparse.ArgumentParser:
    """The options of the chat itself (every command accepts them too)."""
    parser.add_argument("--version", action=_VersionAction, help="show the version and exit")
    parser.add_argument("--config", type=Path, metavar="PATH", help="config file merged over the defaults")
    parser.add_argument("--provider", metavar="NAME", help="provider to start with (overrides providers.default)")
    parser.add_argument("--session", metavar="ID", help="reopen this session and continue it")
    return parser


def _parse(argv: Sequence[str] | None) -> argparse.Namespace:
    """The arguments; the commands' parsers (and what they import) are built only when a command is named.

    Opening the chat needs only the top-level options, so ``huichat`` paints without
    building every command's parser; anything else (a command, ``--help``, a mistake)
    goes through the full parser and its messages.
    """
    light = _top_level(argparse.ArgumentParser(prog="huichat", add_help=False, exit_on_error=False))
    try:
        args, extra = light.parse_known_args(argv)
    except argparse.ArgumentError:
        extra = ["(let the full parser explain)"]
    if not extra:
        args.command = None
        return args
    return _parser().parse_args(argv)


def _parser() -> argparse.ArgumentParser:
    parser = _top_level(
        argparse.ArgumentParser(
            prog="huichat",
            description="A terminal chat client whose memory never forgets a turn.",
            epilog="Run without a command to open the chat. Config: --config PATH, $HUICHAT_CONFIG, "
            "or ~/.config/huichat/config.yaml (see configs/default.yaml for every key).",
        )
    )
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")

    doctor = commands.add_parser("doctor", help="check config, data dir, embedding model, index and providers")
    doctor.add_argument("--ping", action="store_true", help="send one tiny request to each provider")

    recall = commands.add_parser("recall", help="search memory from the shell (no TUI)")
    recall.add_argument(
        "query",
        help="what to look for; time words such as 上周三下午 or 'last week' are understood",
    )
    recall.add_argument("--top-k", type=int, default=None, metavar="N", help="number of hits (default from config)")
    recall.add_argument("--filter", dest="filter_expr", metavar="EXPR", help="e.g. \"timestamp >= '2026-04-06'\"")
    recall.add_argument("--context", type=int, default=0, metavar="N", help="add ±N neighbouring turns")
    recall.add_argument("--json", action="store_true", help="print JSON instead of the seed's text format")
    recall.add_argument("--now", metavar="ISO", help="resolve time words against this moment")
    recall.add_argument(
        "--include-failed", action="store_true", help="also find failed turns (replies that never came)"
    )

    show = commands.add_parser("show", help="print one turn by its id")
    show.add_argument("turn_id")
    show.add_argument("--json", action="store_true", help="print JSON")

    commands.add_parser("reindex", help="rebuild the index from the transcripts (after changing the model)")
    sessions = commands.add_parser("sessions", help="list stored sessions")
    sessions.add_argument("--json", action="store_true", help="print JSON")
    from app.commands.retitle import add_arguments as add_retitle_arguments

    add_retitle_arguments(commands.add_parser("retitle", help="give existing sessions titles that describe them"))

    serve = commands.add_parser("serve", help="serve chat with memory (OpenAI-compatible), the memory API, a dashboard")
    serve.add_argument("--host", metavar="ADDR", help="address to listen on (default serve.host, 127.0.0.1)")
    serve.add_argument("--port", type=int, metavar="N", help="port to listen on (default serve.port, 8000)")

    from app.commands.keys import add_arguments as add_keys_arguments

    add_keys_arguments(commands.add_parser("keys", help="API keys of huichat serve: create, list, revoke"))

    mcp = commands.add_parser("mcp", help="serve memory to MCP hosts over stdio (Claude Desktop, Cursor, …)")
    mcp.add_argument("--user", metavar="NAME", help="whose memory (default serve.owner: the chat's own)")
    mcp.add_argument("--allow-write", action="store_true", help="also offer the remember tool")

    from app.commands import add_commands

    add_commands(commands)

    for name in MODULE_COMMANDS:
        _module_command(name).add_parser(commands)

    bench = commands.add_parser(
        "bench", help="benchmarks: recall, timegen, scale, startup, cli, loop, chaos, serve, import, lifecycle"
    )
    from benchmarks.cli import add_bench_arguments

    add_bench_arguments(bench)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``huichat`` command."""
    os.environ.setdefault("LANCEDB_LOG", "error")
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    args = _parse(argv)
    try:
        loaded = load_config(args.config)
        zone = resolve_zone(loaded)
    except ConfigError as exc:
        print(f"huichat: configuration error: {exc}", file=sys.stderr)
        return EXIT_CONFIG
    if args.provider and args.provider not in loaded.config.providers.named:
        known = ", ".join(loaded.config.providers.named) or "none configured"
        print(f"huichat: unknown provider '{args.provider}' (configured: {known})", file=sys.stderr)
        return EXIT_CONFIG
    faces = runtime(loaded, zone)
    if args.command is None:
        from app.tui import run_tui

        return run_tui(faces, args.provider, args.session)
    try:
        if args.command == "bench":
            from benchmarks.cli import run_bench

            return run_bench(args, faces)
        faces = replace(faces, open_kernel=_telling(faces.open_kernel))
        if args.command in MODULE_COMMANDS:
            return int(_module_command(args.command).run(args, faces))
        from app import commands

        if args.command in commands.COMMANDS:
            return commands.run_command(args, faces)
        if args.command == "serve":
            from app.serve import run_server

            return run_server(faces, args.host, args.port)
        if args.command == "retitle":
            from app.commands.retitle import run as run_retitle

            return run_retitle(args, faces)
        if args.command == "keys":
            from app.commands.keys import run as run_keys

            return run_keys(args, faces)
        if args.command == "mcp":
            from app.mcp_stdio import run_mcp
            from app.stores import UnknownUser, check_user_name

            try:
                check_user_name(args.user or loaded.config.serve.owner)
            except UnknownUser as exc:
                print(f"huichat: error: --user: {exc}", file=sys.stderr)
                return EXIT_CONFIG
            return run_mcp(faces, args.user, args.allow_write)
        from app import cli

        return cli.run_command(args, faces)
    except BrokenPipeError:
        # the reader went away (`| head`): end quietly, as shell tools do
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return EXIT_BROKEN_PIPE

"""The composition root: the one place that builds everything from the config.

Nothing heavy is imported at module level: the TUI paints first, and lancedb, torch and
litellm load in background workers through the factories built here. Faces receive a
``Runtime`` and never import this module.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable, Sequence
from dataclasses import replace
from datetime import UTC
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from huichat.app.config import ConfigError, LoadedConfig, load_config
from huichat.app.heavy_imports import first_import
from huichat.app.runtime import KernelOpener, Runtime, Zone
from huichat.memory.turns import utc_now

if TYPE_CHECKING:
    from huichat.memory.catalogue import Catalogue
    from huichat.memory.embedding import Embedder
    from huichat.memory.kernel import MemoryKernel
    from huichat.memory.location import MemoryLocation
    from huichat.providers.llm import LLMClient

EXIT_FAIL = 1
EXIT_CONFIG = 2
EXIT_INTERRUPTED = 130
EXIT_BROKEN_PIPE = 141
"""128 + SIGPIPE: what a shell tool reports when its reader closed the pipe."""


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
        with first_import("huichat.memory.embedding"):
            from huichat.memory.embedding import load_embedder

        return load_embedder(loaded.config.embedding, loaded.paths.models_dir, loaded.paths.cache_dir)

    def open_kernel(
        embedder: Embedder | None = None,
        *,
        reconcile: bool = True,
        embed: bool = True,
        for_rebuild: bool = False,
        location: MemoryLocation | None = None,
    ) -> MemoryKernel:
        with first_import("huichat.memory.opening"):  # lancedb
            from huichat.memory.opening import open_kernel as open_memory

        return open_memory(
            location or loaded.location,
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
        with first_import("huichat.providers.llm"):  # litellm
            from huichat.providers.llm import LLMClient

        return LLMClient(loaded.config.providers)

    def open_catalogue() -> Catalogue:
        from huichat.memory.catalogue import Catalogue
        from huichat.memory.shared_transcripts import pull_working_copy

        location = loaded.location
        pull_working_copy(location)  # with storage.uri: what every replica wrote, first
        return Catalogue(location.sessions_dir, location.catalogue_path)

    return Runtime(loaded, zone, open_kernel, open_embedder, open_llm, open_catalogue, utc_now)


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


class _VersionAction(argparse.Action):
    """``--version``: the installed version, read only when asked for."""

    def __init__(self, option_strings: Sequence[str], dest: str, **kwargs: object) -> None:
        super().__init__(option_strings, dest, nargs=0, default=argparse.SUPPRESS, help=str(kwargs.get("help", "")))

    def __call__(self, parser: argparse.ArgumentParser, *_args: object, **_kwargs: object) -> None:
        from huichat import __version__

        print(f"huichat {__version__}")
        parser.exit()


COMMANDS: dict[str, str] = {
    "doctor": "huichat.app.cli.doctor",
    "recall": "huichat.app.cli.recall",
    "show": "huichat.app.cli.show",
    "forget": "huichat.app.cli.forget",
    "correct": "huichat.app.cli.correct",
    "sessions": "huichat.app.cli.sessions",
    "reindex": "huichat.app.cli.reindex",
    "retitle": "huichat.app.cli.retitle",
    "stats": "huichat.app.cli.stats",
    "lifecycle": "huichat.app.cli.lifecycle",
    "consolidate": "huichat.app.cli.consolidate",
    "import": "huichat.app.cli.imports",
    "export": "huichat.app.cli.export",
    "serve": "huichat.app.serve.command",
    "keys": "huichat.app.cli.keys",
    "mcp": "huichat.app.mcp.command",
}
"""Every command of ``huichat``: its name and the module with its ``HELP``, ``add_parser(parser)``
and ``run(args, runtime)``. A module is imported only when its command is named."""
PLUGIN_GROUP = "huichat.commands"
"""Entry points of this group add commands (a module, as above): the development-only
``huichat bench`` comes from the benchmarks' own distribution this way."""
NOT_INSTALLED = {
    "bench": "the benchmarks are not installed: they ship with huichat's source, not the package. From a "
    "checkout, `make setup` (or `pip install -e ./benchmarks`) adds `huichat bench`",
}
"""What to say when a command that a plugin provides is named without it."""


class Command(Protocol):
    """What a command module has."""

    HELP: str

    def add_parser(self, parser: argparse.ArgumentParser) -> None: ...

    def run(self, args: argparse.Namespace, runtime: Runtime) -> int: ...


def _plugins() -> dict[str, Callable[[], Command]]:
    """The commands that installed distributions add, by name, each loaded only when called."""
    from importlib.metadata import entry_points

    return {point.name: point.load for point in entry_points(group=PLUGIN_GROUP) if point.name not in COMMANDS}


def _load(module: str) -> Command:
    import importlib

    loaded: Command = importlib.import_module(module)
    return loaded


def _top_level(parser: argparse.ArgumentParser) -> argparse.ArgumentParser:
    """The options of the chat itself (every command accepts them too)."""
    parser.add_argument("--version", action=_VersionAction, help="show the version and exit")
    parser.add_argument("--config", type=Path, metavar="PATH", help="config file merged over the defaults")
    parser.add_argument("--provider", metavar="NAME", help="provider to start with (overrides providers.default)")
    parser.add_argument("--session", metavar="ID", help="reopen this session and continue it")
    parser.add_argument("--role", metavar="NAME", help="answer in this role (a system prompt named in chat.roles)")
    return parser


def _parse(argv: Sequence[str] | None) -> tuple[argparse.Namespace, Command | None]:
    """The arguments and the named command's module (``None``: the chat).

    Opening the chat needs only the top-level options, so ``huichat`` paints without
    loading any command; a named command loads only its own module (and plugins are looked
    up only for a name that is not built in); anything else (``--help``, a mistake) goes
    through the full parser and its messages.
    """
    light = _top_level(argparse.ArgumentParser(prog="huichat", add_help=False, exit_on_error=False))
    try:
        args, extra = light.parse_known_args(argv)
    except argparse.ArgumentError:
        extra = ["(let the full parser explain)"]
    if not extra:
        args.command = None
        return args, None
    named = extra[0]
    loaders: dict[str, Callable[[], Command]] = {named: partial(_load, COMMANDS[named])} if named in COMMANDS else {}
    if not loaders:
        plugins = _plugins()
        if named in plugins:
            loaders = {named: plugins[named]}
        elif named in NOT_INSTALLED:
            print(f"huichat {named}: {NOT_INSTALLED[named]}", file=sys.stderr)
            sys.exit(EXIT_CONFIG)
        else:  # --help, or a mistake: every command, for the full parser's message
            loaders = {name: partial(_load, module) for name, module in COMMANDS.items()} | plugins
    modules = {name: load() for name, load in loaders.items()}
    args = _parser(modules).parse_args(argv)
    return args, modules[args.command]


def _parser(modules: dict[str, Command]) -> argparse.ArgumentParser:
    parser = _top_level(
        argparse.ArgumentParser(
            prog="huichat",
            description="A terminal chat client whose memory never forgets a turn.",
            epilog="Run without a command to open the chat. Config: --config PATH, $HUICHAT_CONFIG, "
            "or ~/.config/huichat/config.yaml (see configs/default.yaml for every key).",
        )
    )
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for name, module in modules.items():
        module.add_parser(commands.add_parser(name, help=module.HELP))
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``huichat`` command, and the one place a command's error becomes a line and a status.

    What it prints shows control characters instead of obeying them (``visible``), except the
    standard output of ``--json``, which stays exact.
    """
    from huichat.app.visible import visible_output

    os.environ.setdefault("LANCEDB_LOG", "error")
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    # memory is private: every folder (0700) and file (0600) huichat or LanceDB creates — data,
    # index, caches, exports, logs — whatever umask the shell had; doctor names older, wider ones
    os.umask(0o077)
    args, command = _parse(argv)
    with visible_output(stdout=not getattr(args, "json", False)):
        return _run(args, command)


def _run(args: argparse.Namespace, command: Command | None) -> int:
    from huichat.app.errors import CommandError

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
    if args.role and args.role not in loaded.config.chat.roles:
        known = ", ".join(loaded.config.chat.roles) or "none configured"
        print(f"huichat: unknown role '{args.role}' (chat.roles: {known})", file=sys.stderr)
        return EXIT_CONFIG
    if user := getattr(args, "memory_user", None):  # a command's --user (app.cli.add_user)
        from huichat.app.users.memories import UnknownUser, user_memory

        try:
            loaded = user_memory(loaded, user)
        except UnknownUser as exc:
            print(f"huichat: --user: {exc}", file=sys.stderr)
            return EXIT_CONFIG
    faces = runtime(loaded, zone)
    if command is None:
        from huichat.app.tui.app import run_tui

        return run_tui(faces, args.provider, args.session, args.role)
    from huichat.memory.errors import KernelError
    from huichat.providers.errors import ProviderError

    try:
        return int(command.run(args, replace(faces, open_kernel=_telling(faces.open_kernel))))
    except CommandError as exc:
        print(f"huichat: error: {exc}", file=sys.stderr)
        return exc.status
    except (KernelError, ProviderError) as exc:
        print(f"huichat: error: {exc}", file=sys.stderr)
        return EXIT_FAIL
    except KeyboardInterrupt:
        return EXIT_INTERRUPTED
    except BrokenPipeError:
        # the reader went away (`| head`): end quietly, as shell tools do
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return EXIT_BROKEN_PIPE

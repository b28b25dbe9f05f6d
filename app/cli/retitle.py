"""``huichat retitle``: give existing sessions titles that describe them.

Sessions keep the titles they have until this runs; a title the user gave (``huichat retitle
ID --title TEXT``, the chat's "Rename session…") is never replaced, even with ``--force``. It is bounded (``--limit``, most
recent sessions first), resumable (a session the model titled already is skipped unless
``--force``), and works without a provider (each session's first message's leading
clause). Each title is written to the session's transcript first, then to the index; an
interrupted run leaves every session either titled or as it was, and the next start
brings the index in line with the transcripts.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from functools import partial
from typing import TYPE_CHECKING

from huichat.app import visible
from huichat.app.errors import CommandError
from huichat.app.titles import model_title
from huichat.app.wording import plural
from huichat.memory.errors import KernelError
from huichat.memory.turns import TITLE_IMPORTED, TITLE_LOCAL, TITLE_MODEL, TITLE_USER, SessionTitle, local_title
from huichat.providers.errors import ProviderError

if TYPE_CHECKING:
    from huichat.app.runtime import Runtime
    from huichat.memory.kernel import MemoryKernel
    from huichat.memory.results import SessionInfo
    from huichat.memory.turns import Turn

EXIT_INTERRUPTED = 130
GIVE_UP_AFTER = 3
"""Failed title requests in a row after which the rest of the run uses the local fallback."""
Titler = Callable[[Sequence["Turn"], str], Awaitable[str]]
"""The model's title for a session's turns, given the title it has (see ``model_title``)."""


HELP = "give existing sessions titles that describe them"


def add_parser(parser: argparse.ArgumentParser) -> None:
    """The command's options."""
    parser.add_argument("session", nargs="?", metavar="SESSION_ID", help="the session to rename (with --title)")
    parser.add_argument(
        "--title", metavar="TEXT", help="the session's new title, yours: no automatic title replaces it"
    )
    parser.add_argument("--limit", type=int, default=100, metavar="N", help="title at most N sessions (default 100)")
    parser.add_argument("--force", action="store_true", help="title again sessions the model titled already")
    parser.add_argument("--local", action="store_true", help="use no provider: each session's first message")


@dataclass
class Tally:
    """What a run did."""

    model: int = 0
    """Sessions given the model's title."""
    local: int = 0
    """Sessions given a local title (their first message), the model not asked or not answering."""
    unchanged: int = 0
    """Sessions whose title came out as it was."""
    failures: int = 0
    """The model's failures in a row (it is given up after ``GIVE_UP_AFTER``)."""
    last_error: str = ""
    problems: list[str] = field(default_factory=list)
    """One line per session that could not be titled."""


def _titler(args: argparse.Namespace, runtime: Runtime) -> tuple[Titler | None, str]:
    """The model's titles from the chosen provider and how it is named, or None and why the local fallback is used."""
    providers = runtime.loaded.config.providers
    if args.local:
        return None, "--local"
    if not providers.named:
        return None, "no provider is configured"
    from huichat.providers.config import key_problem

    name = args.provider or providers.default_name()
    if name is None:
        return None, "no provider is configured"
    problem = key_problem(name, providers.named[name], os.environ)
    if problem:
        return None, problem
    return partial(model_title, runtime.open_llm(), provider=name), f"{name} · {providers.named[name].model}"


def _pending(infos: list[SessionInfo], asking_model: bool, force: bool) -> list[SessionInfo]:
    """Sessions still to title: never one the user named; the model skips its own titles and imported
    ones, the fallback any recorded title."""
    infos = [s for s in infos if s.title_source != TITLE_USER]
    if force:
        return infos
    if asking_model:
        return [s for s in infos if s.title_source not in (TITLE_MODEL, TITLE_IMPORTED)]
    return [s for s in infos if not s.title_source]


async def _title_one(kernel: MemoryKernel, titler: Titler | None, info: SessionInfo, tally: Tally) -> None:
    turns = kernel.session_turns(info.session_id)
    if not turns:
        tally.problems.append(f"{info.session_id}: no turns in the index (run huichat reindex)")
        return
    title: SessionTitle | None = None
    if titler is not None and tally.failures < GIVE_UP_AFTER:
        try:
            text = await titler(turns, info.title if info.title_source == TITLE_MODEL else "")
        except ProviderError as exc:
            tally.failures += 1
            tally.last_error = str(exc)
        else:
            tally.failures = 0
            title = SessionTitle(text, TITLE_MODEL, len(turns)) if text else None
    if title is None:
        title = SessionTitle(local_title(turns) or info.title, TITLE_LOCAL, len(turns))
    if (title.text, title.source) == (info.title, info.title_source):
        tally.unchanged += 1
        return
    try:
        kernel.set_title(info.session_file, title)
    except KernelError as exc:
        tally.problems.append(f"{info.session_id}: {exc}")
        return
    if title.source == TITLE_MODEL:
        tally.model += 1
    else:
        tally.local += 1


def run(args: argparse.Namespace, runtime: Runtime) -> int:
    """Title up to ``--limit`` sessions, most recent first, with a progress bar; with a session
    and ``--title``, give that one the user's title."""
    if args.session is not None or args.title is not None:
        return _rename(args, runtime)
    if args.limit < 1:
        raise CommandError("--limit must be at least 1")
    from rich.progress import Progress

    titler, using = _titler(args, runtime)
    todo = _pending(runtime.open_catalogue().sessions(), titler is not None, args.force)
    if not todo:
        print("nothing to retitle: every session has its title (--force titles them again)")
        return 0
    left = max(0, len(todo) - args.limit)
    todo = todo[: args.limit]
    print(
        f"titling {plural(len(todo), 'session')} with "
        + (using if titler is not None else f"the local fallback ({using})")
    )
    kernel = runtime.open_kernel()
    tally = Tally()
    done = 0
    interrupted = False

    async def run_all() -> None:
        nonlocal done
        with Progress(console=visible.console(), transient=True) as progress:
            task = progress.add_task("titling sessions", total=len(todo))
            for info in todo:
                await _title_one(kernel, titler, info, tally)
                done += 1
                progress.advance(task)

    try:
        asyncio.run(run_all())
    except KeyboardInterrupt:
        interrupted = True
    finally:
        kernel.close()
    _report(tally, titler is not None, done, len(todo) - done + left, interrupted)
    return EXIT_INTERRUPTED if interrupted else 0


def _rename(args: argparse.Namespace, runtime: Runtime) -> int:
    if args.session is None:
        raise CommandError("--title renames one session: huichat retitle SESSION_ID --title TEXT")
    if args.title is None:
        raise CommandError(f"give the new title: huichat retitle {args.session} --title TEXT")
    kernel = runtime.open_kernel()
    try:
        title = kernel.rename_session(args.session, args.title)
    finally:
        kernel.close()
    print(f"session {args.session} is now titled: {title.text}")
    return 0


def _report(tally: Tally, asked_model: bool, done: int, left: int, interrupted: bool) -> None:
    parts = []
    if asked_model:
        parts.append(f"{tally.model} by the model")
    parts.append(f"{tally.local} with the local fallback")
    if tally.unchanged:
        parts.append(f"{tally.unchanged} unchanged")
    print(
        f"{'stopped: ' if interrupted else ''}titled {tally.model + tally.local} of {plural(done, 'session')} ({', '.join(parts)})"
    )
    if tally.last_error:
        print(f"  the model failed ({tally.last_error}); those sessions got the local fallback", file=sys.stderr)
    for problem in tally.problems:
        print(f"  skipped {problem}", file=sys.stderr)
    if left:
        print(f"{plural(left, 'session')} left: run huichat retitle again to continue")

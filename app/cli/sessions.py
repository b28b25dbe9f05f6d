"""``huichat sessions``: stored sessions, most recent first, by title."""

from __future__ import annotations

import argparse
import json
from typing import TYPE_CHECKING

from huichat.app.cli import add_user
from huichat.app.wording import plural

if TYPE_CHECKING:
    from huichat.app.runtime import Runtime

HELP = "list stored sessions"


def add_parser(parser: argparse.ArgumentParser) -> None:
    """``--json``."""
    add_user(parser)
    parser.add_argument("--json", action="store_true", help="print JSON")


def run(args: argparse.Namespace, runtime: Runtime) -> int:
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
        turns = plural(info.turns, "turn")
        print(f"{info.session_id}  {info.last.astimezone(runtime.zone.tz):%Y-%m-%d %H:%M}  {turns:>9}  {about[:60]}")
    return 0

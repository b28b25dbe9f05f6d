"""``huichat stats [--json]``: the whole memory at a glance (the seed's dashboard, in the terminal)."""

from __future__ import annotations

import argparse
import json
from typing import TYPE_CHECKING

from huichat.app import visible
from huichat.app.cli import add_user
from huichat.app.wording import plural

if TYPE_CHECKING:
    from huichat.app.runtime import Runtime
    from huichat.memory.stats import MemoryStats

TIER_NAMES = {"working": "working", "long_term": "long-term", "archive": "archive"}


HELP = "turns per tier, importance, accesses, languages, size"


def add_parser(parser: argparse.ArgumentParser) -> None:
    """``--json``."""
    add_user(parser)
    parser.add_argument("--json", action="store_true", help="print JSON (the same fields as /v1/memory/stats)")


def run(args: argparse.Namespace, runtime: Runtime) -> int:
    """Collect and print the statistics."""
    from huichat.memory.stats import collect

    kernel = runtime.open_kernel()
    try:
        stats = collect(kernel, runtime.clock())
    finally:
        kernel.close()
    if args.json:
        print(json.dumps(stats.to_record(), ensure_ascii=False, indent=2))
    else:
        _print(stats, runtime)
    return 0


def _print(stats: MemoryStats, runtime: Runtime) -> None:
    from rich.table import Table
    from rich.text import Text

    console = visible.console()
    zone = runtime.zone.tz
    console.print(
        f"[bold]{plural(stats.total_turns, 'turn')}[/] in [bold]{plural(stats.total_sessions, 'session')}[/] · "
        f"average importance {stats.avg_importance:.2f} · {plural(stats.total_accesses, 'access')} · "
        f"{plural(stats.clusters, 'cluster')} ({plural(stats.clustered_turns, 'turn')} behind representatives) · "
        f"{stats.disk_size} on disk"
    )
    tiers = Table(title="tiers")
    for column in ("tier", "turns", "sessions"):
        tiers.add_column(column, justify="left" if column == "tier" else "right")
    for tier, count in stats.tiers.items():
        tiers.add_row(TIER_NAMES.get(tier, tier), str(count), str(stats.sessions_per_tier.get(tier, 0)))
    console.print(tiers)
    peak = max(stats.importance_histogram, default=0) or 1
    console.print("importance")
    for i, count in enumerate(stats.importance_histogram):
        console.print(f"  {i / 10:.1f}–{(i + 1) / 10:.1f} {'█' * round(30 * count / peak):<30} {count}")
    languages = " · ".join(f"{name} {count}" for name, count in sorted(stats.languages.items(), key=lambda kv: -kv[1]))
    console.print(f"languages: {languages or '—'}")
    if stats.turns_per_week:
        recent = stats.turns_per_week[-8:]
        console.print("turns per week (last 8): " + " · ".join(f"{w} {n}" for w, n in recent))
    for title, items in (("most important", stats.top_important), ("recently retrieved", stats.recent_accesses)):
        table = Table(title=title)
        for column in ("id", "when", "tier", "importance", "accesses", "text"):
            table.add_column(column, overflow="ellipsis", no_wrap=column != "text")
        for item in items:
            importance = "—" if item.importance is None else f"{item.importance:.2f}"
            table.add_row(
                item.id,
                f"{item.timestamp.astimezone(zone):%Y-%m-%d %H:%M}",
                TIER_NAMES.get(item.tier, item.tier),
                importance,
                str(item.access_count),
                Text(item.snippet[:60]),  # what was said is text, never markup ("[/INST]" raised)
            )
        if items:
            console.print(table)

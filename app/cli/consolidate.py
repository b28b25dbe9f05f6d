"""``huichat consolidate [--dry-run | --list | --undo CLUSTER]``: lossless grouping of near-duplicates by hand."""

from __future__ import annotations

import argparse
import json
from typing import TYPE_CHECKING, Any

from huichat.app.cli import add_now, moment
from huichat.app.errors import CommandError
from huichat.app.wording import plural

if TYPE_CHECKING:
    from huichat.app.runtime import Runtime
    from huichat.memory.consolidation import ConsolidationReport


HELP = "group near-duplicate turns behind one representative (nothing is deleted)"


def add_parser(parser: argparse.ArgumentParser) -> None:
    """``--dry-run``, ``--list`` or ``--undo CLUSTER``."""
    group = parser.add_mutually_exclusive_group()
    group.add_argument("--dry-run", action="store_true", help="show the clusters that would be made")
    group.add_argument("--list", action="store_true", help="list the clusters there are")
    group.add_argument("--undo", metavar="CLUSTER", help="take a cluster apart; its turns are never regrouped")
    parser.add_argument("--json", action="store_true", help="print JSON")
    add_now(parser)


def run(args: argparse.Namespace, runtime: Runtime) -> int:
    """Consolidate now, list clusters, or undo one."""
    from huichat.memory.consolidation import clusters_of, run_consolidation, undo
    from huichat.memory.joblog import JobLog

    now = moment(args.now, runtime)
    kernel = runtime.open_kernel()
    log = JobLog(kernel.data_dir)
    try:
        if args.undo:
            turns = undo(kernel, args.undo, now, log)
            payload: Any = {"undone": args.undo, "turns": [t.id for t in turns]}
            text = f"cluster {args.undo} undone: {', '.join(t.id for t in turns)} are shown on their own again"
        elif args.list:
            clusters = clusters_of(kernel)
            payload = [{"cluster": cid, "turns": [s.id for s in states]} for cid, states in sorted(clusters.items())]
            lines = [f"{cid}  {states[0].id} +{len(states) - 1} similar" for cid, states in sorted(clusters.items())]
            text = "\n".join(lines) or "no clusters yet (`huichat consolidate`)"
        else:
            report = run_consolidation(kernel, now, runtime.loaded.config.consolidation, log, dry_run=args.dry_run)
            if report.skipped:
                raise CommandError(report.skipped)
            payload = {
                "run": report.run,
                "dry_run": report.dry_run,
                "clusters": [c.to_record() for c in report.clusters],
                "releases": [r.to_record() for r in report.releases],
            }
            verb = "would group" if report.dry_run else "grouped"
            lines = [f"{verb} {plural(report.grouped, 'turn')} behind {plural(len(report.clusters), 'representative')}"]
            lines += [f"  {c.cluster_id}  {c.representative} +{len(c.members)} similar" for c in report.clusters]
            text = "\n".join(lines + released_lines(report))
    finally:
        kernel.close()
    print(json.dumps(payload, ensure_ascii=False, indent=2) if args.json else text)
    return 0


def released_lines(report: ConsolidationReport) -> list[str]:
    """The members a run released (or, dry, would release): how many, then one line per cluster; none, nothing."""
    if not report.released:
        return []
    done = "would be released" if report.dry_run else "released"
    why = "it no longer counts" if report.released == 1 else "they no longer count"
    lines = [f"{plural(report.released, 'member')} {done}: {why} as near-duplicates"]
    for release in report.releases:
        dissolved = "; too few are left, so the cluster is dissolved" if release.ungrouped else ""
        lines.append(
            f"  {release.cluster_id}  {release.representative} no longer stands for {', '.join(release.members)}{dissolved}"
        )
    return lines

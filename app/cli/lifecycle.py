"""``huichat lifecycle run [--dry-run]`` and ``huichat lifecycle log``: the daily jobs by hand, and what they moved."""

from __future__ import annotations

import argparse
import json
from typing import TYPE_CHECKING, Any

from huichat.app.cli import add_now, moment
from huichat.app.cli.consolidate import released_lines
from huichat.app.wording import plural

if TYPE_CHECKING:
    from huichat.app.runtime import Runtime
    from huichat.memory.consolidation import ConsolidationReport
    from huichat.memory.lifecycle import LifecycleReport

_SHOWN = 20


HELP = "importance, tiers and consolidation: run the daily jobs, read the log"


def add_parser(parser: argparse.ArgumentParser) -> None:
    """``lifecycle run`` and ``lifecycle log``."""
    actions = parser.add_subparsers(dest="action", metavar="ACTION", required=True)
    run_parser = actions.add_parser("run", help="score turns, move them between tiers, group near-duplicates")
    run_parser.add_argument("--dry-run", action="store_true", help="show what would change; change nothing")
    run_parser.add_argument("--json", action="store_true", help="print JSON")
    add_now(run_parser)
    log_parser = actions.add_parser("log", help="what the jobs moved and grouped, oldest first")
    log_parser.add_argument("--limit", type=int, default=50, metavar="N", help="the last N records (default 50)")
    log_parser.add_argument("--json", action="store_true", help="print the records as JSON lines")


def run(args: argparse.Namespace, runtime: Runtime) -> int:
    """Dispatch ``lifecycle run`` / ``lifecycle log``."""
    return (_run if args.action == "run" else _log)(args, runtime)


def _run(args: argparse.Namespace, runtime: Runtime) -> int:
    from huichat.memory.consolidation import run_consolidation
    from huichat.memory.joblog import JobLog
    from huichat.memory.lifecycle import run_lifecycle

    now = moment(args.now, runtime)
    config = runtime.loaded.config
    kernel = runtime.open_kernel()
    log = JobLog(kernel.data_dir)
    try:
        report = run_lifecycle(kernel, now, log, dry_run=args.dry_run)
        grouped = (
            run_consolidation(kernel, now, config.consolidation, log, dry_run=args.dry_run)
            if config.consolidation.enabled and not report.skipped
            else None
        )
    finally:
        kernel.close()
    if args.json:
        print(json.dumps(_payload(report, grouped), ensure_ascii=False, indent=2))
    else:
        _print(report, grouped)
    return 0 if not report.skipped else 1


def _payload(report: LifecycleReport, grouped: ConsolidationReport | None) -> dict[str, Any]:
    return {
        "run": report.run,
        "dry_run": report.dry_run,
        "skipped": report.skipped,
        "resumed": report.resumed,
        "scored": report.scored,
        "moves": [m.to_record() for m in report.moves],
        "clusters": [c.to_record() for c in grouped.clusters] if grouped else [],
        "releases": [r.to_record() for r in grouped.releases] if grouped else [],
    }


def _print(report: LifecycleReport, grouped: ConsolidationReport | None) -> None:
    if report.skipped:
        print(f"nothing done: {report.skipped}")
        return
    verb = "would move" if report.dry_run else "moved"
    if report.resumed:
        print(f"completed the interrupted run {report.resumed}")
    counts = ", ".join(f"{k} {v}" for k, v in sorted(report.counts().items())) or "nothing"
    print(
        f"{'dry run · ' if report.dry_run else ''}scored {plural(report.scored, 'turn')} · {verb} {len(report.moves)}: {counts}"
    )
    for move in report.moves[:_SHOWN]:
        print(f"  {move.turn_id}  {move.source} → {move.target}  ({move.reason})")
    if len(report.moves) > _SHOWN:
        print(f"  … and {len(report.moves) - _SHOWN} more (see `huichat lifecycle log`)")
    if grouped is not None:
        verb = "would group" if grouped.dry_run else "grouped"
        print(
            f"consolidation: {verb} {plural(grouped.grouped, 'turn')} behind "
            f"{plural(len(grouped.clusters), 'representative')}"
        )
        for cluster in grouped.clusters[:_SHOWN]:
            print(f"  {cluster.cluster_id}  {cluster.representative} +{len(cluster.members)} similar")
        for line in released_lines(grouped)[: _SHOWN + 1]:
            print(line if line.startswith(" ") else f"consolidation: {line}")


def _log(args: argparse.Namespace, runtime: Runtime) -> int:
    from huichat.memory.joblog import JobLog
    from huichat.memory.lifecycle import moves_in_log

    records = moves_in_log(JobLog(runtime.loaded.paths.data_dir), max(1, args.limit))
    if args.json:
        for record in records:
            print(json.dumps(record, ensure_ascii=False))
        return 0
    if not records:
        print("the lifecycle jobs have not run yet (`huichat lifecycle run`)")
        return 0
    for record in records:
        print(describe(record))
    return 0


def describe(record: dict[str, Any]) -> str:
    """One log record as a line for people."""
    at = str(record.get("at", ""))[:19].replace("T", " ")
    event = record.get("event")
    job = record.get("job", "")
    if event == "move":
        return f"{at}  {record['id']}  {record['from']} → {record['to']}  ({record.get('reason', '')})"
    if event == "cluster":
        members = ", ".join(record.get("members", []))
        return f"{at}  {record['cluster']}  {record['representative']} stands for {members}"
    if event == "release":
        dissolved = "; the cluster is dissolved" if record.get("ungrouped") else ""
        members = ", ".join(record.get("members", []))
        return f"{at}  {record['cluster']}  {record['representative']} no longer stands for {members}{dissolved}"
    if event == "undo":
        return f"{at}  {record['cluster']}  undone: {', '.join(record.get('members', []))} shown on their own"
    if event == "resumed":
        return f"{at}  {job} run {record['run']} completed the interrupted run {record['of']}"
    if event == "end":
        done = record.get("moved", record.get("clusters", 0))
        return f"{at}  {job} run {record['run']} finished ({plural(done, 'move' if job == 'lifecycle' else 'cluster')})"
    return f"{at}  {job} run {record.get('run', '')} started"

"""The account of an import (or of a dry run) as rows, for the terminal and the TUI alike."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import tzinfo

from huichat.memory.imports.ingest import ImportTally
from huichat.memory.imports.summary import ImportSummary


@dataclass(frozen=True)
class ReportRow:
    """One line of the account: what, how many, and the detail."""

    label: str
    count: str
    detail: str


def plural(n: int, word: str) -> str:
    """``1 turn``, ``2 turns``, ``1,204 messages``."""
    return f"{n:,} {word}{'' if n == 1 else 's'}"


def _by(pairs: tuple[tuple[str, int], ...] | list[tuple[str, int]]) -> str:
    return " · ".join(f"{name} {n:,}" for name, n in pairs)


def report_rows(summary: ImportSummary, tally: ImportTally, zone: tzinfo, *, dry_run: bool) -> list[ReportRow]:
    """What was read, what was (or would be) imported, what was already there, left out, or guessed."""
    read = [_by(summary.formats)]
    if summary.first is not None and summary.last is not None:
        read.append(f"{summary.first.astimezone(zone):%Y-%m-%d} → {summary.last.astimezone(zone):%Y-%m-%d}")
    if summary.languages:
        read.append(_by(summary.languages))
    sessions = [plural(tally.new_sessions, "new session")]
    if tally.extended_sessions:
        sessions.append(f"{tally.extended_sessions:,} extended")
    rows = [
        ReportRow("conversations read", f"{summary.conversations:,}", " · ".join(p for p in read if p)),
        ReportRow(
            "would import" if dry_run else "imported",
            plural(tally.messages, "message"),
            f"{plural(tally.turns, 'turn')} in {', '.join(sessions)}",
        ),
        ReportRow("already present", plural(tally.present, "message"), f"{tally.unchanged:,} conversations unchanged"),
    ]
    if tally.alternatives:
        rows.append(
            ReportRow(
                "other branches",
                plural(tally.alternatives, "message"),
                "edits and regenerations, kept beside the session (not searched; exported)",
            )
        )
    skipped = sum(tally.skipped.values())
    if skipped or tally.nothing_visible:
        detail = [_by(sorted(tally.skipped.items()))] if skipped else []
        if tally.nothing_visible:
            detail.append(f"{plural(tally.nothing_visible, 'conversation')} with no visible message (not imported)")
        rows.append(ReportRow("skipped", plural(skipped, "node"), "; ".join(detail) + " — kept raw"))
    warnings = [
        (tally.times_estimated, "missing time", "estimated from the message before"),
        (tally.unknown_parts, "part", "of an unknown type kept raw"),
        (tally.guessed_branches, "conversation", "whose current branch was guessed"),
        (tally.moved, "conversation", "whose current branch moved (recorded)"),
        (tally.retitled, "conversation", "renamed (recorded)"),
        (dict(summary.notes).get("time synthesised", 0), "conversation", "without times (the file's time is used)"),
    ]
    found = [(n, f"{plural(n, noun)} {rest}") for n, noun, rest in warnings if n]
    rows.append(ReportRow("warnings", f"{sum(n for n, _ in found):,}", " · ".join(t for _, t in found) or "—"))
    return rows

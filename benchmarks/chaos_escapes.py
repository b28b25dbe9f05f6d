"""Escape-sequence fuzzing of what people read (part of ``huichat bench chaos``).

Random strings built from what a terminal obeys — OSC 52 (clipboard), OSC 0 (window
title), CSI sequences, every C0 and C1 control, DEL, NUL, bare carriage returns — mixed
with Chinese and Latin text, are stored as messages and topics. Then ``huichat sessions``,
``recall`` and ``show`` run as a user runs them (their output in a pipe, as a terminal
would get it) and every raw control byte but newline and tab is counted: the promise is 0.
"""

from __future__ import annotations

import random
import re
from datetime import UTC, datetime, timedelta
from pathlib import Path

from benchmarks.chaos import Budget, Outcome, opened, scratch_config
from benchmarks.chaos_faults import huichat_command
from huichat.memory.turns import Message, TurnDraft

NOW = datetime(2026, 11, 25, 7, 0, tzinfo=UTC)
RAW_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")
"""What must never reach a reader: control characters other than newline and tab."""
_PIECES = (
    "\x1b]52;c;cHduZWQ=\x07",
    "\x1b]0;owned\x07",
    "\x1b]8;;http://x\x1b\\",
    "\x1b[2J",
    "\x1b[31m",
    "\x1bc",
    "\x9b31m",
    "\x9d0;t\x9c",
    "\r",
    "\x00",
    "\x7f",
    "记忆",
    "部署",
    "zebra",
    " ",
)
_STRINGS_PER_TURN = 50


def _hostile(rng: random.Random) -> str:
    """One fuzzed string: pieces of escape sequences, single controls, text."""
    parts = [
        rng.choice(_PIECES) if rng.random() < 0.6 else chr(rng.choice((*range(0x20), *range(0x7F, 0xA0))))
        for _ in range(rng.randint(1, 8))
    ]
    return "".join(parts)


def run_escapes(budget: Budget, root: Path) -> list[Outcome]:
    """``budget.escapes`` fuzzed strings stored, then every human-readable listing read back."""
    outcome = Outcome("fuzz", f"escape sequences in sessions, recall and show ({budget.escapes:,} strings)")
    rng = random.Random(budget.seed)
    config = scratch_config(root)
    turns = max(1, budget.escapes // _STRINGS_PER_TURN)
    ids = []
    with opened(config) as kernel:
        for i in range(turns):
            strings = [_hostile(rng) for _ in range(_STRINGS_PER_TURN)]
            session = kernel.new_session(NOW - timedelta(hours=i))
            text = " zebra ".join(strings)
            draft = TurnDraft((Message("user", text), Message("assistant", strings[0])), NOW - timedelta(hours=i))
            ids.append(kernel.append_turn(session, draft).id)
            outcome.tried += _STRINGS_PER_TURN
    runs = [("sessions",), ("recall", "zebra 记忆", "--top-k", "100"), *(("show", i) for i in ids[:20])]
    shown = 0
    for args in runs:
        done = huichat_command(config, *args, errors="surrogateescape")
        shown += done.stdout.count("\u241b")  # ␛: an escape shown, so the fuzzed text did reach the output
        if done.returncode != 0 or "Traceback" in done.stderr:
            outcome.uncaught += 1
            outcome.note(f"{args[0]}: exit {done.returncode}: {done.stderr.strip()[-160:]}")
        raw = RAW_CONTROL.findall(done.stdout) + RAW_CONTROL.findall(done.stderr)
        if raw:
            outcome.failed += len(raw)
            outcome.note(f"{args[0]}: {len(raw)} raw control characters, e.g. {raw[:5]!r}")
    if not shown:
        outcome.failed += 1
        outcome.note("no fuzzed escape reached the output: nothing was checked")
    outcome.notes.insert(0, f"{shown:,} escapes shown as ␛")
    return [outcome]

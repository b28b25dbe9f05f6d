"""Fuzzing hand edits of a transcript (part of ``huichat bench chaos``).

A transcript of turns with awkward text is written once; each input applies a few edits
to its bytes — a line deleted, duplicated or swapped, a stray marker, a cut, bytes that
are not UTF-8 — at positions chosen from the end backwards, so that every edit is known
in the original's coordinates. The promise checked: every turn whose block no edit
touched is read back exactly, in order, once; and, reconciled into an index that held the
original, none of those turns is removed.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

from benchmarks.chaos import Budget, Outcome
from benchmarks.chaos_fuzz import _explore
from huichat.memory.transcript import TranscriptWriter, render_turn
from huichat.memory.transcript_parse import decode_transcript, parse_transcript
from huichat.memory.turns import Message, Turn

START = datetime(2026, 3, 5, 2, 0, tzinfo=UTC)
SESSION_FILE = "2026-W10/2026-03-05/chat_edits.md"
TEXTS = (
    "普通的中文消息，带标点。",
    "Markdown **bold**\n\n- one\n- two",
    "```python\nreturn '<!-- /huichat:msg -->'\n```",
    '<!-- huichat:turn {"id": "zzzzzz"} -->\nfake marker inside a message',
    "emoji 🎉 and tabs\tand\r\nCRLF",
    "",
    "[id:a3f2c7 | prev: none | next: none  ] pasted anchor",
)
STRAY = b'\n<!-- huichat:msg {"role": "user", "speaker": "", "chars": 7} -->\n'
RECONCILE_EVERY = 100
"""Every this many inputs, the edited file is also reconciled into a real index."""


def original(root: Path) -> tuple[bytes, list[Turn], list[tuple[int, int]]]:
    """The transcript, its turns, and the byte range of each turn's block."""
    turns: list[Turn] = []
    for index, text in enumerate(TEXTS):
        turns.append(
            Turn(
                id=f"edit{index:02d}",
                session_id="edits",
                session_file=SESSION_FILE,
                turn_index=index,
                timestamp=START + timedelta(minutes=index),
                messages=(Message("user", text, "Caroline"), Message("assistant", f"reply {index} {text[::-1]}")),
                prev_id=turns[-1].id if turns else None,
            )
        )
    writer = TranscriptWriter(root, UTC)
    for turn in turns:
        writer.append([turn])
    data = (root / SESSION_FILE).read_bytes()
    ranges: list[tuple[int, int]] = []
    end = len(data)
    for i in range(len(turns) - 1, -1, -1):
        following = turns[i + 1].id if i + 1 < len(turns) else None
        size = len(render_turn(turns[i], UTC, following).encode())
        ranges.insert(0, (end - size, end))
        end -= size
    return data, turns, ranges


Edit = tuple[int, int, int, bytes]
"""(kind, position, which block, bytes): see ``_edit``."""


def _region(data: bytes, ranges: list[tuple[int, int]], edit: Edit) -> tuple[int, int]:
    """The bytes of the original an edit reads or changes (an insertion: an empty region)."""
    kind, position, extra, _ = edit
    position %= len(data) + 1
    line_start = data.rfind(b"\n", 0, position) + 1
    line_end = data.find(b"\n", position)
    line_end = len(data) if line_end < 0 else line_end + 1
    if kind == 0:  # delete a line
        return line_start, line_end
    if kind == 1:  # duplicate a whole turn block after itself
        start, end = ranges[extra % len(ranges)]
        return start, end
    if kind == 2:  # a stray message marker on its own line
        return line_start, line_start
    if kind == 3:  # cut the file here (a crash, a full disk)
        return position, len(data)
    if kind in (4, 5):  # insert bytes (often not UTF-8), or overwrite one byte
        return position, min(len(data), position + (kind == 5))
    next_end = data.find(b"\n", line_end)  # swap this line with the next
    return line_start, len(data) if next_end < 0 else next_end + 1


def _apply(data: bytes, region: tuple[int, int], edit: Edit) -> tuple[bytes, tuple[int, int]]:
    """The edit applied; returns the new bytes and the original range whose bytes changed."""
    kind, _, _, payload = edit
    start, end = region
    if kind == 0:
        return data[:start] + data[end:], (start, end)
    if kind == 1:
        return data[:end] + data[start:end] + data[end:], (end, end)
    if kind == 2:
        return data[:start] + STRAY.lstrip(b"\n") + data[start:], (start, start)
    if kind == 3:
        return data[:start], (start, len(data) + 1)
    if kind == 4:
        return data[:start] + payload + data[start:], (start, start)
    if kind == 5:
        return data[:start] + payload[:1] + data[end:], (start, end)
    first_end = data.find(b"\n", start) + 1
    return data[:start] + data[first_end:end] + data[start:first_end] + data[end:], (start, end)


def edited(data: bytes, ranges: list[tuple[int, int]], edits: list[Edit]) -> tuple[bytes, list[tuple[int, int]]]:
    """The edits applied from the end of the file backwards, so that every region is still
    where it was in the original; an edit overlapping one applied already is left out."""
    planned = sorted(((_region(data, ranges, e), e) for e in edits), key=lambda p: (-p[0][0], -p[0][1]))
    changed: list[tuple[int, int]] = []
    limit = len(data) + 1
    for region, edit in planned:
        if region[1] > limit or (region[1] == limit and region[0] < region[1]):
            continue
        data, where = _apply(data, region, edit)
        changed.append(where)
        limit = region[0]
    return data, changed


def _touched(block: tuple[int, int], edits: list[tuple[int, int]]) -> bool:
    """True when an edit changed bytes of the block (an insertion touches it only inside)."""
    start, end = block
    return any((b > a and a < end and b > start) or (b == a and start < a < end) for a, b in edits)


def fuzz_transcripts(budget: Budget, root: Path) -> Outcome:
    """Random edits of a transcript, read back (and now and then reconciled)."""
    from hypothesis import strategies as st

    from benchmarks.chaos import opened, scratch_config

    outcome = Outcome("fuzz", "transcript edits")
    data, turns, ranges = original(root / "original")
    config = scratch_config(root / "memory")
    sessions = root / "memory" / "data" / "sessions"
    (sessions / SESSION_FILE).parent.mkdir(parents=True, exist_ok=True)
    (sessions / SESSION_FILE).write_bytes(data)
    with opened(config) as kernel:
        indexed = {t.id for t in kernel.session_turns("edits")}
    if indexed != {t.id for t in turns}:
        outcome.failed += 1
        outcome.note("the original transcript did not index whole")
    edit = st.tuples(
        st.integers(0, 6), st.integers(0, len(data)), st.integers(0, 100), st.binary(min_size=1, max_size=6)
    )
    count = 0

    def check(chosen: list[Edit]) -> None:
        nonlocal count
        count += 1
        outcome.tried += 1
        changed, touched = edited(data, ranges, chosen)
        intact = [t for t, block in zip(turns, ranges, strict=True) if not _touched(block, touched)]
        try:
            parsed = parse_transcript(decode_transcript(changed), SESSION_FILE, "edits")
        except Exception as exc:  # anything escaping the reader is a finding
            outcome.uncaught += 1
            outcome.note(f"{type(exc).__name__}: {exc} ← edits {chosen!r}")
            return
        ids = [t.id for t in parsed.turns]
        read = {t.id: t for t in parsed.turns}
        # the last turn may be held back as unfinished when an edit after it looks like a cut-off write
        expected = [t.id for t in intact if t.id != parsed.tail_turn]
        kept = [t.id for t in intact if t.id in read and read[t.id].messages == t.messages]
        if len(set(ids)) != len(ids) or kept != expected or [i for i in ids if i in kept] != kept:
            outcome.failed += 1
            outcome.note(f"intact {[t.id for t in intact]} read as {ids} ← edits {chosen!r}")
        if count % RECONCILE_EVERY == 0:
            _reconciled(config, sessions, changed, data, intact, outcome, chosen)

    _explore(st.lists(edit, min_size=1, max_size=3), budget, check)
    return outcome


def _reconciled(
    config: Path,
    sessions: Path,
    changed: bytes,
    data: bytes,
    intact: list[Turn],
    outcome: Outcome,
    chosen: list[Edit],
) -> None:
    """Reconcile the edited file into the index of the original: intact turns must stay."""
    from benchmarks.chaos import opened

    path = sessions / SESSION_FILE
    path.write_bytes(changed)
    try:
        with opened(config) as kernel:
            left = kernel.store.hashes(SESSION_FILE)
            missing = [t.id for t in intact if t.id not in left]
            if missing:
                outcome.lost += len(missing)
                outcome.note(f"reconcile removed intact turns {missing} ← edits {chosen!r}")
            sessions_of_file = sorted({meta[3] for meta in left.values()})
            if len(sessions_of_file) > 1:  # one file is one session, whatever its header says now
                outcome.failed += 1
                rows = {turn_id: meta[3] for turn_id, meta in sorted(left.items())}
                why = f"; index: {kernel.health.reason}" if kernel.health.reason else ""
                outcome.note(f"reconcile split the file into sessions {rows}{why} ← edits {chosen!r}")
    except Exception as exc:  # anything escaping reconcile is a finding
        outcome.uncaught += 1
        outcome.note(f"reconcile: {type(exc).__name__}: {exc} ← edits {chosen!r}")
    finally:
        for backup in path.parent.glob(path.name + ".torn-*"):
            backup.unlink()
        path.write_bytes(data)
        with opened(config) as kernel:
            kernel.reconcile(full=True)

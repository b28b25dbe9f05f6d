"""Reading transcripts back into turns, keeping every turn that can be read.

A transcript is written by huichat but may be cut off by a crash or a full disk, and may
be edited by hand. The reader keeps every turn it can read and reports, by line, what it
could not: a message marker without its end, a turn block that appears twice, a marker
whose data cannot be read, bytes that are not UTF-8, and an unfinished turn at the end
of the file (a write cut off, or one still in progress). The unfinished tail is located
exactly, so that the writer can cut it off (keeping a copy) — see ``TranscriptWriter``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from huichat.memory.branches import AFTER, BRANCH, BranchTree
from huichat.memory.tombstones import PURGED, Correction, Marks
from huichat.memory.turns import CORRECTION, Message, Turn, is_turn_id

MARKER = re.compile(r"^<!-- huichat:(session|turn|msg) (\{.*\}) -->$", re.MULTILINE)
MSG_END = "\n<!-- /huichat:msg -->"
_OLD_NAMES = {"index": "turn_index", "recalled": "recalled_ids"}
"""Field names written by the first transcript format, read as their current names."""
_ANCHOR_LINE = r"^\[id:([a-z0-9]{6}) \| prev: "
_ANCHOR = re.compile(_ANCHOR_LINE, re.MULTILINE)
"""A turn's visible anchor line (its id in group 1)."""
_HEAD = re.compile(rf"^## |{_ANCHOR_LINE}", re.MULTILINE)
"""The visible head of a turn block (its heading, its anchor line), written before its marker."""
_NOT_UTF8 = re.compile(r"[\udc80-\udcff]")
"""Bytes that were not UTF-8, as ``decode_transcript`` keeps them (one escape per byte)."""


def decode_transcript(data: bytes) -> str:
    """A transcript's text; bytes that are not UTF-8 are kept as escapes, so offsets map back."""
    return data.decode("utf-8", errors="surrogateescape")


def encoded_length(text: str) -> int:
    """How many bytes ``text`` (from ``decode_transcript``) takes in the file."""
    return len(text.encode("utf-8", errors="surrogateescape"))


def _clean(text: str) -> str:
    return _NOT_UTF8.sub("\ufffd", text)


@dataclass(frozen=True)
class TranscriptProblem:
    """Something in a transcript that could not be read as written."""

    line: int
    reason: str
    turn_id: str | None = None
    """The turn concerned, when its id is known: its indexed copy is kept as it is."""
    hides_turn: bool = False
    """A turn may be missing from what was read: nothing indexed from this file is removed."""


@dataclass(frozen=True)
class ParsedSession:
    """What a transcript holds: the session id, its readable turns in order, what went wrong."""

    session_id: str
    turns: list[Turn]
    problems: tuple[TranscriptProblem, ...] = ()
    tail: int | None = None
    """Where an unfinished write at the end of the file begins (a character offset), if any."""
    tail_turn: str | None = None
    """The id of the unfinished turn at the end, when its marker could be read."""
    tail_closable: bool = False
    """Only the unfinished turn's last end marker is missing (its text is whole): closing it
    restores the turn exactly."""
    meta: dict[str, Any] = field(default_factory=dict)
    """The header's fields merged with later session markers (the last value of a key wins)."""
    forgotten: frozenset[str] = frozenset()
    """Turns forgotten (or purged) by a tombstone: they hold their place in the chain but are not in ``turns``."""
    hidden: tuple[Turn, ...] = ()
    """The forgotten turns that can still be read (``huichat forget --undo`` brings one back)."""
    beside: list[Turn] = field(default_factory=list)
    """The turns kept beside the current branch (``memory.branches``), in file order, each
    linked to the turn it follows; ``turns`` is the current branch alone."""
    tree: BranchTree = field(default_factory=lambda: BranchTree((), {}, None))
    """Which turn follows which, and the current branch's last turn."""


@dataclass
class _Block:
    """One turn block as found: its marker data, its messages, where it began."""

    meta: dict[str, Any] | None
    line: int
    start: int
    """Offset where the block begins: just after everything complete before it."""
    messages: list[Message] = field(default_factory=list)
    open_message: int | None = None
    """Offset of a message marker whose end was never found (cut off, or stray)."""
    cut_short: bool = False
    """The open message ends before its end marker could: what a cut-off write leaves."""
    body_whole: bool = False
    """The open message has all of its declared text: only its end marker is missing."""
    broken_at: int | None = None
    """Offset of a message marker whose data cannot be read."""
    anchor: str | None = None
    """The id on the block's visible anchor line (known even when its marker is not)."""
    orphan: bool = False
    """Messages found after a turn's visible head whose marker is missing."""
    end: int | None = None
    """Offset just after its last message's end marker."""

    @property
    def turn_id(self) -> str | None:
        value = self.meta.get("id") if self.meta is not None else None
        return value if isinstance(value, str) and value else self.anchor


class _Reader:
    """One pass over a transcript's markers."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.blocks: list[_Block] = []
        self.problems: list[TranscriptProblem] = []
        self.session_id = ""
        self.meta: dict[str, Any] = {}
        self.clean_end = 0
        """Offset just after the last complete piece (the session marker, or a message's end)."""
        self.last_end = 0
        """Offset just after the last marker or message read."""
        self.damaged_session: tuple[int, int] | None = None
        """Where a session marker is whose session id has bytes that are not UTF-8."""
        self.marks = Marks()
        self.chosen: tuple[int, str] | None = None
        """The branch chosen last (its last turn), and how many turn blocks were read before it."""

    def line(self, offset: int) -> int:
        return self.text.count("\n", 0, offset) + 1

    def problem(self, offset: int, reason: str, turn_id: str | None = None, hides: bool = False) -> None:
        self.problem_at(self.line(offset), reason, turn_id, hides)

    def problem_at(self, line: int, reason: str, turn_id: str | None = None, hides: bool = False) -> None:
        self.problems.append(TranscriptProblem(line, reason, turn_id, hides))

    def read(self) -> None:
        text = self.text
        pos = 0
        while (match := MARKER.search(text, pos)) is not None:
            kind, payload = match.group(1), match.group(2)
            pos = match.end()
            try:
                meta = json.loads(_clean(payload))
            except ValueError:
                meta = None
            meta = meta if isinstance(meta, dict) else None
            if kind == "session":
                if meta is not None and not self.marks.read(meta):
                    if _NOT_UTF8.search(str(_raw_field(payload, "session_id"))):
                        self.damaged_session = (match.start(), match.end())
                        meta = {k: v for k, v in meta.items() if k != "session_id"}
                    self.session_id = str(meta.get("session_id") or self.session_id)
                    self.meta.update(meta)
                    if isinstance(meta.get(BRANCH), str):
                        self.chosen = (len(self.blocks), meta[BRANCH])
                self.clean_end = min(len(text), pos + 1)
            elif kind == "turn":
                anchor = self.head(match.start())[1]
                if meta is not None and not is_turn_id(str(meta.get("id") or "")):
                    meta = None  # an edited id: nothing is ever indexed under a malformed one
                if meta is None:
                    reason = "a turn marker that cannot be read: its messages are skipped"
                    self.problem(match.start(), reason, anchor, hides=anchor is None)
                self.blocks.append(_Block(meta, self.line(match.start()), self.clean_end, anchor=anchor))
                if meta is not None and meta.get(PURGED):
                    self.clean_end = min(len(text), pos + 1)  # a purged turn is whole without messages
            elif self.blocks:
                pos = self.message(self.blocks[-1], meta, match.start(), pos)
            self.last_end = pos

    def head(self, before: int) -> tuple[bool, str | None]:
        """Whether a turn's visible head lies between the last thing read and ``before``, and its id.

        An anchor line followed by another one before ``before`` is a turn whose marker is
        missing (torn, then written after): it keeps its place in the chain and its indexed copy.
        """
        found = False
        anchor = None
        for match in _HEAD.finditer(self.text, self.last_end, before):
            found = True
            if match.group(1) is None:
                continue
            if anchor is not None:
                self.markerless(anchor, match.start())
            anchor = match.group(1)
        return found, anchor

    def markerless(self, turn_id: str, offset: int) -> None:
        """Turn ``turn_id``'s anchor line, before ``offset``, has no readable marker after it."""
        line = self.line(offset)
        self.problem_at(line, f"turn {turn_id} has no readable marker: its indexed copy is kept", turn_id)
        self.blocks.append(_Block(None, line, self.clean_end, anchor=turn_id))

    def message(self, block: _Block, meta: dict[str, Any] | None, start: int, pos: int) -> int:
        """Read one message of ``block`` — or of a turn whose marker is missing, when that turn's
        visible head comes first (its messages are not the block's); returns where to continue."""
        seen, anchor = self.head(start)
        if seen:
            block = _Block(None, self.line(start), self.clean_end, anchor=anchor, orphan=True)
            self.blocks.append(block)
        return self.body(block, meta, start, pos)

    def body(self, block: _Block, meta: dict[str, Any] | None, start: int, pos: int) -> int:
        """Read one message body into ``block``; returns where to continue."""
        text = self.text
        body_start = pos + 1  # the newline after the marker
        chars = meta.get("chars") if meta is not None else None
        declared = chars if isinstance(chars, int) and chars >= 0 else None
        if declared is not None and text.startswith(MSG_END, body_start + declared):
            end = body_start + declared
        else:
            # without the declared length, text that carries another turn's own lines (its
            # markers, its anchor) is not this message's: the marker is a stray one
            end = text.find(MSG_END, body_start)
            next_turn = text.find("\n<!-- huichat:turn ", pos)  # also one right after the marker
            if 0 <= next_turn < end or (end >= 0 and self.holds_another_turn(body_start, end)):
                end = -1
        if end < 0:
            remaining = len(text) - body_start
            block.open_message = start
            block.cut_short = declared is None or remaining < declared + len(MSG_END)
            block.body_whole = declared is not None and remaining >= declared
            return pos
        if meta is None:
            block.broken_at = start
        else:
            block.messages.append(Message.from_record({**meta, "text": _clean(text[body_start:end])}))
        after = end + len(MSG_END)
        block.end = after
        self.clean_end = after + 1 if text.startswith("\n", after) else after
        return after

    def holds_another_turn(self, start: int, end: int) -> bool:
        """Whether ``text[start:end]`` holds a marker or an anchor line (what a turn is made of)."""
        return MARKER.search(self.text, start, end) is not None or _ANCHOR.search(self.text, start, end) is not None

    def unfinished_tail(self) -> _Block | None:
        """The last block, when a write was cut off inside it (or is still in progress)."""
        if not self.blocks:
            return None
        last = self.blocks[-1]
        if last.meta is not None and last.meta.get(PURGED) and not last.messages:
            return None
        if last.open_message is not None:
            return last if last.cut_short and last.open_message >= self.clean_end else None
        return last if not last.messages and last.meta is not None and last.broken_at is None else None


def turn_block(text: str, turn_id: str) -> tuple[int, int, dict[str, Any]] | None:
    """Where turn ``turn_id``'s block lies in ``text`` (its heading up to its last message's end
    marker) and its marker's data; None when no readable block has that id."""
    reader = _Reader(text)
    reader.read()
    for block in reader.blocks:
        if block.meta is not None and block.meta.get("id") == turn_id:
            end = block.end if block.end is not None else block.start
            return block.start, max(end, block.start), block.meta
    return None


def _raw_field(payload: str, key: str) -> object:
    """One field of a marker's data as written, bytes that are not UTF-8 still marked."""
    try:
        meta = json.loads(payload)
    except ValueError:
        return None
    return meta.get(key) if isinstance(meta, dict) else None


def _is_torn(tail: str) -> bool:
    """True for what a cut-off write leaves (a partial turn block or header), not a note added by hand."""
    return "<!-- huichat:" in tail or tail.lstrip("\n").startswith("#") or bool(_NOT_UTF8.search(tail))


def parse_transcript(text: str, session_file: str, fallback_session: str = "") -> ParsedSession:
    """Parse transcript ``text`` (from ``decode_transcript``), keeping every turn that can be read."""
    reader = _Reader(text)
    reader.read()
    unfinished = reader.unfinished_tail()
    cut = unfinished.start if unfinished is not None else reader.clean_end
    torn = bool(text[cut:].strip()) and (unfinished is not None or _is_torn(text[cut:]))
    tail = cut if torn else None
    tail_turn = unfinished.turn_id if torn and unfinished is not None else None
    if torn and unfinished is None and (anchor := _ANCHOR.search(text, cut)) is not None:
        # cut inside a turn's marker (its anchor line is whole): that turn is known by its id
        tail_turn = anchor.group(1)
        reader.blocks.append(_Block(None, reader.line(anchor.start()), cut, anchor=tail_turn))
    if tail is not None:
        what = f"turn {tail_turn}" if tail_turn else "a turn"
        reader.problem(tail, f"{what} at the end is unfinished (cut off, or still being written)", tail_turn)
    blocks = reader.blocks[:-1] if unfinished is not None and torn else reader.blocks
    session_id = reader.session_id or fallback_session
    # the file is named after its session: a damaged id in the header gives way to that name
    damaged = reader.damaged_session if fallback_session else None
    if damaged is not None:
        session_id = fallback_session
        reason = f"the session id in the header has bytes that are not UTF-8: the file name's ({session_id}) is used"
        reader.problem(damaged[0], reason)
    # a session's title is every turn's topic (the 话题 a result shows); sessions written
    # before titles existed keep the topic each turn recorded
    title = str(reader.meta.get("title") or "").strip()
    chain: list[tuple[str, Turn | None]] = []
    seen: set[str] = set()
    for block in blocks:
        turn_id = block.turn_id
        if block.orphan:
            if block.messages or block.broken_at is not None:
                reason = "a turn whose marker is missing: its messages are skipped"
                reader.problem_at(block.line, reason, turn_id, hides=turn_id is None)
            else:
                reader.problem_at(block.line, "a message marker without its end: ignored")
        if block.meta is not None and block.meta.get(PURGED) and turn_id is not None and turn_id not in seen:
            reader.marks.forgotten.add(turn_id)  # its text is gone for good; its place in the chain stays
            seen.add(turn_id)
            chain.append((turn_id, None))
            continue
        if block.meta is None:
            # known by its anchor line, it still holds its place in the chain
            if turn_id is not None and turn_id not in seen and not (block.orphan and not block.messages):
                seen.add(turn_id)
                chain.append((turn_id, None))
            continue
        if turn_id is not None and turn_id in seen:
            reader.problem_at(block.line, f"turn {turn_id} appears again: the first copy is kept", turn_id)
            continue
        if block.open_message is not None:
            reader.problem(block.open_message, "a message marker without its end: ignored", turn_id)
        turn = _turn(block, session_id, session_file, len(chain), title)
        if turn is None:
            broken = block.broken_at is not None
            reason = "a message marker that cannot be read" if broken else "no readable message"
            line = reader.line(block.broken_at) if block.broken_at is not None else block.line
            reader.problem_at(line, f"turn {turn_id or '?'} cannot be read ({reason})", turn_id, turn_id is None)
        if turn_id is None:
            continue  # a turn is only ever made from a block with an id
        seen.add(turn_id)
        chain.append((turn_id, turn))
    # bytes in a header's session id were reported with it
    skip = damaged or (0, 0)
    limit = tail if tail is not None else len(text)
    bad_bytes = _NOT_UTF8.search(text, 0, min(skip[0], limit)) or _NOT_UTF8.search(text, skip[1], limit)
    if bad_bytes is not None:
        reader.problem(bad_bytes.start(), "bytes that are not UTF-8 (read as \ufffd)")
    # links follow the branches (the file's order where a turn records none), through turns
    # that could not be read but whose id is known, and through forgotten ones; a branch chosen
    # before the last turn was written gave way to that turn's
    chosen = reader.chosen[1] if reader.chosen is not None and reader.chosen[0] >= len(blocks) else None
    after = {t.id: value for _, t in chain if t is not None and (value := dict(t.extra).get(AFTER)) is not None}
    tree = BranchTree.build([turn_id for turn_id, _ in chain], after, chosen)
    path = tree.path()
    following = {turn_id: path[i + 1] if i + 1 < len(path) else None for i, turn_id in enumerate(path)}
    current = set(path)
    known = {
        turn_id: _corrected(turn, reader.marks.corrections.get(turn_id, ())).with_links(
            tree.parent[turn_id], following.get(turn_id)
        )
        for turn_id, turn in chain
        if turn is not None
    }
    forgotten = frozenset(reader.marks.forgotten)
    turns = [known[t] for t in path if t in known and t not in forgotten]
    beside = [t for t in known.values() if t.id not in current and t.id not in forgotten]
    hidden = tuple(t for t in known.values() if t.id in forgotten)
    problems = tuple(sorted(reader.problems, key=lambda p: p.line))
    closable = unfinished is not None and tail is not None and unfinished.body_whole
    return ParsedSession(
        session_id, turns, problems, tail, tail_turn, closable, reader.meta, forgotten, hidden, beside, tree
    )


def _corrected(turn: Turn, notes: Sequence[Correction]) -> Turn:
    """``turn`` with the corrections written about it later, each as a message of its own after what was said."""
    if not notes:
        return turn
    added = tuple(Message("note", n.text, n.at.isoformat(), CORRECTION) for n in notes)
    return replace(turn, messages=turn.messages + added)


def _turn(block: _Block, session_id: str, session_file: str, position: int, title: str) -> Turn | None:
    if not block.messages or block.meta is None or block.broken_at is not None or block.turn_id is None:
        return None
    record = {_OLD_NAMES.get(k, k): v for k, v in block.meta.items()}
    record.setdefault("turn_index", position)
    record.update(session_id=session_id, session_file=session_file, prev_id=None, next_id=None)
    if title:
        record["topic"] = title
    try:
        return replace(Turn.from_record(record), messages=tuple(block.messages))
    except (KeyError, ValueError, TypeError, AttributeError, OverflowError):
        return None

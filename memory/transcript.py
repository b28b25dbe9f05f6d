"""Session transcripts: human-readable Markdown files that are the source of truth.

Each turn is appended and fsynced before it is indexed. Message bodies are stored
verbatim between markers that carry their length, so any Markdown, code block or
Chinese text round-trips exactly; a body edited by hand (length changed) is still found
by its closing marker. Neighbour links come from the order of turns in the file; the
visible anchor line is kept in step for readers (``next`` is patched in place when the
following turn is written — it is padded to the width of an id).
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime, tzinfo
from pathlib import Path
from typing import Any

from memory.errors import KernelError
from memory.turns import STATUS_OK, TEXT, Message, Turn, anchor_line

_MARKER = re.compile(r"^<!-- huichat:(session|turn|msg) (\{.*\}) -->$", re.MULTILINE)
_MSG_END = "\n<!-- /huichat:msg -->"
_WEEKDAYS = ("Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun")


def _json(data: dict[str, Any]) -> str:
    # '>' is escaped so that no value can close the HTML comment early
    return json.dumps(data, ensure_ascii=False).replace(">", "\\u003e")


def format_local_time(moment: datetime, zone: tzinfo | None) -> str:
    """``2026-03-05 Thu 10:00:07`` in the display zone (the seed's format)."""
    local = moment.astimezone(zone) if zone else moment.astimezone()
    return f"{local:%Y-%m-%d} {_WEEKDAYS[local.weekday()]} {local:%H:%M:%S}"


_NEXT_PAD = "none  "
"""An unknown ``next`` is padded to the width of an id, so it can be patched in place."""
_TRANSCRIPT_FIELDS = ("id", "turn_index", "timestamp", "topic", "recalled_ids", "status")
_OLD_NAMES = {"index": "turn_index", "recalled": "recalled_ids"}
"""Field names written by the first transcript format, read as their current names."""


def render_turn(turn: Turn, zone: tzinfo | None, next_id: str | None = None) -> str:
    """The Markdown block of one turn, as appended to its transcript."""
    topic = f" · 话题: {turn.topic}" if turn.topic else ""
    failed = " · ⚠ failed" if turn.status != STATUS_OK else ""
    record = turn.to_record()
    meta = {name: record[name] for name in _TRANSCRIPT_FIELDS}
    if turn.extra:
        meta["extra"] = record["extra"]
    if turn.events:
        meta["events"] = record["events"]
    parts = [
        f"\n## {format_local_time(turn.timestamp, zone)}{topic}{failed}\n\n",
        anchor_line(turn.id, turn.prev_id, next_id or _NEXT_PAD),
        "\n",
        f"<!-- huichat:turn {_json(meta)} -->\n",
    ]
    for message in turn.messages:
        notes = [n for n in (message.role if message.who != message.role else "", message.kind) if n and n != TEXT]
        label = f"**{message.who}**" + (f" ({' · '.join(notes)})" if notes else "")
        header = {**message.to_record(), "chars": len(message.text)}
        del header["text"]
        parts.append(f"\n{label}\n<!-- huichat:msg {_json(header)} -->\n{message.text}{_MSG_END}\n")
    return "".join(parts)


def _fsync_dir(path: Path) -> None:
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


class TranscriptWriter:
    """Appends turns to session files under ``root`` durably."""

    def __init__(self, root: Path, zone: tzinfo | None = None) -> None:
        self.root = root
        self.zone = zone

    def path_of(self, session_file: str) -> Path:
        """Absolute path of a session file given relative to the root."""
        return self.root / session_file

    def append(self, turns: Sequence[Turn], session_meta: Mapping[str, Any] | None = None) -> None:
        """Write consecutive turns of one session at the end of its file, then fsync once.

        ``session_meta`` (a title, where an imported session came from…) goes into the
        session's header when the file is created. Links inside the batch are written
        directly; the turn before the batch gets its visible ``next`` patched afterwards (a
        crash leaves at worst a stale label).
        """
        if not turns:
            return
        first = turns[0]
        path = self.path_of(first.session_file)
        created = not path.exists()
        following = [t.id for t in turns[1:]] + [None]
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            with path.open("a", encoding="utf-8", newline="\n") as handle:
                if created or handle.tell() == 0:
                    head = {
                        **(session_meta or {}),
                        "session_id": first.session_id,
                        "created": first.timestamp.isoformat(),
                    }
                    handle.write(f"# huichat session {first.session_id}\n<!-- huichat:session {_json(head)} -->\n")
                handle.write("".join(render_turn(t, self.zone, n) for t, n in zip(turns, following, strict=True)))
                handle.flush()
                os.fsync(handle.fileno())
            if created:
                _fsync_dir(path.parent)
            if first.prev_id:
                self._patch_next(path, first.prev_id, first.id)
        except OSError as exc:
            raise KernelError(f"cannot write transcript {path}: {exc.strerror or exc}") from exc

    def update_session(self, session_file: str, fields: Mapping[str, Any]) -> None:
        """Record new session-level facts (a new title…) at the end of its file; later ones win."""
        path = self.path_of(session_file)
        if not path.exists():
            raise KernelError(f"no transcript {session_file}")
        try:
            with path.open("a", encoding="utf-8", newline="\n") as handle:
                handle.write(f"\n<!-- huichat:session {_json(dict(fields))} -->\n")
                handle.flush()
                os.fsync(handle.fileno())
        except OSError as exc:
            raise KernelError(f"cannot write transcript {path}: {exc.strerror or exc}") from exc

    @staticmethod
    def _patch_next(path: Path, prev_id: str, next_id: str) -> None:
        needle = f"\n[id:{prev_id} | prev: ".encode()
        with path.open("r+b") as handle:
            size = handle.seek(0, os.SEEK_END)
            # the predecessor is normally the last turn: look at the tail before reading it all
            for window in (65536, size):
                offset = max(0, size - window)
                handle.seek(offset)
                data = handle.read()
                start = data.find(needle)
                if start >= 0 or offset == 0:
                    break
            if start < 0:
                return
            end = data.find(b"\n", start + 1)
            where = data.find(f"next: {_NEXT_PAD}]".encode(), start, end if end > 0 else len(data))
            if where < 0:
                return
            handle.seek(offset + where + len("next: "))
            handle.write(next_id.encode("ascii"))
            handle.flush()
            os.fsync(handle.fileno())


@dataclass(frozen=True)
class ParsedSession:
    """What a transcript holds: the session id, its turns in order, and its session-level facts."""

    session_id: str
    turns: list[Turn]
    meta: dict[str, Any] = field(default_factory=dict)
    """The header's fields merged with later updates (the last value of a key wins)."""


class TurnChunker:
    """Parses transcripts back into turns (the seed's ``TurnChunker``)."""

    def __init__(self, root: Path | None = None) -> None:
        self.root = root

    def chunk_file(self, path: Path | str) -> list[Turn]:
        """The turns of one transcript, linked prev/next in file order."""
        path = Path(path)
        try:
            text = path.read_bytes().decode("utf-8")  # bytes: keep \r\n inside messages as written
        except (OSError, UnicodeDecodeError) as exc:
            raise KernelError(f"cannot read transcript {path}: {exc}") from exc
        relative = self._relative(path)
        return self.parse(text, relative, fallback_session=path.stem.removeprefix("chat_")).turns

    def _relative(self, path: Path) -> str:
        if self.root is not None:
            try:
                return path.resolve().relative_to(self.root.resolve()).as_posix()
            except ValueError:
                pass
        return path.as_posix()

    @staticmethod
    def parse(text: str, session_file: str, fallback_session: str = "") -> ParsedSession:
        """Parse transcript ``text``; a truncated last turn (a killed writer) is skipped."""
        session_id = fallback_session
        session_meta: dict[str, Any] = {}
        raw: list[tuple[dict[str, Any], list[Message]]] = []
        pos = 0
        while True:
            match = _MARKER.search(text, pos)
            if match is None:
                break
            kind, payload = match.group(1), match.group(2)
            pos = match.end()
            try:
                meta = json.loads(payload)
            except ValueError:
                continue
            if kind == "session":
                session_id = str(meta.get("session_id") or session_id)
                session_meta.update(meta)
            elif kind == "turn":
                raw.append((meta, []))
            elif raw:
                body_start = pos + 1  # the newline after the marker
                chars = meta.get("chars")
                end = -1
                if isinstance(chars, int) and text.startswith(_MSG_END, body_start + chars):
                    end = body_start + chars
                else:
                    end = text.find(_MSG_END, body_start)
                    next_turn = text.find("\n<!-- huichat:turn ", body_start)
                    if 0 <= next_turn < end:
                        end = -1
                if end < 0:
                    # a writer killed mid-turn: drop that turn, keep reading after it
                    raw[-1][0]["_truncated"] = True
                    continue
                raw[-1][1].append(Message.from_record({**meta, "text": text[body_start:end]}))
                pos = end + len(_MSG_END)
        turns: list[Turn] = []
        for meta, messages in raw:
            if meta.get("_truncated") or not messages:
                continue
            record = {_OLD_NAMES.get(k, k): v for k, v in meta.items()}
            record.setdefault("turn_index", len(turns))
            record.update(session_id=session_id, session_file=session_file, prev_id=None, next_id=None)
            try:
                turns.append(replace(Turn.from_record(record), messages=tuple(messages)))
            except (KeyError, ValueError, TypeError, AttributeError):
                continue
        linked = [
            turn.with_links(
                turns[i - 1].id if i > 0 else None,
                turns[i + 1].id if i + 1 < len(turns) else None,
            )
            for i, turn in enumerate(turns)
        ]
        return ParsedSession(session_id, linked, session_meta)

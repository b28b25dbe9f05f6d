"""Purging a turn: its text removed for good from the files memory keeps (``huichat forget --purge``).

Forgetting is a tombstone and can be undone; purging cannot. The transcript is rewritten
(a temporary file beside it, then an atomic replace) with the turn's block turned into a
purged tombstone that keeps its id and its place, so the anchor chain and every other
turn's id stay as they were; the notes attached to it go too. Its import record loses the
records that hold its text (and the branches that hang off them), and a torn write kept
beside its transcript that holds its text is removed. The kernel then drops the index's
row and every older version of the table (``TurnStore.erase_history``).
"""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from huichat.memory.durability import fsync_path
from huichat.memory.errors import KernelError
from huichat.memory.imports.codec import decode_turn
from huichat.memory.imports.sidecar import parse_records, sidecar_of
from huichat.memory.tombstones import CORRECTION, PURGED
from huichat.memory.transcript_parse import MARKER, decode_transcript, parse_transcript, turn_block
from huichat.memory.turns import Message, one_line

if TYPE_CHECKING:
    from huichat.memory.kernel import MemoryKernel

_ANCHOR = "\n[id:"


def purge_turn(kernel: MemoryKernel, turn_id: str) -> tuple[str, tuple[str, ...]]:
    """Remove a turn's text for good: its id and the texts removed (the app clears its own files of
    them), none when it was purged already. Needs the index (it holds the text too)."""
    if not kernel.health.usable:
        raise kernel.health.error()
    if kernel.transcripts.shared is not None:
        # its segments there cannot be rewritten in place, and a rewrite of them is not yet safe
        # against a replica reading or appending meanwhile: refused, rather than a text kept
        raise KernelError(
            "purge is not on shared storage (storage.uri) yet: the store's transcript segments would "
            "keep the text; `huichat forget ID` takes the turn out of search, recall and exports"
        )
    cleaned, rel, _ = kernel.locate(turn_id)
    path = kernel.transcripts.path_of(rel)
    with kernel.transcripts.hold(rel):
        removed = purge_file(path, cleaned)
    if removed is None:
        return cleaned, ()
    said = [m.text for m in removed.messages if m.text.strip()]
    said += scrub_import_record(path, removed.source_ids, said)
    texts = tuple(dict.fromkeys(said))
    remove_torn_copies(path, cleaned, texts)
    kernel.purged(rel, cleaned)
    return cleaned, texts


def replace_atomically(path: Path, data: bytes) -> None:
    """Write ``data`` as ``path``'s new content: a private temporary file beside it, fsynced, then renamed over it."""
    temporary = path.with_name(f".{path.name}.{os.getpid()}.purge")
    try:
        fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        temporary.replace(path)
        fsync_path(path.parent)
    except OSError as exc:
        with contextlib.suppress(OSError):
            temporary.unlink()
        raise KernelError(f"cannot rewrite {path}: {exc.strerror or exc}") from exc


@dataclass(frozen=True)
class Removed:
    """What a purge took out of a transcript."""

    messages: tuple[Message, ...]
    """The turn's messages and the corrections attached to it."""
    source_ids: tuple[str, ...]
    """Its messages' ids in its import record (``<turn id>.<n>`` for a turn written in huichat)."""


def purged_transcript(text: str, turn_id: str) -> tuple[str, Removed] | None:
    """``text`` with turn ``turn_id``'s block replaced by a purged tombstone and its corrections
    dropped, and what was removed; None when it was purged already."""
    found = turn_block(text, turn_id)
    if found is None:
        raise KernelError(f"turn {turn_id} cannot be read from its transcript: it cannot be purged")
    start, end, meta = found
    if meta.get(PURGED):
        return None
    block = text[start:end]
    anchor_start = block.find(_ANCHOR)
    anchor = block[anchor_start + 1 : block.find("\n", anchor_start + 1)] if anchor_start >= 0 else f"[id:{turn_id}]"
    head = {"id": turn_id, "turn_index": meta.get("turn_index"), "timestamp": meta.get("timestamp"), PURGED: True}
    tombstone = f"\n## purged turn\n\n{anchor}\n<!-- huichat:turn {json.dumps(head)} -->"
    parsed = parse_transcript(block, "")
    turns = [*parsed.turns, *parsed.hidden]
    said = tuple(m for turn in turns for m in turn.messages)
    ids = tuple(m.id for turn in turns for m, _ in decode_turn(turn, None))
    rest = _without_corrections(text[end:], turn_id)
    removed = Removed(said + tuple(_corrections(text[end:], turn_id)), ids)
    words = [m.text for m in removed.messages if m.text.strip()]
    return _without_titles(text[:start] + tombstone + rest, words), removed


_TITLED = ("title", "topic")
"""Marker fields that may have been made from a turn's words (a local title is its first clause)."""
PURGED_TITLE = "(purged)"


def _made_from(value: str, texts: list[str]) -> bool:
    value = value.strip()
    return bool(value) and any(t in value or (len(value) >= 4 and value in t) for t in texts)


def _without_titles(text: str, texts: list[str]) -> str:
    """``text`` with every title and topic made from ``texts`` (in markers and turn headings) replaced."""
    pieces: list[str] = []
    topics: set[str] = set()
    position = 0
    for match in MARKER.finditer(text):
        try:
            meta = json.loads(match.group(2))
        except ValueError:
            continue
        if not isinstance(meta, dict):
            continue
        stale = [k for k in _TITLED if isinstance(meta.get(k), str) and _made_from(meta[k], texts)]
        if not stale:
            continue
        topics.update(meta[k] for k in stale)
        meta.update(dict.fromkeys(stale, PURGED_TITLE))
        payload = json.dumps(meta, ensure_ascii=False).replace(">", "\\u003e")
        pieces += [text[position : match.start()], f"<!-- huichat:{match.group(1)} {payload} -->"]
        position = match.end()
    pieces.append(text[position:])
    cleaned = "".join(pieces)
    for topic in topics:
        cleaned = cleaned.replace(f" · 话题: {one_line(topic)}\n", f" · 话题: {PURGED_TITLE}\n")
    return cleaned


def _correction_of(meta_text: str, turn_id: str) -> dict[str, Any] | None:
    try:
        meta = json.loads(meta_text)
    except ValueError:
        return None
    note = meta.get(CORRECTION) if isinstance(meta, dict) else None
    return note if isinstance(note, dict) and note.get("id") == turn_id else None


def _without_corrections(text: str, turn_id: str) -> str:
    kept: list[str] = []
    position = 0
    for match in MARKER.finditer(text):
        if match.group(1) == "session" and _correction_of(match.group(2), turn_id) is not None:
            kept.append(text[position : match.start()])
            position = match.end() + (1 if text.startswith("\n", match.end()) else 0)
    kept.append(text[position:])
    return "".join(kept)


def _corrections(text: str, turn_id: str) -> list[Message]:
    notes = (_correction_of(m.group(2), turn_id) for m in MARKER.finditer(text) if m.group(1) == "session")
    return [Message("note", str(n.get("text") or ""), kind=CORRECTION) for n in notes if n is not None]


def purge_file(path: Path, turn_id: str) -> Removed | None:
    """Purge ``turn_id`` from the transcript at ``path`` (the caller holds its lock); what was removed."""
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise KernelError(f"cannot read transcript {path}: {exc.strerror or exc}") from exc
    purged = purged_transcript(decode_transcript(data), turn_id)
    if purged is None:
        return None
    text, removed = purged
    replace_atomically(path, text.encode("utf-8", errors="surrogateescape"))
    return removed


def scrub_import_record(transcript: Path, message_ids: Iterable[str], texts: Iterable[str]) -> list[str]:
    """Drop the import records beside ``transcript`` of the purged messages (by id, or holding one
    of ``texts``) and the branches that follow them; returns the texts the dropped records held."""
    path = sidecar_of(transcript)
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except FileNotFoundError:
        return []
    except (OSError, UnicodeDecodeError) as exc:
        raise KernelError(f"cannot read the import record {path}: {exc}") from exc
    wanted = [t for t in texts if t.strip()]
    dropped = set(message_ids)
    records = list(parse_records(lines))
    kept: list[Mapping[str, Any]] = []
    held: list[str] = []
    for record in records:
        if str(record.get("id")) in dropped or str(record.get("after")) in dropped or _holds(record, wanted):
            dropped.add(str(record.get("id")))
            held += _said(record)
            continue
        kept.append(record)
    if len(kept) < len(records):
        body = "".join(json.dumps(r, ensure_ascii=False, separators=(",", ":")) + "\n" for r in kept)
        replace_atomically(path, body.encode("utf-8"))
    return held


def _holds(value: Any, texts: list[str]) -> bool:
    if isinstance(value, str):
        return any(text in value for text in texts)
    if isinstance(value, Mapping):
        return any(_holds(v, texts) for v in value.values())
    if isinstance(value, list):
        return any(_holds(v, texts) for v in value)
    return False


def _said(value: Any) -> list[str]:
    """The texts in a record (its ``text`` and ``content`` fields, however deep)."""
    if isinstance(value, Mapping):
        own = [v for k, v in value.items() if k in ("text", "content") and isinstance(v, str) and v.strip()]
        return own + [t for v in value.values() if not isinstance(v, str) for t in _said(v)]
    if isinstance(value, list):
        return [t for v in value for t in _said(v)]
    return []


def remove_torn_copies(transcript: Path, turn_id: str, texts: Iterable[str]) -> int:
    """Remove the cut-off writes kept beside ``transcript`` (``<file>.torn-<time>``) of the purged
    turn (its anchor line) or holding one of ``texts``."""
    wanted = [f"[id:{turn_id} |".encode(), *(t.encode("utf-8") for t in texts if t.strip())]
    removed = 0
    for torn in transcript.parent.glob(f"{transcript.name}.torn-*"):
        with contextlib.suppress(OSError):
            if any(text in torn.read_bytes() for text in wanted):
                torn.unlink()
                removed += 1
    return removed


SWEEP_MIN_CHARS = 8
"""Shorter texts are removed only where they are known to be (a word like "ok" is in many files)."""
_SWEEP_MAX_BYTES = 256 * 1024 * 1024
SWEPT_SUFFIXES = frozenset({".md", ".markdown", ".txt", ".json", ".jsonl", ".csv", ".html", ".log"})
"""Text files (exports, logs): an index, a model or an archive is never rewritten byte for byte."""


def sweep(root: Path, texts: Iterable[str], skip: Iterable[Path] = ()) -> list[Path]:
    """Replace ``texts`` by ``[purged]`` in every other file under ``root`` that holds them (an
    export written there, a log): as written, and as JSON writes them. Returns the files changed."""
    forms: list[bytes] = []
    for text in texts:
        if len(text.strip()) >= SWEEP_MIN_CHARS:
            forms += [
                text.encode("utf-8"),
                json.dumps(text)[1:-1].encode(),
                json.dumps(text, ensure_ascii=False)[1:-1].encode(),
            ]
    skipped = [p.resolve() for p in skip]
    changed: list[Path] = []
    if not forms:
        return changed
    for path in sorted(root.rglob("*")):
        if path.suffix.lower() not in SWEPT_SUFFIXES or not path.is_file() or path.is_symlink():
            continue
        if any(path.resolve().is_relative_to(s) for s in skipped):
            continue
        try:
            if path.stat().st_size > _SWEEP_MAX_BYTES:
                continue
            data = path.read_bytes()
        except OSError:
            continue
        cleaned = data
        for form in dict.fromkeys(forms):
            cleaned = cleaned.replace(form, b"[purged]")
        if cleaned != data:
            replace_atomically(path, cleaned)
            changed.append(path)
    return changed

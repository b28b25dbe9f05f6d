"""The import record of a session: ``chat_<session>.source.jsonl`` beside its transcript.

An imported conversation holds more than its visible turns: the branches the user did not
end on (edits, regenerations), the nodes left out of the visible chain (hidden, system,
empty — kept raw with the reason), the details of typed parts that a transcript does not
show, and the history of imports (which node was current, what was guessed). All of that
goes here, one JSON record per line, appended and fsynced *before* the transcript is
written, and never rewritten. Records:

- ``header``: the session id, the title and the source block (once, first).
- ``alternative``: a message not on the visible branch, whole, with ``after`` — the kept
  message it follows (``None`` for a second root).
- ``skipped``: a node left out of the visible chain, raw, with its reason.
- ``parts``: the part details (names, call ids, raw source objects, attachment text) of a
  visible message whose turn keeps only the parts' kinds and texts.
- ``import``: one per import that added anything: when, from which file, the current node
  (a later one with another node is a moved ``current_node``), the notes.

A line cut short by a killed writer is ignored when read and closed before the next append.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any

from huichat.memory.durability import fsync_path
from huichat.memory.errors import KernelError

SUFFIX = ".source.jsonl"
VERSION = 1

HEADER = "header"
ALTERNATIVE = "alternative"
SKIPPED = "skipped"
PARTS = "parts"
IMPORT = "import"


def sidecar_of(transcript: Path) -> Path:
    """The import record beside a transcript (``chat_x.md`` → ``chat_x.source.jsonl``)."""
    return transcript.with_name(transcript.name.removesuffix(".md") + SUFFIX)


def record(kind: str, **fields: Any) -> dict[str, Any]:
    """One record of the given type, stamped with the format's version."""
    return {"v": VERSION, "type": kind, **fields}


def parse_records(lines: Iterable[str]) -> Iterator[dict[str, Any]]:
    """The records in ``lines``; a torn or foreign line is passed over."""
    for line in lines:
        text = line.strip()
        if not text:
            continue
        try:
            data = json.loads(text)
        except ValueError:
            continue  # a line cut short by a killed writer
        if isinstance(data, dict) and isinstance(data.get("type"), str):
            yield data


def read_records(path: Path) -> list[dict[str, Any]]:
    """Every readable record of an import record file (none when it does not exist)."""
    try:
        with path.open(encoding="utf-8") as handle:
            return list(parse_records(handle))
    except FileNotFoundError:
        return []
    except (OSError, UnicodeDecodeError) as exc:
        raise KernelError(f"cannot read the import record {path}: {exc}") from exc


def append_records(path: Path, records: Iterable[Mapping[str, Any]], *, durable: bool = True) -> None:
    """Append records and fsync; a torn last line left by a killed writer is closed first.

    Without ``durable`` nothing is fsynced: the caller flushes many files at once
    (``memory.durability``) before it writes what depends on them.
    """
    lines = [json.dumps(r, ensure_ascii=False, separators=(",", ":")) + "\n" for r in records]
    if not lines:
        return
    try:
        created = not path.exists()
        path.parent.mkdir(parents=True, exist_ok=True)
        with path.open("a+b") as handle:
            size = handle.seek(0, os.SEEK_END)
            if size:
                handle.seek(size - 1)
                torn = handle.read(1) != b"\n"
                handle.seek(0, os.SEEK_END)
                if torn:
                    handle.write(b"\n")
            handle.write("".join(lines).encode("utf-8"))
            handle.flush()
            if durable:
                os.fsync(handle.fileno())
        if created and durable:
            fsync_path(path.parent)
    except OSError as exc:
        raise KernelError(f"cannot write the import record {path}: {exc.strerror or exc}") from exc

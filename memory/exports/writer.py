"""Writing an export: the chosen sessions, one at a time, into files that appear whole or not at all."""

from __future__ import annotations

import itertools
import json
import os
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import tzinfo
from pathlib import Path
from typing import IO

from huichat.memory.errors import KernelError
from huichat.memory.exports import ExportFormat, chatgpt, markdown
from huichat.memory.exports.selection import Redactor, Selection, redacted, select
from huichat.memory.imports import huichat_jsonl
from huichat.memory.imports.model import ImportedConversation
from huichat.memory.imports.stored import StoredSession, restore

_DEFAULT_NAMES = {ExportFormat.JSONL: "huichat-export.jsonl", ExportFormat.CHATGPT: "conversations.json"}


@dataclass
class ExportReport:
    """What an export wrote."""

    sessions: int = 0
    turns: int = 0
    alternatives: int = 0
    """Messages of the sessions' other branches (edits, replies asked again), the same in every format."""
    path: Path | None = None


@contextmanager
def _atomic(path: Path) -> Iterator[IO[str]]:
    """A file written beside ``path`` and moved over it only once complete."""
    partial = path.with_name(path.name + ".partial")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with partial.open("w", encoding="utf-8", newline="\n") as handle:
            yield handle
            handle.flush()
            os.fsync(handle.fileno())
        partial.replace(path)
    except OSError as exc:
        partial.unlink(missing_ok=True)
        raise KernelError(f"cannot write {path}: {exc.strerror or exc}") from exc
    except BaseException:
        partial.unlink(missing_ok=True)
        raise


def _target(fmt: ExportFormat, out: Path) -> Path:
    if fmt is ExportFormat.MARKDOWN:
        if out.exists() and not out.is_dir():
            raise KernelError(f"{out}: Markdown is written as one file per session; --out must name a folder")
        return out
    return out / _DEFAULT_NAMES[fmt] if out.is_dir() else out


def export(
    sessions_dir: Path,
    fmt: ExportFormat,
    out: Path,
    selection: Selection,
    zone: tzinfo,
    *,
    redact: Redactor | None = None,
    progress: Callable[[StoredSession], None] | None = None,
) -> ExportReport:
    """Write the sessions ``selection`` picks to ``out`` in ``fmt``; returns what was written."""
    target = _target(fmt, out)
    report = ExportReport(path=target)

    def each() -> Iterator[tuple[StoredSession, ImportedConversation]]:
        for stored in select(sessions_dir, selection):
            stored = redacted(stored, redact) if redact is not None else stored
            # read back as a conversation, so every format counts the same other branches
            conversation = restore(stored, stored.session_file)
            report.sessions += 1
            report.turns += len(stored.turns)
            report.alternatives += sum(len(b.messages) for b in conversation.alternatives)
            yield stored, conversation
            if progress is not None:
                progress(stored)

    chosen = each()
    first = next(chosen, None)
    if first is None:  # nothing matches: nothing is written
        report.path = None
        return report
    sessions = itertools.chain([first], chosen)
    if fmt is ExportFormat.MARKDOWN:
        target.mkdir(parents=True, exist_ok=True)
        for stored, conversation in sessions:
            with _atomic(target / f"{stored.session_id}.md") as handle:
                handle.write(markdown.render(stored, conversation, zone))
    elif fmt is ExportFormat.JSONL:
        with _atomic(target) as handle:
            for stored, _ in sessions:
                for line in huichat_jsonl.session_lines(stored):
                    handle.write(json.dumps(line, ensure_ascii=False, separators=(",", ":")) + "\n")
    else:
        with _atomic(target) as handle:
            handle.write("[")
            for index, (_, conversation) in enumerate(sessions):
                handle.write(("," if index else "") + json.dumps(chatgpt.conversation(conversation)))
            handle.write("]")
    return report

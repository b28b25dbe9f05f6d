"""huichat's own session transcripts, from another machine (so two installs can be merged).

Parsed by the kernel's ``TurnChunker`` — the one reader of the format — with the session's
import record beside it when there is one, and read back by ``stored.restore``: a session
that was itself imported keeps its source's identity (service, conversation and message
ids, branches), so the same ChatGPT conversation imported on two machines merges into one.
A session written in huichat is a conversation of its own; its turns keep their grouping
(``source_turn``) and their ids: message ``i`` of turn ``a3f2c7`` has the source id
``a3f2c7.i``. Topic, status, the recall trace and the turn's extra fields travel in ``extra``.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import PurePosixPath

from huichat.memory.imports import sidecar
from huichat.memory.imports.model import ImportedConversation, ImportFormatError
from huichat.memory.imports.sources import Source
from huichat.memory.imports.stored import parse_session, restore

EXPECTED = "a huichat session transcript (Markdown with huichat markers)"


def read(source: Source) -> Iterator[ImportedConversation]:
    """The session in one transcript file (nothing when it holds no complete turn)."""
    with source.open() as stream:
        data = stream.read()
    try:
        text = data.decode("utf-8")  # bytes as written: \r\n inside messages survives
    except UnicodeDecodeError as exc:
        raise ImportFormatError(f"{source.label}: not UTF-8 text; expected {EXPECTED}") from exc
    records = sidecar.read_records(sidecar.sidecar_of(source.path)) if source.path is not None else []
    name = PurePosixPath(source.label.rsplit(":", 1)[-1]).name
    stored = parse_session([text], name, records)
    if stored.turns:
        yield restore(stored, source.label)

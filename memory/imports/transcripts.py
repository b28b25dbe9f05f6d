"""huichat's own session transcripts, from another machine (so two installs can be merged).

Parsed by the kernel's ``TurnChunker`` — the one reader of the format. A session is a
conversation; its turns keep their grouping (``source_turn``) and their ids: message
``i`` of turn ``a3f2c7`` has the source id ``a3f2c7.i``. Topic, status, the recall trace and
the turn's extra fields travel in ``extra``.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import PurePosixPath

from memory.imports.model import ImportedConversation, ImportFormatError, Part, PartKind, Role, SourceFormat, SourceTime
from memory.imports.sources import Source
from memory.imports.tree import Header, Node, assemble
from memory.transcript import TurnChunker
from memory.turns import Turn

EXPECTED = "a huichat session transcript (Markdown with huichat markers)"
_ROLES = {"user": Role.USER, "assistant": Role.ASSISTANT, "note": Role.NOTE, "system": Role.SYSTEM, "tool": Role.TOOL}


def _nodes(turn: Turn, parent: str | None) -> list[Node]:
    extra = [("topic", turn.topic), ("status", turn.status), ("recalled", " ".join(turn.recalled_ids))]
    extra += list(turn.extra)
    kept = tuple((k, v) for k, v in extra if v)
    nodes = []
    for position, message in enumerate(turn.messages):
        node_id = f"{turn.id}.{position}"
        nodes.append(
            Node(
                id=node_id,
                parent_id=parent,
                role=_ROLES.get(message.role, Role.NOTE),
                parts=(Part(PartKind.TEXT, message.text),),
                time_raw=turn.timestamp.isoformat(),
                instant=turn.timestamp,
                speaker=message.speaker,
                source_turn=turn.id,
                extra=kept,
            )
        )
        parent = node_id
    return nodes


def read(source: Source) -> Iterator[ImportedConversation]:
    """The session in one transcript file (nothing when it holds no complete turn)."""
    with source.open() as stream:
        data = stream.read()
    try:
        text = data.decode("utf-8")  # bytes as written: \r\n inside messages survives
    except UnicodeDecodeError as exc:
        raise ImportFormatError(f"{source.label}: not UTF-8 text; expected {EXPECTED}") from exc
    name = PurePosixPath(source.label.rsplit(":", 1)[-1]).stem
    parsed = TurnChunker.parse(text, source.label, fallback_session=name.removeprefix("chat_"))
    order: list[Node] = []
    for turn in parsed.turns:
        order += _nodes(turn, order[-1].id if order else None)
    first = parsed.turns[0] if parsed.turns else None
    head = Header(
        source=SourceFormat.HUICHAT,
        conversation_id=parsed.session_id,
        title=first.topic if first else "",
        origin=source.label,
        created=SourceTime(first.timestamp.isoformat(), first.timestamp) if first else None,
        updated=None,
        fallback_time=source.modified,
    )
    yield assemble(head, order, None, linear=True)

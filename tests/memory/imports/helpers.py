"""Shared helpers for the import tests: fixture paths, reading everything, SQLite fixtures."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from huichat.memory.imports.model import ImportedConversation, ImportedMessage, Part, PartKind, SourceFormat
from huichat.memory.imports.reader import ImportReader

FIXTURES = Path(__file__).parent / "fixtures"


def read_all(path: Path, fmt: SourceFormat | None = None) -> dict[str, ImportedConversation]:
    """Every conversation under ``path``, by conversation id."""
    return {c.conversation_id: c for c in ImportReader([path], fmt).conversations()}


def database(tmp_path: Path, name: str) -> Path:
    """A SQLite file built from ``fixtures/sqlite/<name>.sql``."""
    path = tmp_path / f"{name}.db"
    connection = sqlite3.connect(path)
    connection.executescript((FIXTURES / "sqlite" / f"{name}.sql").read_text(encoding="utf-8"))
    connection.commit()
    connection.close()
    return path


def ids(messages: tuple[ImportedMessage, ...]) -> list[str]:
    """The source ids of ``messages``."""
    return [m.id for m in messages]


def parts(message: ImportedMessage, kind: PartKind) -> list[Part]:
    """The parts of one kind."""
    return [p for p in message.parts if p.kind is kind]


def message(conversation: ImportedConversation, message_id: str) -> ImportedMessage:
    """A message of the visible branch or an alternative, by id."""
    everything = [*conversation.messages, *(m for b in conversation.alternatives for m in b.messages)]
    return next(m for m in everything if m.id == message_id)

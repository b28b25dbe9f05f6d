"""Helpers for the import/export tests: every format's fixture, what is stored, a canonical form."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from huichat.memory.imports.model import ImportedConversation
from huichat.memory.imports.stored import SessionLocator, restore
from tests.memory.imports.helpers import FIXTURES, database

SOURCES = ("chatgpt", "claude", "deepseek", "deepseek-web", "jsonl", "elia", "llm", "llm-legacy")


def source_path(tmp_path: Path, name: str) -> Path:
    """The fixture of one format (SQLite ones are built in ``tmp_path``)."""
    files = {
        "chatgpt": FIXTURES / "chatgpt" / "conversations.json",
        "claude": FIXTURES / "claude" / "conversations.json",
        "deepseek": FIXTURES / "deepseek" / "conversations.json",
        "deepseek-web": FIXTURES / "deepseek" / "web_session.json",
        "jsonl": FIXTURES / "chat.jsonl",
    }
    if name in files:
        return files[name]
    return database(tmp_path, {"elia": "elia", "llm": "llm_032", "llm-legacy": "llm_legacy"}[name])


def stored_conversations(root: Path) -> list[ImportedConversation]:
    """Every session under ``root`` read back as the conversation it holds (an import record that an
    import killed inside its first line left holds none: the import run again takes its place)."""
    locator = SessionLocator(root / "sessions")
    return [restore(locator.load(f), f) for f in locator.session_files() if not locator.abandoned(f)]


def canonical(conversation: ImportedConversation) -> tuple[Any, ...]:
    """Everything that must survive storing, exporting and importing again.

    Every message (visible and in other branches) with its id, parent, role, speaker, model,
    parts (kind, text and details) and time (raw value, instant, estimated flag); which branch
    is visible, where each other branch hangs; the hidden nodes; the conversation's identity,
    title and times. Only the origin (which file it was last read from) and notes may differ.
    """
    return (
        conversation.source,
        conversation.conversation_id,
        conversation.title,
        conversation.created,
        conversation.updated,
        conversation.model,
        conversation.branch_heuristic,
        conversation.extra,
        conversation.messages,
        conversation.alternatives,
        conversation.skipped,
    )

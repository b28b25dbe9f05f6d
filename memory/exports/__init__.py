"""Giving memory back out in open formats (``huichat export``): Markdown, JSONL and ChatGPT's.

Read from the transcripts and import records — the source of truth — never from the index.
"""

from enum import StrEnum


class ExportFormat(StrEnum):
    """The formats ``huichat export`` writes."""

    MARKDOWN = "markdown"
    """One readable file per session, in a folder."""
    JSONL = "jsonl"
    """Every field of every turn and the import records: imports back without loss."""
    CHATGPT = "chatgpt"
    """A ``conversations.json`` as ChatGPT's export writes it, for other tools."""

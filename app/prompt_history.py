"""The prompts the user sent, kept across sessions for ↑ and ctrl+r (like a shell's history)."""

from __future__ import annotations

import json
import logging
import os
from collections.abc import Iterable
from pathlib import Path

_log = logging.getLogger(__name__)
LIMIT = 1000
"""Prompts kept; the oldest go first."""
FILE_NAME = "prompt_history.jsonl"
"""The file in the data folder."""


class PromptHistory:
    """A JSON-lines file of sent prompts, oldest first, private to the user (0600).

    A damaged line is skipped, never fatal: history is a convenience, the transcripts are the truth.
    """

    def __init__(self, path: Path, limit: int = LIMIT) -> None:
        self.path = path
        self.limit = limit
        self.entries: list[str] = self._read()

    def _read(self) -> list[str]:
        try:
            lines = self.path.read_text(encoding="utf-8").splitlines()
        except FileNotFoundError:
            return []
        except OSError as exc:
            _log.warning("prompt history unreadable: %s", exc)
            return []
        entries = []
        for line in lines:
            try:
                text = json.loads(line)
            except ValueError:
                continue
            if isinstance(text, str) and text.strip():
                entries.append(text)
        return entries[-self.limit :]

    def add(self, text: str) -> None:
        """Remember ``text`` as the newest prompt (an exact repeat moves to the end)."""
        if not text.strip():
            return
        repeated = text in self.entries
        if repeated:
            self.entries.remove(text)
        self.entries.append(text)
        trimmed = len(self.entries) > self.limit
        del self.entries[: -self.limit]
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            if repeated or trimmed:  # the file is rewritten only when a line must go
                self._rewrite()
            else:
                self._append(text)
        except OSError as exc:
            _log.warning("prompt history not saved: %s", exc)

    def drop(self, texts: Iterable[str]) -> int:
        """Remove every prompt that is, or holds, one of ``texts`` (a purged turn's messages); how many went."""
        gone = [t for t in texts if t.strip()]
        kept = [entry for entry in self.entries if not any(text == entry or text in entry for text in gone)]
        dropped = len(self.entries) - len(kept)
        if dropped:
            self.entries = kept
            self._rewrite()
        return dropped

    def _open(self, flags: int) -> int:
        return os.open(self.path, os.O_WRONLY | os.O_CREAT | flags, 0o600)

    def _append(self, text: str) -> None:
        with os.fdopen(self._open(os.O_APPEND), "a", encoding="utf-8") as file:
            file.write(json.dumps(text, ensure_ascii=False) + "\n")

    def _rewrite(self) -> None:
        with os.fdopen(self._open(os.O_TRUNC), "w", encoding="utf-8") as file:
            file.writelines(json.dumps(entry, ensure_ascii=False) + "\n" for entry in self.entries)

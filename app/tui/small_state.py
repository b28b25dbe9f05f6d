"""Small things the chat keeps across restarts in the data folder: each a JSON file, written whole
(a reader never sees half of one), private to the user (0600, whatever the umask), and never
fatal to read or write: a nicety lost is logged."""

from __future__ import annotations

import json
import logging
import os
from pathlib import Path

_log = logging.getLogger(__name__)


def read_state(path: Path, what: str) -> object | None:
    """``path``'s JSON; None when there is none or it cannot be read (``what`` names it in the log)."""
    try:
        value: object = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return None
    except (OSError, ValueError) as exc:
        _log.warning("the saved %s is unreadable: %s", what, exc)
        return None
    return value


def write_state(path: Path, value: object, what: str) -> None:
    """Write ``value`` as ``path``'s JSON whole; None removes the file."""
    try:
        if value is None:
            path.unlink(missing_ok=True)
            return
        path.parent.mkdir(parents=True, exist_ok=True)
        temporary = path.with_suffix(".tmp")
        temporary.unlink(missing_ok=True)  # one left by a crash may have been made before 0600
        descriptor = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(descriptor, "w", encoding="utf-8") as file:
            file.write(json.dumps(value, ensure_ascii=False))
        temporary.replace(path)
    except OSError as exc:
        _log.warning("the %s was not saved: %s", what, exc)


class LastSession:
    """``<data>/last-session.json``: the session the chat showed last, which the next start continues
    ("where you left off": a session opened to read is that place too, not only the last one written)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._saved: str | None = None
        self._shown = False
        """Whether this window has shown a session, or a new one after another: until then (memory still
        loading, or unavailable) it has no place of its own to save as it closes."""

    def session_id(self) -> str | None:
        """The session shown when the chat last closed (None: a new, empty one, or none saved)."""
        saved = read_state(self.path, "last session")
        found = saved.get("session_id") if isinstance(saved, dict) else None
        self._saved = found if isinstance(found, str) and found else None
        return self._saved

    def save(self, session_id: str | None, *, closing: bool = False) -> None:
        """Remember ``session_id`` as the one shown now (written only when it changed, and again as the
        chat closes: with two windows open, the one closed last is where the next start goes back to).
        A window that has shown nothing yet writes nothing as it closes: what was saved stays."""
        changed = session_id != self._saved
        if closing and not self._shown:
            return
        self._shown = self._shown or changed or session_id is not None
        if changed or closing:
            self._saved = session_id
            write_state(self.path, {"session_id": session_id} if session_id else None, "last session")


class PromptDraft:
    """``<data>/draft.json``: what the prompt held unsent when the chat closed, and the session it was
    typed in (None: a new one). It comes back only where it was typed: the next start that shows that
    session (continued, or ``--session``), or a new one for a draft typed in a new one. Elsewhere it is
    not shown and stays on file for its own session. It is the user's own text, kept like the prompt
    history: in the data folder only, private to the user, never logged."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._taken = False
        """This window put the draft back: it is the window's own now, sent, kept or cleared."""

    def take(self, session_id: str | None) -> str:
        """The draft typed in ``session_id``, to put back in the prompt ('' when there is none)."""
        saved = read_state(self.path, "draft")
        if not isinstance(saved, dict) or saved.get("session_id") != session_id:
            return ""
        text = saved.get("text")
        if not isinstance(text, str) or not text.strip():
            return ""
        self._taken = True
        return text

    def save(self, session_id: str | None, text: str) -> None:
        """As the chat closes: keep ``text`` for ``session_id``; with nothing unsent, no draft is left
        of this window's (one of another session's that it never showed stays)."""
        if text.strip():
            write_state(self.path, {"session_id": session_id, "text": text}, "draft")
            return
        saved = read_state(self.path, "draft")
        if self._taken or (isinstance(saved, dict) and saved.get("session_id") == session_id):
            write_state(self.path, None, "draft")

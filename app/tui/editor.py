"""Writing the prompt in the user's own editor ($VISUAL, then $EDITOR), with the app suspended."""

from __future__ import annotations

import os
import shlex
import subprocess
import tempfile
from collections.abc import Mapping
from pathlib import Path

from textual.app import App, SuspendNotSupported


class EditorError(Exception):
    """Why the editor could not be used, in one line (the prompt keeps its text)."""


def editor_command(env: Mapping[str, str]) -> list[str]:
    """``$VISUAL``, else ``$EDITOR``, else ``vi``, split as a shell would (``code --wait`` works)."""
    chosen = env.get("VISUAL", "").strip() or env.get("EDITOR", "").strip() or "vi"
    try:
        return shlex.split(chosen)
    except ValueError as exc:
        raise EditorError(f"cannot read the editor command {chosen!r}: {exc}") from None


def edit(app: App[object], text: str, env: Mapping[str, str] | None = None) -> str:
    """``text`` after the user edited it in their editor; the draft file is removed afterwards.

    Raises ``EditorError`` when the terminal cannot be handed over or the editor fails.
    """
    command = editor_command(os.environ if env is None else env)
    descriptor, name = tempfile.mkstemp(prefix="huichat-prompt-", suffix=".md")  # 0600: a draft is private
    draft = Path(name)
    try:
        with os.fdopen(descriptor, "w", encoding="utf-8") as file:
            file.write(text)
        try:
            with app.suspend():
                finished = subprocess.run([*command, str(draft)], check=False)
        except SuspendNotSupported:
            raise EditorError("this terminal cannot hand the screen to an editor") from None
        except OSError as exc:
            raise EditorError(f"cannot start {command[0]}: {exc.strerror or exc}") from None
        if finished.returncode != 0:
            raise EditorError(f"{command[0]} exited with status {finished.returncode}; the prompt is unchanged")
        return draft.read_text(encoding="utf-8").removesuffix("\n")
    finally:
        draft.unlink(missing_ok=True)

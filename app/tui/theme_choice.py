"""The theme picked in the palette, kept across restarts (the config's ``ui.theme`` is the default)."""

from __future__ import annotations

import json
import logging
from pathlib import Path

_log = logging.getLogger(__name__)


class ThemeChoice:
    """``<data>/theme.json``: the theme last picked and the config's theme at that moment.

    A theme picked in the palette wins over ``ui.theme`` until the config's value changes:
    an edit of the config is a newer choice than the last pick.
    """

    def __init__(self, path: Path, configured: str) -> None:
        self.path = path
        self.configured = configured

    def theme(self) -> str:
        """The theme to start with."""
        try:
            saved = json.loads(self.path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return self.configured
        except (OSError, ValueError) as exc:
            _log.warning("the saved theme is unreadable: %s", exc)
            return self.configured
        if not isinstance(saved, dict) or saved.get("configured") != self.configured:
            return self.configured
        picked = saved.get("theme")
        return picked if isinstance(picked, str) and picked else self.configured

    def save(self, theme: str) -> None:
        """Remember ``theme`` as picked now (never fatal: a theme is a nicety)."""
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            temporary = self.path.with_suffix(".tmp")
            temporary.write_text(json.dumps({"theme": theme, "configured": self.configured}), encoding="utf-8")
            temporary.replace(self.path)
        except OSError as exc:
            _log.warning("the theme was not saved: %s", exc)

"""The theme picked in the palette, kept across restarts (the config's ``ui.theme`` is the default)."""

from __future__ import annotations

from pathlib import Path

from huichat.app.tui.small_state import read_state, write_state


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
        saved = read_state(self.path, "theme")
        if not isinstance(saved, dict) or saved.get("configured") != self.configured:
            return self.configured
        picked = saved.get("theme")
        return picked if isinstance(picked, str) and picked else self.configured

    def save(self, theme: str) -> None:
        """Remember ``theme`` as picked now (never fatal: a theme is a nicety)."""
        write_state(self.path, {"theme": theme, "configured": self.configured}, "theme")

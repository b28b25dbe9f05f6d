"""Every key binding is in the README's key table and in F1's, under the same name."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from textual.binding import Binding

from huichat.app.tui.app import HuichatApp
from huichat.app.tui.screens.ask_path import AskPathScreen
from huichat.app.tui.screens.chat import ChatScreen
from huichat.app.tui.screens.help import HELP, HelpScreen
from huichat.app.tui.screens.import_history import ImportHistoryScreen
from huichat.app.tui.screens.picker import PickerScreen
from huichat.app.tui.screens.search import ResultsPanel, SearchScreen
from huichat.app.tui.screens.stats import StatsScreen
from huichat.app.tui.screens.turn_detail import TurnDetailScreen
from huichat.app.tui.widgets.chat_message import ChatMessage
from huichat.app.tui.widgets.memory_panel import MemoryPanel
from huichat.app.tui.widgets.prompt_input import PromptInput

README = Path(__file__).resolve().parents[2] / "README.md"
OWNERS = (
    HuichatApp,
    ChatScreen,
    ChatMessage,
    PromptInput,
    MemoryPanel,
    ResultsPanel,
    SearchScreen,
    TurnDetailScreen,
    StatsScreen,
    HelpScreen,
    PickerScreen,
    AskPathScreen,
    ImportHistoryScreen,
)
SHOWN = {
    "slash": "/",
    "question_mark": "?",
    "escape": "Esc",
    "up": "↑",
    "down": "↓",
    "left": "←",
    "right": "→",
    "home": "Home",
    "enter": "Enter",
    "plus": "+",
    "equals_sign": "=",
    "delete": "Del",
}


def shown(key: str) -> str:
    """A key as the tables write it: ``F2``, ``Esc``, ``↑``, ``ctrl+f``."""
    if re.fullmatch(r"f\d+", key):
        return key.upper()
    return SHOWN.get(key, key)


def documented_keys(table: str) -> set[str]:
    """The keys named in the first column of a Markdown table."""
    keys: set[str] = set()
    for line in table.splitlines():
        if line.startswith("|") and not line.startswith("|---"):
            first = re.sub(r"\([^)]*\)", "", line.split("|")[1])  # (where it applies) is not a key
            separated = True  # a "/" after a key separates keys; anywhere else it is the / key
            for token in first.replace("`", "").split():
                if token == "/" and not separated:
                    separated = True
                else:
                    keys.add(token)
                    separated = False
    return keys


def every_binding() -> set[str]:
    keys = set()
    for owner in OWNERS:
        for binding in owner.BINDINGS:
            assert isinstance(binding, Binding)
            keys.update(shown(key) for key in binding.key.split(","))
    return keys


def readme_keys() -> set[str]:
    text = README.read_text(encoding="utf-8")
    section = text.split("## Using it", 1)[1].split("\n## ", 1)[0]
    return documented_keys(section)


@pytest.mark.parametrize("where", ["README", "F1"])
def test_every_binding_is_in_the_key_table(where: str) -> None:
    documented = readme_keys() if where == "README" else documented_keys(HELP)
    assert sorted(every_binding() - documented) == []


def test_f1_and_the_readme_name_the_same_keys() -> None:
    assert readme_keys() == documented_keys(HELP)

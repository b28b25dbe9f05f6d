"""A list to choose from, filtered as the user types (past sessions, past prompts)."""

from __future__ import annotations

from dataclasses import dataclass

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import Footer, Input, Label, OptionList
from textual.widgets.option_list import Option


@dataclass(frozen=True)
class Choice:
    """One row: what is returned, what is shown, and the text the filter looks in."""

    value: str
    label: str
    words: str
    name: str = ""
    """What the row is called (a session's title): a filter that matches it puts the row first."""

    def rank(self, typed: str) -> int | None:
        """Where the row goes for the filter ``typed`` (lower first), None when some word is not in it.

        The name typed whole (or the value: an id), then a name that begins so, then every word
        in the name, then in what the row shows; last, rows matched only by text it does not
        show (a session's id): a short number typed is more likely in a title than in an id.
        """
        words = typed.casefold().split()
        if not all(w in self.words.casefold() for w in words):
            return None
        phrase, name = " ".join(words), " ".join(self.name.casefold().split())
        if phrase and phrase in (name, self.value.casefold()):
            return 0
        if phrase and name.startswith(phrase):
            return 1
        if all(w in name for w in words):
            return 2
        return 3 if all(w in self.label.casefold() for w in words) else 4


class PickerScreen(ModalScreen[str | None]):
    """Type to filter (every word must appear, any case; the best matches first, or with ``ranked``
    false the matches in the order given), ↑ ↓ to move, Enter to choose, Esc to close."""

    BINDINGS = [
        Binding("escape", "dismiss(None)", "Close"),
        Binding("down", "move(1)", "Next", show=False, priority=True),
        Binding("up", "move(-1)", "Previous", show=False, priority=True),
    ]

    def __init__(
        self, title: str, choices: list[Choice], *, empty: str, current: str | None = None, ranked: bool = True
    ) -> None:
        super().__init__(classes="picker")
        self.title_text = title
        self.choices = choices
        self.empty = empty
        self.current = current
        self.ranked = ranked
        """Whether the best matches go first (``Choice.rank``); False keeps the order given among the
        matches (the prompt history: the newest matching prompt first, as in a shell)."""
        self.shown: list[Choice] = choices

    def compose(self) -> ComposeResult:
        with Vertical(id="picker"):
            yield Label(f"{self.title_text} ({len(self.choices)})", classes="title")
            yield Input(placeholder="type to filter", id="filter")
            yield OptionList(id="choices")
            yield Label(self.empty, id="empty")
            yield Footer()

    @property
    def options(self) -> OptionList:
        return self.query_one("#choices", OptionList)

    def on_mount(self) -> None:
        self.show(self.choices)
        values = [c.value for c in self.choices]
        if self.current in values:
            self.options.highlighted = values.index(self.current)

    def show(self, choices: list[Choice]) -> None:
        """Fill the list with ``choices``, the first one highlighted."""
        self.shown = choices
        # rows are what was said ("what does [/INST] mean?"): plain text, never markup
        self.options.set_options(Option(Content(c.label), id=str(i)) for i, c in enumerate(choices))
        self.options.highlighted = 0 if choices else None
        self.query_one("#empty", Label).display = not choices

    @on(Input.Changed, "#filter")
    def _filter(self, event: Input.Changed) -> None:
        matches = [(rank, c) for c in self.choices if (rank := c.rank(event.value)) is not None]
        if self.ranked:
            matches.sort(key=lambda pair: pair[0])  # stable: recent first within a rank
        self.show([c for _, c in matches])

    def action_move(self, step: int) -> None:
        """↑ ↓ move through the list while typing stays in the filter."""
        options = self.options
        if self.shown:
            options.highlighted = max(0, min(len(self.shown) - 1, (options.highlighted or 0) + step))

    @on(Input.Submitted, "#filter")
    def _choose_highlighted(self) -> None:
        index = self.options.highlighted
        if index is not None and self.shown:
            self.dismiss(self.shown[index].value)

    @on(OptionList.OptionSelected, "#choices")
    def _chosen(self, event: OptionList.OptionSelected) -> None:
        self.dismiss(self.shown[int(event.option.id or 0)].value)

"""Every key binding, in one place."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Markdown

HELP = """\
# huichat keys

| key | where | what |
|---|---|---|
| Enter | prompt | send the message |
| ctrl+j / alt+enter | prompt | new line |
| ctrl+f, / | chat | search memory |
| F2 | chat | show or hide the memory panel |
| tab / shift+tab | anywhere | move focus (prompt → transcript → memory panel) |
| ↑ ↓ | memory panel, search | move through recalled turns |
| Enter / click | memory panel, search | open the turn |
| p / ← | turn view | previous turn of the session |
| n / → | turn view | next turn of the session |
| h / Home | turn view | back to the recalled hit |
| Esc / q | turn view, dialogs | close |
| ctrl+n | chat | new session |
| ctrl+o | chat | reopen a past session |
| ctrl+r | chat | retry the last failed reply |
| ctrl+p | anywhere | command palette: switch provider, theme, reindex, … |
| F1, ? | anywhere | this help |
| ctrl+q | anywhere | quit |

Time words in searches are understood: 上周三下午, 前段时间, last week, a while ago.
"""


class HelpScreen(ModalScreen[None]):
    """The help text; any of Esc, q, F1 closes it."""

    BINDINGS = [Binding("escape,q,f1,question_mark", "dismiss", "Close")]

    def compose(self) -> ComposeResult:
        with VerticalScroll(id="help"):
            yield Markdown(HELP)

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
| ctrl+j / alt+enter / shift+enter | prompt | new line |
| ctrl+l | prompt | clear it, however long (ctrl+z brings it back) |
| ↑ ↓ | prompt, empty or showing a past prompt | earlier / later prompts you sent (kept across sessions) |
| ↑ ↓ | prompt (at its first / last line) | move into the open memory panel |
| ctrl+r | chat | search the prompts you sent; Enter puts one in the prompt |
| ctrl+g | chat | write the prompt in $VISUAL / $EDITOR; the text comes back |
| ctrl+up | chat | into the conversation, on its last message (also ↑ from the prompt's first line) |
| ↑ ↓ | a message | the previous / next message (past the last: the prompt; past the first or last turn shown of a long session: 40 more) |
| c | a message | copy it (to the clipboard, over ssh too) |
| b | a message | copy its code block (again: the next one) |
| ctrl+f | chat | search memory yourself |
| / | chat, outside the prompt | search memory |
| F2 | chat | open the memory panel and move into it; inside it, close it |
| ↑ ↓ | memory panel, search results | move through recalled turns |
| Enter | memory panel, search results | open the turn (a click too) |
| + / = | memory panel | show or hide the near-duplicates of a "+N similar" turn |
| x | memory panel, turn view | forget the turn: it leaves search, recall and the model's context (palette: Undo forget) |
| e | memory panel, turn view | attach a correction to the turn (recalled with it) |
| Esc | chat | back to the prompt |
| Esc / ctrl+c | chat, while a reply streams | stop it: what arrived is kept, marked stopped |
| ↓ | search box | into the results (typing goes back to the box) |
| ctrl+t | search | include or leave out failed replies |
| Del / ctrl+e | search results | forget the turn / attach a correction (letters there type into the search box) |
| Esc | search | back to the chat |
| p / ← | turn view | previous turn of the session |
| n / → | turn view | next turn of the session |
| h / Home | turn view | back to the recalled hit |
| o | turn view | open its conversation in the chat, on this turn (a message sent there continues the conversation's end) |
| Esc / q | turn view, statistics, this help | close (dialogs and lists: Esc) |
| ctrl+n | chat | new session |
| ctrl+o | chat | reopen a past session (type to filter; the current one is marked ▶) |
| F4 | chat | ask the last (or the focused) message again: a new branch, the earlier reply kept beside it |
| e | a message | edit your message in the prompt; Enter sends it as a new branch there (Esc cancels) |
| r | a message | ask its reply again, as a new branch |
| ← → | a message marked ‹ n/m › | the branch before / after it (the model's context follows) |
| F3 | anywhere | memory statistics: tiers, importance, turns per week, recent recalls |
| r | statistics | refresh (Enter on a recent recall opens it) |
| ctrl+p | anywhere | command palette: switch provider, theme, export the session, copy the last reply or code block, reindex, statistics, memory jobs, … |
| F1 / ? | anywhere (? outside the prompt) | this help |
| ctrl+q | anywhere | quit |

Time words in searches are understood: 上周三下午, 前段时间, last week, a while ago.
"""


class HelpScreen(ModalScreen[None]):
    """The help text; any of Esc, q, F1 closes it."""

    BINDINGS = [Binding("escape,q,f1,question_mark", "dismiss", "Close")]

    def compose(self) -> ComposeResult:
        with VerticalScroll(id="help"):
            yield Markdown(HELP)

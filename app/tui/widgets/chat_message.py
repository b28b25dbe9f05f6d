"""One message in the transcript: the speaker's label over Markdown that can be streamed."""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.message import Message as Event
from textual.reactive import reactive
from textual.widgets import Label, Static

if TYPE_CHECKING:
    from markdown_it import MarkdownIt
    from textual.widgets._markdown import MarkdownStream

    from huichat.memory.turns import Message, Turn


def call_label(name: str, arguments: dict[str, Any]) -> str:
    """The small note shown above an answer for each memory tool the model called."""
    shown = ", ".join(f"{k}={v!r}" for k, v in arguments.items() if v not in (None, ""))
    return f"🔎 {name}({shown})"


def tool_lines(messages: Iterable[Message]) -> list[str]:
    """The tool calls recorded in a stored turn, as they were shown live."""
    lines = []
    for message in messages:
        if message.kind != "tool_call":
            continue
        # the transcript records a call as ``name {arguments}`` (older turns: the arguments alone)
        name, _, rest = message.text.partition(" ")
        written = rest if name == message.speaker else message.text
        try:
            arguments = json.loads(written)
        except ValueError:
            arguments = None
        if isinstance(arguments, dict):
            lines.append(call_label(message.speaker, arguments))
        else:
            lines.append(f"🔎 {message.speaker}({written[:80]})")
    return lines


def kept_line_breaks() -> MarkdownIt:
    """Textual's parser, reading a single line break as a line break (not as a space)."""
    from markdown_it import MarkdownIt
    from markdown_it.rules_core import StateCore

    def hard_breaks(state: StateCore) -> None:
        for token in state.tokens:
            for child in token.children or ():
                if child.type == "softbreak":
                    child.type = "hardbreak"

    parser = MarkdownIt("gfm-like")
    parser.core.ruler.push("kept_line_breaks", hard_breaks)
    return parser


def code_blocks(text: str) -> list[str]:
    """The code blocks of a Markdown text, in order (read by markdown-it, as the screen renders them)."""
    from markdown_it import MarkdownIt

    return [token.content for token in MarkdownIt().parse(text) if token.type in ("fence", "code_block")]


class ChatMessage(Vertical, can_focus=True):
    """A user, assistant or system message. ``state`` drives the look through TCSS classes.

    Above the body sit the memory tools the model called for it (they led to the answer);
    below it, a note about the message itself (waiting, failed, how to retry). Focused
    (↑ out of the prompt), ``c`` copies it and ``b`` its code blocks, one after another; ``e``
    edits the turn's message to send it again and ``r`` asks its reply again, each as a new
    branch; ← → switch to the branch beside (the label shows ‹ n/m › where there is one).
    """

    BINDINGS = [
        Binding("c", "copy", "Copy"),
        Binding("b", "copy_code", "Copy code"),
        Binding("e", "edit", "Edit & resend"),
        Binding("r", "regenerate", "Regenerate"),
        Binding("left", "branch(-1)", "Branch ‹", show=False),
        Binding("right", "branch(1)", "Branch ›", show=False),
        Binding("up", "step(-1)", "Previous", show=False),
        Binding("down", "step(1)", "Next", show=False),
    ]

    @dataclass
    class CopyRequested(Event):
        """Put ``text`` on the clipboard; ``what`` says what it is (for the confirmation)."""

        text: str
        what: str

    @dataclass
    class StepRequested(Event):
        """Move the focus to the message ``step`` away (past the last one: the prompt)."""

        message: ChatMessage
        step: int

    @dataclass
    class TurnAction(Event):
        """Do ``action`` to this message's turn: ``edit`` (its message into the prompt, to send as a
        new branch), ``regenerate`` (its reply asked again) or ``branch`` (``step`` branches over)."""

        message: ChatMessage
        action: str
        step: int = 0

    state: reactive[str] = reactive("done")
    """``streaming``, ``done``, ``failed``, ``stopped`` or ``waiting``."""

    def __init__(self, role: str, text: str = "", *, label: str = "", note: str = "", tools: str = "") -> None:
        super().__init__(classes=f"-{role}")
        self.role = role
        self._text = text
        self._label = label or role
        self._note = note
        self._tools = [line for line in tools.splitlines() if line]
        self._stream: MarkdownStream | None = None
        self.chunks: list[str] = [text] if text else []
        self._next_block = 0
        self.turn_id: str | None = None
        """The stored turn the message belongs to (None: not stored, or huichat's own note)."""

    @classmethod
    def for_turn(cls, turn: Turn) -> list[ChatMessage]:
        """A stored turn as it looked live: the user's message, then the answer with its tool calls."""
        from huichat.memory.turns import STATUS_OK, STOPPED  # memory is open once there are stored turns

        user = [m for m in turn.messages if m.is_chat and m.role == "user"]
        said = [m for m in turn.messages if m.is_chat and m.role != "user"]
        widgets = [cls("user", m.text, label=m.speaker or "you") for m in user]
        tools = "\n".join(tool_lines(turn.messages))
        if said or tools:
            # as live: the provider that answered (kept with the turn since), else who the import names
            speaker = (
                dict(turn.extra).get("provider") or next((m.speaker for m in said if m.speaker), "") or "assistant"
            )
            widgets.append(cls("assistant", "\n\n".join(m.text for m in said), label=speaker, tools=tools))
        if turn.status != STATUS_OK and widgets:
            widgets[-1].add_class("-failed")
            error = dict(turn.extra).get("error", "")
            # as the live reply said it: a stopped or failed answer stays marked when the session is opened again
            widgets[-1]._note = (
                "■ stopped — F4 asks again" if error == STOPPED else f"⚠ {error or 'no reply'} — F4 retries"
            )
        for widget in widgets:
            widget.turn_id = turn.id
        return widgets

    def compose(self) -> ComposeResult:
        # what a speaker, a model's tool call or an error said is text, never markup ("[/INST]" raised)
        yield Label(self._label, classes="label", markup=False)
        yield Static("\n".join(self._tools), classes="tools", markup=False)
        if self.role == "system":
            # huichat's own notes (Rich markup): painted at start-up without loading markdown-it
            yield Static(self._text, classes="body")
        elif self.role == "user":
            # what a person wrote, as written: Markdown joined its lines, dropped the indentation
            # of pasted code and made "# …" a heading and "* …" a bullet
            yield Static(self._text, classes="body", markup=False)
        else:
            from textual.widgets import Markdown  # markdown-it loads with the first message, not with the app

            yield Markdown(self._text, classes="body")
        yield Static(self._note, classes="note", markup=False)

    def on_mount(self) -> None:
        self.set_class(bool(self._note), "-has-note")
        self.set_class(bool(self._tools), "-has-tools")

    def watch_state(self, old: str, new: str) -> None:
        self.remove_class(f"-{old}")
        self.add_class(f"-{new}")

    @property
    def text(self) -> str:
        """Everything written so far."""
        return "".join(self.chunks)

    async def append(self, fragment: str) -> None:
        """Stream more text into the body (only the new fragment is rendered)."""
        if not fragment:
            return
        self.chunks.append(fragment)
        if self._stream is None:
            from textual.widgets import Markdown

            self._stream = Markdown.get_stream(self.query_one(".body", Markdown))
        await self._stream.write(fragment)

    async def finish(self, state: str = "done") -> None:
        """Stop streaming and settle into ``state``."""
        if self._stream is not None:
            await self._stream.stop()
            self._stream = None
        self.state = state

    def action_copy(self) -> None:
        """``c``: the whole message as it was written (Markdown)."""
        self.post_message(self.CopyRequested(self.text, "the message"))

    def action_copy_code(self) -> None:
        """``b``: the message's code blocks, the first, then the next on each press."""
        blocks = code_blocks(self.text)
        if not blocks:
            self.notify("No code block in this message.", timeout=3)
            return
        index = self._next_block % len(blocks)
        self._next_block = index + 1
        what = "the code block" if len(blocks) == 1 else f"code block {index + 1} of {len(blocks)}"
        self.post_message(self.CopyRequested(blocks[index].removesuffix("\n"), what))

    def action_step(self, step: int) -> None:
        self.post_message(self.StepRequested(self, step))

    def action_edit(self) -> None:
        """``e``: this turn's message into the prompt; sending it starts a new branch here."""
        self.post_message(self.TurnAction(self, "edit"))

    def action_regenerate(self) -> None:
        """``r``: ask this turn's message again; the new reply is a new branch beside this one."""
        self.post_message(self.TurnAction(self, "regenerate"))

    def action_branch(self, step: int) -> None:
        """← →: the branch before or after this one, where the conversation branched here."""
        self.post_message(self.TurnAction(self, "branch", step))

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action in ("edit", "regenerate", "branch"):
            return self.turn_id is not None  # huichat's own notes and unsent messages have no turn
        return True

    def set_branch(self, position: int, count: int) -> None:
        """Show where this turn is among the branches beside it (‹ 2/3 ›; nothing when alone)."""
        shown = f"{self._label}  ‹ {position}/{count} ›" if count > 1 else self._label
        self.query_one(".label", Label).update(shown)

    def add_tool_note(self, line: str) -> None:
        """One memory tool call, shown above the answer it led to."""
        self._tools.append(line)
        self.query_one(".tools", Static).update("\n".join(self._tools))
        self.add_class("-has-tools")

    def set_note(self, note: str) -> None:
        """A small line under the message (waiting, errors, the retry hint)."""
        self._note = note
        self.query_one(".note", Static).update(note)
        self.set_class(bool(note), "-has-note")


class MoreTurns(Static, can_focus=True):
    """A line standing for a long session's turns not shown yet (``EarlierTurns``, ``LaterTurns``): Enter or
    a click shows the next of them."""

    BINDINGS = [Binding("enter", "want", "Show more turns")]

    @dataclass
    class Wanted(Event):
        """Show the turns ``marker`` stands for."""

        marker: MoreTurns

    count: reactive[int] = reactive(0)

    def __init__(self, count: int) -> None:
        super().__init__()
        self.set_reactive(MoreTurns.count, count)

    def action_want(self) -> None:
        self.post_message(self.Wanted(self))

    def on_click(self) -> None:
        self.post_message(self.Wanted(self))


class EarlierTurns(MoreTurns):
    """Above a long session's last turns: how many earlier turns are not shown yet. Enter, a click, or
    ↑ on the first message shown (``ChatScreen``) shows the next ones."""

    def render(self) -> str:
        return f"▲ {self.count:,} earlier turn{'s' if self.count != 1 else ''} · Enter or ↑ shows more"


class LaterTurns(MoreTurns):
    """Below a session opened on an earlier turn (``o`` in the turn view): how many later turns are not
    shown yet. Enter, a click, or ↓ on the last message shown shows the next ones; a message sent
    shows the conversation's end first."""

    def render(self) -> str:
        return f"▼ {self.count:,} later turn{'s' if self.count != 1 else ''} · Enter or ↓ shows more"

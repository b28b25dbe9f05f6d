"""One reply's tool rounds: what it produced so far, which calls repeat, and how calls and
results go back to the model."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from huichat.app.prompts import (
    ASK_NONE,
    MEMORY_NONE,
    MEMORY_NOTE,
    MEMORY_UNSURE,
    tool_response,
)
from huichat.app.tool_arguments import ArgumentError, read_arguments
from huichat.app.tools import ERROR_PREFIX, ToolOutcome
from huichat.memory.turns import Message
from huichat.providers.events import ReplyDone, ToolCallRequest, repair_text


@dataclass
class Progress:
    """What one reply has produced so far; kept in the turn even when the reply fails."""

    shown: list[str] = field(default_factory=list)
    recalled: list[str] = field(default_factory=list)
    trace: list[Message] = field(default_factory=list)
    rounds: int = 0
    model: str = ""
    provider: str = ""
    """The configured provider answering (its name: what the reply is labelled with on screen)."""
    storing: bool = False
    """The turn is being stored (a stop now must not store it a second time)."""

    @property
    def answer(self) -> str:
        return repair_text("".join(self.shown))

    def note(self, call: ToolCallRequest, outcome: ToolOutcome) -> None:
        """Record a call and its short result for the transcript, and the ids it recalled."""
        arguments = json.dumps(call.arguments, ensure_ascii=False) if not call.error else call.raw_arguments[:200]
        name = call.name or "tool"
        self.trace.append(Message("assistant", f"{call.name or '?'} {arguments}", name, "tool_call"))
        self.trace.append(Message("tool", outcome.trace or outcome.content[:200], name, "tool_result"))
        self.recalled.extend(i for i in outcome.recalled_ids if i not in self.recalled)


def call_key(call: ToolCallRequest) -> str:
    """What makes two calls the same call: the tool and its (checked) arguments."""
    if call.error:
        return f"{call.name}\x00{call.raw_arguments}"
    try:
        arguments = read_arguments(call.name, call.arguments).model_dump(exclude_none=True)
    except ArgumentError:
        arguments = dict(call.arguments)
    return call.name + json.dumps(arguments, sort_keys=True, ensure_ascii=False)


def _call_entry(call: ToolCallRequest) -> dict[str, Any]:
    arguments = json.dumps(call.arguments, ensure_ascii=False)
    return {"id": call.id, "type": "function", "function": {"name": call.name or "tool", "arguments": arguments}}


def round_messages(
    done: ReplyDone, said: str, answered: list[tuple[ToolCallRequest, ToolOutcome]], mode: str
) -> list[dict[str, Any]]:
    """The model's calls and their results, in the form its chat template was trained on.

    Calls it printed as text go back as structured ``tool_calls`` too (templates render
    them as their own call markup); results go back as ``tool`` messages, or with
    ``observation`` as one user message of ``<tool_response>`` blocks, as it printed them.
    """
    calls = [call for call, _ in answered]
    # "content" is never null: some OpenAI-compatible servers reject it
    assistant: dict[str, Any] = {
        "role": "assistant",
        "content": said,
        "tool_calls": [_call_entry(c) for c in calls],
    }
    if mode == "observation":
        if all(call.from_text for call in calls):
            assistant = {"role": "assistant", "content": done.text}
        return [assistant, {"role": "user", "content": tool_response([o.content for _, o in answered])}]
    return [assistant, *({"role": "tool", "tool_call_id": c.id, "content": o.content} for c, o in answered)]


_ECHO_LINES = (
    "[id:",
    "📁 ",
    "↳ 上下文，属于命中",
    "<tool_response>",
    ERROR_PREFIX,
    MEMORY_NOTE[:12],
    *(text[:12] for text in (*MEMORY_NONE.values(), *MEMORY_UNSURE.values())),
)
"""How the lines of a memory tool's result begin (the seed's format, a tool error, the chat
template's result tag) and those of the ``<memory>`` block; an answer never needs them."""
_TAGS = tuple(f"{opening}{end}memory{closing}" for opening in "<[" for end in ("", "/") for closing in ">]")
"""The ``<memory>`` block's tags at a line's start (also as Qwen2.5-Coder-0.5B misspells them: ``[memory]``,
``[memory>``): left out, and the rest of the line judged as a line (that model wraps its whole answer
in them, as its prompt's block is wrapped)."""
_RULE = "---"
_NOTE_LINES = ("[It is now ", "[现在是 ", ASK_NONE["en"][:24], ASK_NONE["zh"][:8])
"""How ``prompts.time_note`` and ``prompts.ASK_NONE`` begin: small models answer with the lines of their own prompt."""


class EchoCut:
    """Stops an answer where it starts copying a tool result (small models paste the result's
    blocks under their answer): from the first line that begins like a result line on, nothing
    is shown or stored; a ``---`` line right before it goes too. A copy of the prompt's time
    note is left out (that line and the blank lines after it); the answer goes on after it.

    Text streams through as it comes; only the start of a line that could still become a
    result line (``[id``, ``📁``, …) or a lone ``---`` is held back until it is clear.
    """

    def __init__(self) -> None:
        self._line = ""
        """The current line's start, held back while it could still be a result line or a rule."""
        self._rule = ""
        """A complete ``---`` line (and the newlines after it), held back until the next line is known."""
        self._deciding = True
        """At a line's start: its first characters decide whether it is shown."""
        self.cut = False
        """True once the answer has been cut."""
        self._note = False
        """Inside a copied time note: left out up to its line's end."""
        self._after_note = False
        """Right after a left-out time note or tag: blank lines go too."""
        self._after_tag = False
        """Right after a left-out tag: spaces go too."""

    def feed(self, text: str) -> str:
        """The part of ``text`` fit to show now."""
        shown: list[str] = []
        for char in text:
            if self.cut:
                break
            if self._note:
                self._note = char != "\n"
                self._after_note = self._deciding = not self._note
                continue
            if not self._deciding:  # the rest of a line already shown
                shown.append(char)
                self._deciding = char == "\n"
                continue
            self._line += char
            shown.append(self._settle())
        return "".join(shown)

    def finish(self) -> str:
        """What was still held back at the end of the answer."""
        if self.cut:
            return ""
        held = self._rule + self._line
        self._rule = self._line = ""
        return held.rstrip("\n") if held.strip() == _RULE else held

    def _settle(self) -> str:
        if self._after_tag:  # the spaces after a left-out tag go with it
            self._line = self._line.lstrip(" ")
            self._after_tag = not self._line
        line = self._line
        body = line.rstrip("\n")
        tag = next((tag for tag in _TAGS if body.startswith(tag)), None)
        if tag is not None:  # the tag goes; what follows it on the line starts a line of its own
            rest = line[len(tag) :]
            self._line = "" if rest.strip(" ") == "\n" else rest
            self._after_tag = self._after_note = True  # as after a left-out note: the blank lines go too
            return self._settle() if self._line else ""
        if not line:
            return ""
        if any(body.startswith(start) for start in _ECHO_LINES):
            self.cut = True
            self._line = self._rule = ""
            return ""
        if any(body.startswith(start) for start in _NOTE_LINES):
            self._note = not line.endswith("\n")
            self._after_note = self._deciding = not self._note
            self._line = ""
            return ""
        if self._after_note and line == "\n":
            self._line = ""
            return ""
        self._after_note = self._after_note and not body
        if line.endswith("\n"):
            if body.strip() == _RULE or (self._rule and not body.strip()):
                self._rule += line  # a rule (and the blank lines after it) waits for the next line
                self._line = ""
                return ""
            out, self._rule, self._line = self._rule + line, "", ""
            return out
        if any(start.startswith(body) for start in (*_ECHO_LINES, *_NOTE_LINES, *_TAGS)) or (
            body.strip() and _RULE.startswith(body.strip())
        ):
            return ""  # could still become a result line or a rule: hold
        out, self._rule, self._line = self._rule + line, "", ""
        self._deciding = False
        return out

"""One reply's tool rounds: what it produced so far, which calls repeat, and how calls and
results go back to the model."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from app.prompts import tool_response
from app.tools import ToolOutcome, check_arguments
from memory.turns import Message
from providers.events import ReplyDone, ToolCallRequest, repair_text


@dataclass
class Progress:
    """What one reply has produced so far; kept in the turn even when the reply fails."""

    shown: list[str] = field(default_factory=list)
    recalled: list[str] = field(default_factory=list)
    trace: list[Message] = field(default_factory=list)
    rounds: int = 0
    model: str = ""
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
    checked, problem = check_arguments(call.name, call.arguments)
    return call.name + json.dumps(call.arguments if problem else checked, sort_keys=True, ensure_ascii=False)


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

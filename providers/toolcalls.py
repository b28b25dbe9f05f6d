"""Assembling tool calls: streamed deltas into complete calls, and calls printed as text.

Local models often print a tool call as JSON (sometimes fenced, sometimes wrapped in
``<tool_call>`` tags) instead of making a structured call; ``calls_in_text`` recognises
those for the tools we offer.
"""

from __future__ import annotations

import json
import re
from collections.abc import Collection
from dataclasses import dataclass, field
from typing import Any

from providers.events import ToolCallRequest

_FENCE = re.compile(r"^```(?:json|tool_call|tool)?\s*\n?(.*?)\n?```$", re.DOTALL | re.IGNORECASE)
_TAGGED = re.compile(r"<tool_call>\s*(.*?)\s*</tool_call>", re.DOTALL | re.IGNORECASE)


@dataclass
class _Partial:
    id: str = ""
    name: str = ""
    arguments: list[str] = field(default_factory=list)


def parse_arguments(raw: str) -> tuple[dict[str, Any], str]:
    """Arguments JSON → dict, or an error message for the model."""
    text = raw.strip()
    if not text:
        return {}, ""
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        return {}, f"the tool arguments are not valid JSON ({exc.msg} at character {exc.pos})"
    if isinstance(value, str):  # some models double-encode
        return parse_arguments(value)
    if not isinstance(value, dict):
        return {}, "the tool arguments must be a JSON object"
    return value, ""


class ToolCallAssembler:
    """Collects streamed tool-call deltas (several calls may interleave by index)."""

    def __init__(self) -> None:
        self._calls: dict[int, _Partial] = {}

    def add(self, index: int | None, call_id: str | None, name: str | None, arguments: str | None) -> None:
        slot = self._calls.setdefault(index if index is not None else len(self._calls), _Partial())
        if call_id:
            slot.id = call_id
        if name:
            slot.name = name if not slot.name or slot.name == name else slot.name + name
        if arguments:
            slot.arguments.append(arguments)

    def calls(self) -> list[ToolCallRequest]:
        result = []
        for index in sorted(self._calls):
            slot = self._calls[index]
            if not slot.name:
                continue
            raw = "".join(slot.arguments)
            arguments, error = parse_arguments(raw)
            result.append(ToolCallRequest(slot.id or f"call_{index}", slot.name, arguments, raw, error))
        return result


def _as_call(value: Any, tools: Collection[str], number: int) -> ToolCallRequest | None:
    if not isinstance(value, dict):
        return None
    if isinstance(value.get("function"), dict):
        value = value["function"]
    name = value.get("name") or value.get("tool") or value.get("tool_name")
    if not isinstance(name, str) or name not in tools:
        return None
    arguments = value.get("arguments", value.get("parameters", value.get("args", {})))
    if isinstance(arguments, str):
        parsed, error = parse_arguments(arguments)
        return ToolCallRequest(f"text_call_{number}", name, parsed, arguments, error, from_text=True)
    if not isinstance(arguments, dict):
        return None
    return ToolCallRequest(f"text_call_{number}", name, arguments, json.dumps(arguments, ensure_ascii=False), "", True)


def calls_in_text(text: str, tools: Collection[str]) -> list[ToolCallRequest]:
    """Tool calls printed as JSON text; empty when ``text`` is an ordinary answer."""
    stripped = text.strip()
    if not stripped or stripped[0] not in "{[`<":
        return []
    bodies = [m.group(1) for m in _TAGGED.finditer(stripped)]
    if not bodies:
        fenced = _FENCE.match(stripped)
        bodies = [fenced.group(1) if fenced else stripped]
    calls: list[ToolCallRequest] = []
    for body in bodies:
        try:
            value = json.loads(body.strip())
        except ValueError:
            return []
        items = value if isinstance(value, list) else [value]
        for item in items:
            call = _as_call(item, tools, len(calls))
            if call is None:
                return []
            calls.append(call)
    return calls


def may_be_text_call(prefix: str) -> bool:
    """Whether text starting like ``prefix`` could still turn out to be a tool call."""
    stripped = prefix.lstrip()
    if not stripped:
        return True
    if stripped[0] == "{" or stripped[0] == "[":
        return True
    if stripped.startswith("<"):
        return "<tool_call>".startswith(stripped[:11]) or stripped.startswith("<tool_call>")
    if stripped.startswith("`"):
        head = stripped[:8].lower()
        return any(form.startswith(head) or head.startswith(form) for form in ("```json", "```\n{", "```tool"))
    return False

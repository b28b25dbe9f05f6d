"""Assembling tool calls: streamed deltas into complete calls, and their JSON arguments read leniently."""

from __future__ import annotations

import ast
import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from huichat.providers.events import ToolCallRequest


@dataclass
class _Partial:
    id: str = ""
    name: str = ""
    arguments: list[str] = field(default_factory=list)


def json_values(text: str) -> list[Any]:
    """Every JSON value in ``text`` (one, a list, or several side by side), read leniently.

    Small models drop a closing brace or write Python literals; both are repaired. Raises
    ``ValueError`` with the reason when nothing readable is there.
    """
    body = text.strip()
    decoder = json.JSONDecoder()
    values: list[Any] = []
    position = 0
    try:
        while position < len(body):
            value, position = decoder.raw_decode(body, position)
            values.append(value)
            while position < len(body) and body[position] in " \t\r\n,;":
                position += 1
        if values:
            return values
        raise ValueError("empty")
    except json.JSONDecodeError as exc:
        reason = f"{exc.msg} at character {exc.pos}"
    except ValueError:
        reason = "no JSON found"
    rest = body[position:]
    depth = _open_depth(rest)
    if depth > 0:
        try:
            return [*values, json.loads(rest + "}" * depth)]
        except json.JSONDecodeError:
            pass
    try:
        value = ast.literal_eval(rest)
    except (ValueError, SyntaxError, MemoryError, RecursionError, TypeError):
        raise ValueError(reason) from None
    return [*values, value]


def brackets(text: str, start: int = 0) -> Iterator[tuple[int, str]]:
    """Where ``{``, ``[``, ``]`` and ``}`` stand in ``text`` from ``start``, JSON strings (and their escapes) skipped."""
    in_string = escaped = False
    for index in range(start, len(text)):
        ch = text[index]
        if in_string:
            escaped = ch == "\\" and not escaped
            in_string = escaped or ch != '"'
        elif ch == '"':
            in_string = True
        elif ch in "{[]}":
            yield index, ch


def _open_depth(text: str) -> int:
    """How many ``{`` are still open at the end of ``text`` (strings skipped); 0 when balanced."""
    depth = sum(1 if ch == "{" else -1 for _, ch in brackets(text) if ch in "{}")
    return depth if 0 < depth <= 3 else 0


def parse_arguments(raw: str) -> tuple[dict[str, Any], str]:
    """Arguments JSON → dict, or an error message for the model."""
    text = raw.strip()
    if not text:
        return {}, ""
    try:
        values = json_values(text)
    except ValueError as exc:
        return {}, f"the tool arguments are not valid JSON ({exc})"
    value = values[0] if len(values) == 1 else values
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
        """One delta of call ``index``."""
        slot = self._calls.setdefault(index if index is not None else len(self._calls), _Partial())
        if call_id:
            slot.id = call_id
        if name:
            slot.name = name if not slot.name or slot.name == name else slot.name + name
        if arguments:
            slot.arguments.append(arguments)

    def calls(self) -> list[ToolCallRequest]:
        """The complete calls, in index order."""
        result = []
        for index in sorted(self._calls):
            slot = self._calls[index]
            if not slot.name:
                continue
            raw = "".join(slot.arguments)
            arguments, error = parse_arguments(raw)
            result.append(ToolCallRequest(slot.id or f"call_{index}", slot.name, arguments, raw, error))
        return result

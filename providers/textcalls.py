"""Tool calls a model prints as text, read from its reply as it streams.

Local models often print a call instead of making a structured one, in whatever form their
chat template taught them: ``<tool_call>{…}</tool_call>`` (Qwen, Hermes), ``<tools>{…}</tools>``
(the tag of Qwen2.5-Coder's template), ``<function=name>{…}</function>`` (Llama 3.1),
``<recall_memory><query>…</query></recall_memory>`` (XML named after the tool: small Qwens),
``functions.name:`` at the start of a line (llama-cpp-python's chatml-function-calling), fenced
or bare JSON, one call or a list, with text before or after. ``CallSieve`` reads such a reply
as it streams: ordinary text is released as soon as it cannot be the start of a call, what may
still become one is held back, and at the end the calls are read. A call-shaped reply that
cannot be read becomes a call carrying an ``error`` (answered as a tool error), never text.
"""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ElementTree
from collections.abc import Collection
from dataclasses import dataclass
from typing import Any, Literal

from huichat.providers.events import ToolCallRequest
from huichat.providers.toolcalls import brackets, json_values, parse_arguments

_TAGS = {"<tool_call>": "</tool_call>", "<tools>": "</tools>", "<function=": "</function>"}
_CANDIDATE = re.compile(r"<|`|[{\[]|^f", re.MULTILINE)
_FUNCTIONS = "functions."
_FUNCTIONS_CALL = re.compile(r"functions\.([A-Za-z_][\w-]*):")
_CALL_FENCES = ("", "json", "tool_call", "tool", "tools", "function", "xml")
_NAME_KEYS = ("name", "tool", "tool_name", "function")
_ARGUMENT_KEYS = ("arguments", "parameters", "args", "input")
_CALLISH = re.compile(r'"(?:name|tool|function)"\s*:\s*"[^"]*"[\s\S]*"(?:arguments|parameters|args)"', re.IGNORECASE)
_GUESS_NAME = re.compile(r'"(?:name|tool|function)"\s*:\s*"([A-Za-z_][\w.-]{0,63})"')
_SHAPE_HINT = 'write a tool call as {"name": "<tool>", "arguments": {…}}'

Verdict = Literal["skip", "text", "code", "open", "call"]
"""``skip``: not a candidate; ``text``: decided, not a call; ``code``: inside a code block that is
not a call (safe to show, but scan it again from its start); ``open``: undecided; ``call``: call markup."""


def _balanced_end(text: str, start: int) -> int | None:
    """The index just past the JSON value opening at ``start``, or None while it is unclosed."""
    depth = 0
    for index, ch in brackets(text, start):
        if ch in "{[":
            depth += 1
            continue
        depth -= 1
        if depth == 0:
            return index + 1
    return None


def _looks_like_call(value: Any, tools: Collection[str]) -> bool:
    if isinstance(value, list):
        return any(_looks_like_call(item, tools) for item in value)
    if not isinstance(value, dict):
        return False
    inner = value.get("function")
    if isinstance(inner, dict) and isinstance(inner.get("name"), str):
        return True
    name = next((value[k] for k in _NAME_KEYS if isinstance(value.get(k), str)), None)
    if name is None:
        return False
    return name in tools or any(key in value for key in _ARGUMENT_KEYS)


def _call_shaped(body: str, tools: Collection[str]) -> bool:
    """Whether ``body`` (JSON, possibly broken) was meant as a tool call."""
    stripped = body.strip()
    if any(tag in stripped.lower() for tag in _TAGS):
        return True
    try:
        return any(_looks_like_call(value, tools) for value in json_values(stripped))
    except ValueError:
        return bool(_CALLISH.search(stripped)) or any(f'"{tool}"' in stripped for tool in tools)


def _tags(tools: Collection[str]) -> dict[str, str]:
    """Every opening tag of a printed call and its closing tag: the templates' and one per tool."""
    return _TAGS | {f"<{tool}>": f"</{tool}>" for tool in tools}


def _classify_tag(text: str, at: int, final: bool, tools: Collection[str]) -> tuple[Verdict, int]:
    tags = _tags(tools)
    head = text[at : at + max(map(len, tags))].lower()
    for tag, closing in tags.items():
        if head.startswith(tag):
            close = re.compile(re.escape(closing), re.IGNORECASE).search(text, at + len(tag))
            if close is not None:
                return "call", close.end()
            return ("call", len(text)) if final else ("open", at)
        if len(text) - at < len(tag) and tag.startswith(head):
            return ("skip", at + 1) if final else ("open", at)
    return "skip", at + 1


def _classify_fence(text: str, at: int, final: bool, tools: Collection[str]) -> tuple[Verdict, int]:
    if not text.startswith("```", at):
        rest = text[at:]
        if not final and len(rest) < 3 and rest == "`" * len(rest):
            return "open", at
        return "skip", at + 1
    newline = text.find("\n", at + 3)
    info = text[at + 3 : newline if newline >= 0 else len(text)].strip().lower()
    may_call = any(form.startswith(info) for form in _CALL_FENCES) if newline < 0 else info in _CALL_FENCES
    if newline >= 0 and may_call:
        first = text[newline + 1 :].lstrip()[:1]
        may_call = first in ("", "{", "[", "<")
    close = text.find("```", newline + 1) if newline >= 0 else -1
    if not may_call:
        if close >= 0:
            return "text", close + 3
        return ("text", len(text)) if final else ("code", at)
    if newline < 0 or close < 0:
        if not final:
            return "open", at
        return ("call", len(text)) if _call_shaped(text[at + 3 :], tools) else ("text", len(text))
    return ("call" if _call_shaped(text[newline + 1 : close], tools) else "text"), close + 3


def _classify_json(text: str, at: int, final: bool, tools: Collection[str]) -> tuple[Verdict, int]:
    following = text[at + 1 :].lstrip()[:1]
    wanted = "{" if text[at] == "[" else "\"'"
    if not following:
        return ("skip", at + 1) if final else ("open", at)
    if following not in wanted:
        return "skip", at + 1
    end = _balanced_end(text, at)
    if end is None:
        if not final:
            return "open", at
        return ("call", len(text)) if _call_shaped(text[at:], tools) else ("skip", at + 1)
    return ("call" if _call_shaped(text[at:end], tools) else "text"), end


def _classify_functions(text: str, at: int, final: bool) -> tuple[Verdict, int]:
    rest = text[at:]
    found = _FUNCTIONS_CALL.match(text, at)
    if found is None:
        still_possible = _FUNCTIONS.startswith(rest) or re.fullmatch(r"functions\.[\w-]*", rest)
        return ("open", at) if still_possible and not final else ("skip", at + 1)
    following = text[found.end() :].lstrip()
    if not following:
        return ("call", len(text)) if final else ("open", at)
    if following[0] not in "{[":
        return "call", found.end()
    end = _balanced_end(text, text.index(following[0], found.end()))
    if end is None:
        return ("call", len(text)) if final else ("open", at)
    return "call", end


def _classify(text: str, at: int, final: bool, tools: Collection[str]) -> tuple[Verdict, int]:
    first = text[at]
    if first == "f":
        return _classify_functions(text, at, final)
    if first == "<":
        return _classify_tag(text, at, final, tools)
    if first == "`":
        return _classify_fence(text, at, final, tools)
    return _classify_json(text, at, final, tools)


def _scan(text: str, start: int, final: bool, tools: Collection[str]) -> tuple[int, int, tuple[int, int] | None]:
    """From ``start``: (how far text is safe to show, where to scan from next time, the first call's span)."""
    position = start
    while True:
        found = _CANDIDATE.search(text, position)
        if found is None:
            return len(text), len(text), None
        at = found.start()
        verdict, end = _classify(text, at, final, tools)
        if verdict in ("skip", "text"):
            position = end
            continue
        if verdict == "code":
            return len(text), at, None
        if verdict == "open":
            return at, at, None
        return at, at, (at, end)


def _unwrap(markup: str, tools: Collection[str]) -> tuple[str, str]:
    """The tool name the markup gives (``<function=name>``, ``functions.name:``, ``<name>``; else '')
    and the JSON (or XML) inside it."""
    body = markup.strip()
    lowered = body.lower()
    name = ""
    functions = _FUNCTIONS_CALL.match(body)
    if functions is not None:
        return functions.group(1), body[functions.end() :].strip() or "{}"
    for tag, close in _tags(tools).items():
        if lowered.startswith(tag):
            body = body[len(tag) :]
            if tag == "<function=":
                name, _, body = body.partition(">")
                name = name.strip().strip("\"'")
            elif tag not in _TAGS:
                name = tag[1:-1]
            end = body.lower().rfind(close)
            body = body[:end] if end >= 0 else body
            break
    body = body.strip()
    if body.startswith("```"):
        body = body[3:].partition("\n")[2]
        body = body[: body.rfind("```")] if "```" in body else body
    return name, body


def _as_call(value: Any, number: int) -> ToolCallRequest:
    call_id = f"text_call_{number}"
    if not isinstance(value, dict):
        return ToolCallRequest(call_id, "", {}, json.dumps(value, ensure_ascii=False), _SHAPE_HINT, True)
    inner = value.get("function")
    if isinstance(inner, dict):
        value = inner
    name = next((value[k] for k in _NAME_KEYS if isinstance(value.get(k), str) and value[k]), "")
    arguments: Any = next((value[k] for k in _ARGUMENT_KEYS if k in value), {})
    raw = arguments if isinstance(arguments, str) else json.dumps(arguments, ensure_ascii=False)
    if not name:
        return ToolCallRequest(call_id, "", {}, raw, "the tool call has no tool name. " + _SHAPE_HINT, True)
    if isinstance(arguments, str):
        parsed, error = parse_arguments(arguments)
        return ToolCallRequest(call_id, name, parsed, raw, error, True)
    if arguments is None:
        return ToolCallRequest(call_id, name, {}, raw, "", True)
    if not isinstance(arguments, dict):
        return ToolCallRequest(call_id, name, {}, raw, "the tool arguments must be a JSON object", True)
    return ToolCallRequest(call_id, name, arguments, raw, "", True)


def _xml_arguments(body: str) -> tuple[dict[str, Any], str]:
    """``<query>VPN</query><top_k>3</top_k>`` as arguments (a whole number as a number), or the error."""
    try:
        root = ElementTree.fromstring(f"<arguments>{body}</arguments>")
    except ElementTree.ParseError as exc:
        return {}, f"the tool call could not be read ({exc}); {_SHAPE_HINT}"
    arguments: dict[str, Any] = {}
    for element in root:
        value = (element.text or "").strip()
        arguments[element.tag] = int(value) if value.isdecimal() else value
    return arguments, ""


def _calls_in_markup(markup: str, first_number: int, tools: Collection[str]) -> list[ToolCallRequest]:
    name, body = _unwrap(markup, tools)
    number = first_number
    if name:
        arguments, error = _xml_arguments(body) if body.startswith("<") else parse_arguments(body)
        return [ToolCallRequest(f"text_call_{number}", name, arguments, body, error, True)]
    try:
        values = json_values(body)
    except ValueError as exc:
        guess = _GUESS_NAME.search(body)
        error = f"the tool call could not be read ({exc}); {_SHAPE_HINT}"
        return [ToolCallRequest(f"text_call_{number}", guess.group(1) if guess else "", {}, body, error, True)]
    calls = []
    for value in values:
        for item in value if isinstance(value, list) else [value]:
            calls.append(_as_call(item, number))
            number += 1
    return calls


@dataclass(frozen=True)
class Sifted:
    """The end of a sifted reply: text not yet shown, and the calls it printed."""

    tail: str
    calls: tuple[ToolCallRequest, ...]


class CallSieve:
    """Separates the text of a streamed reply from tool calls printed in it.

    ``feed`` returns what can be shown now; ``finish`` returns the rest of the text (when
    the reply held no call) and the calls. Text after a call is never shown: the model is
    guessing at results it has not seen yet.
    """

    def __init__(self, tools: Collection[str]) -> None:
        self.tools = tools
        self.text = ""
        self._shown = 0
        self._neutral = 0
        self._call_seen = False

    def feed(self, piece: str) -> str:
        """Add a piece of the reply; returns the text that is now safe to show."""
        self.text += piece
        if self._call_seen:
            return ""
        safe, self._neutral, call = _scan(self.text, self._neutral, False, self.tools)
        self._call_seen = call is not None
        released = self.text[self._shown : safe] if safe > self._shown else ""
        self._shown = max(self._shown, safe)
        return released

    def finish(self) -> Sifted:
        """The reply is complete: the text still held back (if it is text) and the calls."""
        spans = []
        position = self._neutral
        while position < len(self.text):
            _, _, call = _scan(self.text, position, True, self.tools)
            if call is None:
                break
            spans.append(call)
            position = call[1]
        if not spans:
            return Sifted(self.text[self._shown :], ())
        calls: list[ToolCallRequest] = []
        for start, end in spans:
            calls.extend(_calls_in_markup(self.text[start:end], len(calls), self.tools))
        tail = self.text[self._shown : spans[0][0]] if spans[0][0] > self._shown else ""
        return Sifted(tail, tuple(calls))


def calls_in_text(text: str, tools: Collection[str]) -> list[ToolCallRequest]:
    """The tool calls printed in a whole reply (empty for an ordinary answer)."""
    sieve = CallSieve(tools)
    sieve.feed(text)
    return list(sieve.finish().calls)

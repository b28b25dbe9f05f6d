"""The memory tools offered to the LLM (the seed's schemas): their arguments checked, then run."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Any

from huichat.memory.errors import KernelError
from huichat.memory.kernel import MemoryKernel
from huichat.memory.results import SearchRequest, SearchResults, time_summary
from huichat.memory.turns import Turn

RECALL_MEMORY = "recall_memory"
RECALL_BY_ID = "recall_by_id"
TOOL_NAMES = (RECALL_MEMORY, RECALL_BY_ID)
ERROR_PREFIX = "错误 (error): "
"""How a tool's error begins, for the model (and how a copy of one is recognised in an answer)."""
TOP_K_MAX = 20
"""The most hits a model may ask for (and at least 1)."""

TOOLS: list[dict[str, Any]] = [
    {
        "type": "function",
        "function": {
            "name": RECALL_MEMORY,
            "description": "检索历史对话记忆。支持关键词搜索、时间过滤、分段扫描。"
            "结果按相关度排列，条目之间用 --- 分隔。命中条目：一行 [id | prev | next | 相似度]"
            "（相似度 0–1，各次检索可比），一行 📁 会话文件 | 话题 | 时间，然后是那一轮的原文。"
            "每个命中后面紧跟它的上下文条目（按对话顺序），上下文条目第一行是"
            " ↳ 上下文，属于命中 <id> (context for hit <id>)，其 [id | prev | next] 行没有相似度："
            "它不是命中，只用来理解命中，引用时请用命中的 id。"
            "没有相关记忆时，结果只有一行说明，可能附上最接近但低于阈值的一条（不算命中）。"
            "先检索再下结论：没有检索之前，不要说没有记忆。",
            "parameters": {
                "type": "object",
                "properties": {
                    "query": {"type": "string", "description": "搜索关键词或问题"},
                    "filter_expr": {
                        "type": "string",
                        "description": "时间过滤表达式，如 \"timestamp >= '2026-04-06'\"",
                    },
                    "top_k": {
                        "type": "integer",
                        "description": "返回结果数量，默认 5",
                        "default": 5,
                    },
                },
                "required": ["query"],
            },
        },
    },
    {
        "type": "function",
        "function": {
            "name": RECALL_BY_ID,
            "description": "根据轮次 ID 检索特定对话。用于导航到相邻轮次。"
            "只用 recall_memory 结果里出现过的 ID（下面的 'a3f2c7' 只是格式示例）。",
            "parameters": {
                "type": "object",
                "properties": {"turn_id": {"type": "string", "description": "轮次 ID，如 'a3f2c7'"}},
                "required": ["turn_id"],
            },
        },
    },
]

_PARAMETERS: dict[str, dict[str, Any]] = {tool["function"]["name"]: tool["function"]["parameters"] for tool in TOOLS}
_SCHEMA_KEYS = {"type", "properties", "required", "description", "default", "items"}
_PLACEHOLDERS = {"搜索关键词或问题", "关键词", "query", "keywords", "keyword", "search query", "<query>", "..."}
_WORD = re.compile(r"[^\W_]")


@dataclass(frozen=True)
class ToolContext:
    """What a tool call needs besides its arguments: the time, how much context, what to leave out."""

    now: datetime
    context_window: int = 0
    """Neighbouring turns (±N) shown around each hit."""
    exclude_ids: frozenset[str] = field(default_factory=frozenset)
    """Turns already in the model's context (the conversation so far): never returned as memories."""
    question: str = ""
    """The user's message being answered: searched for when ``recall_by_id`` is given an id that
    does not exist (small models call it with the schema's example id instead of searching)."""


@dataclass(frozen=True)
class ToolOutcome:
    """A tool's answer for the model, what the UI shows, the ids it recalled, and a short trace."""

    content: str
    results: SearchResults | None = None
    recalled_ids: tuple[str, ...] = ()
    error: str = ""
    turn: Turn | None = None
    """recall_by_id's turn."""
    trace: str = ""
    """A line or two for the transcript: the ids found, or the error."""

    @classmethod
    def failure(cls, error: str) -> ToolOutcome:
        """An error the model reads and can correct."""
        return cls(f"{ERROR_PREFIX}{error}", error=error, trace=f"error: {error}")


def _as_integer(key: str, value: Any) -> tuple[int | None, str]:
    if isinstance(value, bool):
        return None, f"{key} must be a whole number, not {json.dumps(value)}"
    if isinstance(value, int):
        return value, ""
    if isinstance(value, float) and value.is_integer():
        return int(value), ""
    if isinstance(value, str) and value.strip().lstrip("+-").isdecimal():  # not isdigit: '²' is a digit int() refuses
        return int(value.strip()), ""
    return None, f"{key} must be a whole number, not {json.dumps(value, ensure_ascii=False)[:40]}"


def _as_string(key: str, value: Any) -> tuple[str | None, str]:
    if isinstance(value, str):
        return value.strip(), ""
    if isinstance(value, int | float) and not isinstance(value, bool):
        return str(value), ""
    return None, f"{key} must be a string, not {type(value).__name__}"


def _query_problem(query: str, has_filter: bool) -> str:
    if not query:
        return "" if has_filter else "query is empty: give the words to search for (or a filter_expr)"
    if query.lower() in _PLACEHOLDERS:
        return f"query {query!r} is the parameter's description, not a search: give the words to search for"
    if query[0] in "{[":
        try:
            json.loads(query)
        except ValueError:
            pass
        else:
            return "query must be the words to search for, not JSON"
    if not _WORD.search(query):
        return "query has no words to search for"
    return ""


def check_arguments(name: str, arguments: Mapping[str, Any]) -> tuple[dict[str, Any], str]:
    """The arguments as the tool runs them, or an error the model can act on.

    Checked against the tool's schema: known keys only, the right types, ``top_k`` within
    1–``TOP_K_MAX``, and a ``query`` that is something to search for (not empty, not JSON,
    not an echo of the schema).
    """
    schema = _PARAMETERS.get(name)
    if schema is None:
        return {}, f"unknown tool {name!r} (available: {', '.join(TOOL_NAMES)})"
    properties: dict[str, Any] = schema["properties"]
    expected = ", ".join(properties)
    unknown = sorted(set(arguments) - set(properties))
    if unknown and set(arguments) <= _SCHEMA_KEYS:
        return {}, f"these are the tool's schema, not its arguments; call {name} with {expected}"
    if unknown:
        return {}, f"{name} has no parameter {', '.join(unknown)} (its parameters: {expected})"
    checked: dict[str, Any] = {}
    for key, spec in properties.items():
        value = arguments.get(key)
        if value is None or (value == "" and key not in schema["required"]):
            continue
        typed, problem = _as_integer(key, value) if spec["type"] == "integer" else _as_string(key, value)
        if problem:
            return {}, problem
        checked[key] = typed
    missing = [key for key in schema["required"] if key not in checked]
    if missing and not (name == RECALL_MEMORY and "filter_expr" in checked):  # a time filter alone is a search
        return {}, f"{name} needs {', '.join(missing)}"
    if name == RECALL_MEMORY:
        top_k = checked.get("top_k")
        if top_k is not None and not 1 <= top_k <= TOP_K_MAX:
            return {}, f"top_k must be between 1 and {TOP_K_MAX}, not {top_k}"
        problem = _query_problem(checked.get("query", ""), "filter_expr" in checked)
        if problem:
            return {}, problem
    if name == RECALL_BY_ID:
        checked["turn_id"] = checked["turn_id"].lower().removeprefix("[").removeprefix("id:").strip()
    return checked, ""


def _search(kernel: MemoryKernel, arguments: dict[str, Any], context: ToolContext) -> ToolOutcome:
    request = SearchRequest(
        arguments.get("query", ""),
        context.now,
        arguments.get("top_k"),
        arguments.get("filter_expr"),
        context.context_window,
        exclude_ids=context.exclude_ids,
    )
    results = kernel.search(request)
    if not results.results:
        scope = f" in {results.time_range.describe()}" if results.time_range else ""
        content = f"没有找到相关记忆{scope}。(no relevant memory{scope})"
        if results.below is not None:
            near = results.below
            snippet = " ".join(near.turn.text.split())[:80]
            # no id: a model handed one cites it as if it were a memory
            content += (
                f"\n最接近的一条低于阈值，不是命中 (nearest, below the threshold — not a match): "
                f"相似度 {near.similarity or 0.0:.3f} · {snippet}"
            )
        return ToolOutcome(content, results, trace=f"no relevant memory{scope}")
    header = ""
    if results.time_range is not None:
        header = f"时间范围 (time range): {results.time_range.describe()} · {time_summary(results)}"
        if results.outside:
            header += " (marked 🕒 outside the range)"
        if results.rounds:
            header += f" · 分段扫描 {len(results.rounds)} 周 (progressive scan, {len(results.rounds)} weeks)"
        header += "\n\n"
    body = kernel.retriever.format_results(results)
    hits = results.hits
    found = ", ".join(f"{h.turn.id} ({h.similarity or 0.0:.3f})" for h in hits)
    trace = f"{len(hits)} hit{'s' if len(hits) != 1 else ''}: {found}"
    return ToolOutcome(header + body, results, tuple(h.turn.id for h in hits), trace=trace)


def _unknown_id(kernel: MemoryKernel, error: str, context: ToolContext) -> ToolOutcome:
    """``recall_by_id`` with an id that does not exist: the error, and what searching the user's
    question finds (a model that reaches for an id it never saw wanted memory; it gets the search
    it should have made, marked as such, instead of a dead end)."""
    failure = ToolOutcome.failure(f"{error} (use an id that a recall_memory result showed)")
    if not context.question.strip():
        return failure
    try:
        searched = _search(kernel, {"query": context.question}, context)
    except KernelError:  # the search failed too: the error alone
        return failure
    content = (
        f"{failure.content}\n\n用户问题的 recall_memory 检索结果 (recall_memory on the user's message instead):\n\n"
        f"{searched.content}"
    )
    return replace(
        searched, content=content, error=failure.error, trace=f"{failure.trace}; searched instead: {searched.trace}"
    )


def run_tool(kernel: MemoryKernel, name: str, arguments: Mapping[str, Any], context: ToolContext) -> ToolOutcome:
    """Check the arguments, then run one memory tool; problems become the tool's answer so the model can correct itself."""
    checked, problem = check_arguments(name, arguments)
    if problem:
        return ToolOutcome.failure(problem)
    try:
        if name == RECALL_MEMORY:
            return _search(kernel, checked, context)
        found = kernel.recall_by_id(checked["turn_id"])
    except KernelError as exc:
        return ToolOutcome.failure(str(exc))
    if found.turn is None:
        return _unknown_id(kernel, found.error, context)
    first_line = found.turn.text.split("\n", 1)[0][:80]
    return ToolOutcome(
        kernel.format_turn(found.turn),
        recalled_ids=(found.turn.id,),
        turn=found.turn,
        trace=f"{found.turn.id}: {first_line}",
    )

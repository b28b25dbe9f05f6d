"""The memory tools offered to the LLM (the seed's schemas) and their execution."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from memory.errors import KernelError
from memory.kernel import MemoryKernel
from memory.results import SearchRequest, SearchResults

RECALL_MEMORY = "recall_memory"
RECALL_BY_ID = "recall_by_id"
TOOL_NAMES = (RECALL_MEMORY, RECALL_BY_ID)

TOOLS: list[dict[str, Any]] = [
    {
        "type": "function",
        "function": {
            "name": RECALL_MEMORY,
            "description": "检索历史对话记忆。支持关键词搜索、时间过滤、分段扫描。",
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
            "description": "根据轮次 ID 检索特定对话。用于导航到相邻轮次。",
            "parameters": {
                "type": "object",
                "properties": {"turn_id": {"type": "string", "description": "轮次 ID，如 'a3f2c7'"}},
                "required": ["turn_id"],
            },
        },
    },
]


@dataclass(frozen=True)
class ToolOutcome:
    """A tool's answer for the model, plus what the UI shows and the ids it recalled."""

    content: str
    results: SearchResults | None = None
    recalled_ids: tuple[str, ...] = ()
    error: str = ""


def _int(value: Any, default: int, low: int, high: int) -> int:
    try:
        number = int(value)
    except (TypeError, ValueError):
        return default
    return max(low, min(high, number))


def run_tool(
    kernel: MemoryKernel, name: str, arguments: dict[str, Any], now: datetime, context_window: int
) -> ToolOutcome:
    """Execute one memory tool; problems become the tool's answer so the model can correct itself."""
    try:
        if name == RECALL_MEMORY:
            query = str(arguments.get("query") or "")
            filter_expr = arguments.get("filter_expr")
            top_k = _int(arguments.get("top_k"), kernel.config.default_top_k, 1, 20)
            results = kernel.search(
                SearchRequest(query, now, top_k, str(filter_expr) if filter_expr else None, context_window)
            )
            if not results.results:
                scope = f" in {results.time_range.describe()}" if results.time_range else ""
                return ToolOutcome(f"没有找到相关记忆{scope}。(no matching memory{scope})", results)
            header = ""
            if results.time_range is not None:
                header = f"时间范围 (time range): {results.time_range.describe()}"
                if results.rounds:
                    header += f" · 分段扫描 {len(results.rounds)} 周 (progressive scan, {len(results.rounds)} weeks)"
                header += "\n\n"
            body = "\n---\n".join(kernel.retriever.format_search_result(r) for r in results)
            return ToolOutcome(header + body, results, tuple(h.turn.id for h in results.hits))
        if name == RECALL_BY_ID:
            found = kernel.recall_by_id(str(arguments.get("turn_id") or ""))
            if found.turn is None:
                return ToolOutcome(f"错误 (error): {found.error}", error=found.error)
            return ToolOutcome(kernel.format_turn(found.turn), recalled_ids=(found.turn.id,))
    except KernelError as exc:
        return ToolOutcome(f"错误 (error): {exc}", error=str(exc))
    return ToolOutcome(
        f"错误 (error): unknown tool '{name}' (available: {', '.join(TOOL_NAMES)})",
        error="unknown tool",
    )

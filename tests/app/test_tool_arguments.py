"""The memory tools' argument models: the schemas generated from them are the seed's, to the
byte, and whatever a model sends is read into runnable arguments or one line it can act on."""

from __future__ import annotations

import json
from typing import Any

import pytest

from huichat.app.tool_arguments import (
    RECALL_BY_ID,
    RECALL_MEMORY,
    TOOLS,
    ArgumentError,
    RecallById,
    RecallMemory,
    read_arguments,
)

SEED_PARAMETERS = {
    RECALL_MEMORY: {
        "type": "object",
        "properties": {
            "query": {"type": "string", "description": "搜索关键词或问题"},
            "filter_expr": {"type": "string", "description": "时间过滤表达式，如 \"timestamp >= '2026-04-06'\""},
            "top_k": {"type": "integer", "description": "返回结果数量，默认 5", "default": 5},
        },
        "required": ["query"],
    },
    RECALL_BY_ID: {
        "type": "object",
        "properties": {"turn_id": {"type": "string", "description": "轮次 ID，如 'a3f2c7'"}},
        "required": ["turn_id"],
    },
}
"""The seed's parameters (huimemory-integration-guide, "Tool Schema"), keys in its order."""


def test_the_generated_schemas_are_the_seeds_to_the_byte() -> None:
    # what the model is sent is the JSON text: the order of keys is part of it (and of a cached prompt)
    assert [tool["type"] for tool in TOOLS] == ["function", "function"]
    assert [tool["function"]["name"] for tool in TOOLS] == [RECALL_MEMORY, RECALL_BY_ID]
    for tool in TOOLS:
        function = tool["function"]
        assert list(function) == ["name", "description", "parameters"]
        sent = json.dumps(function["parameters"], ensure_ascii=False)
        assert sent == json.dumps(SEED_PARAMETERS[function["name"]], ensure_ascii=False)


def test_the_descriptions_begin_with_the_seeds() -> None:
    recall_memory, recall_by_id = (tool["function"]["description"] for tool in TOOLS)
    assert recall_memory.startswith("检索历史对话记忆。支持关键词搜索、时间过滤、分段扫描。结果按相关度排列")
    assert recall_by_id == (
        "根据轮次 ID 检索特定对话。用于导航到相邻轮次。只用 recall_memory 结果里出现过的 ID（下面的 'a3f2c7' 只是格式示例）。"
    )


@pytest.mark.parametrize(
    ("name", "arguments", "error"),
    [
        ("forget", {}, "unknown tool 'forget' (available: recall_memory, recall_by_id)"),
        (
            RECALL_MEMORY,
            {"type": "object", "properties": {"query": {"type": "string"}}, "required": ["query"]},
            "these are the tool's schema, not its arguments; call recall_memory with query, filter_expr, top_k",
        ),
        (
            RECALL_MEMORY,
            {"query": "VPN", "limit": 3, "extra": 1},
            "recall_memory has no parameter extra, limit (its parameters: query, filter_expr, top_k)",
        ),
        (RECALL_MEMORY, {}, "recall_memory needs query"),
        (RECALL_MEMORY, {"query": None, "top_k": 3}, "recall_memory needs query"),
        (RECALL_MEMORY, {"top_k": "many"}, 'top_k must be a whole number, not "many"'),  # types before what is missing
        (RECALL_MEMORY, {"query": "VPN", "top_k": True}, "top_k must be a whole number, not true"),
        (RECALL_MEMORY, {"query": "VPN", "top_k": 2.5}, "top_k must be a whole number, not 2.5"),
        (RECALL_MEMORY, {"query": "VPN", "top_k": "²"}, 'top_k must be a whole number, not "²"'),
        (RECALL_MEMORY, {"query": "VPN", "top_k": "{x}"}, 'top_k must be a whole number, not "{x}"'),
        (RECALL_MEMORY, {"query": {"q": "VPN"}, "top_k": "x"}, "query must be a string, not dict"),
        (RECALL_MEMORY, {"query": ["VPN", {"q": 1}]}, "query must be a string, not list"),
        (RECALL_MEMORY, {"query": "VPN", "filter_expr": {"a": 1}}, "filter_expr must be a string, not dict"),
        (RECALL_MEMORY, {"query": "VPN", "top_k": 21}, "top_k must be between 1 and 20, not 21"),
        (RECALL_MEMORY, {"top_k": 0}, "recall_memory needs query"),  # what is missing before the range
        (RECALL_MEMORY, {"query": " "}, "query is empty: give the words to search for (or a filter_expr)"),
        (
            RECALL_MEMORY,
            {"query": "搜索关键词或问题"},
            "query '搜索关键词或问题' is the parameter's description, not a search: give the words to search for",
        ),
        (RECALL_MEMORY, {"query": '{"type": "string"}'}, "query must be the words to search for, not JSON"),
        (RECALL_MEMORY, {"query": "???"}, "query has no words to search for"),
        (RECALL_BY_ID, {}, "recall_by_id needs turn_id"),
        (RECALL_BY_ID, {"turn_id": 7.5, "query": "x"}, "recall_by_id has no parameter query (its parameters: turn_id)"),
        (RECALL_BY_ID, {"turn_id": False}, "turn_id must be a string, not bool"),
    ],
)
def test_each_problem_is_one_line_for_the_model(name: str, arguments: dict[str, Any], error: str) -> None:
    with pytest.raises(ArgumentError) as raised:
        read_arguments(name, arguments)
    assert str(raised.value) == error


@pytest.mark.parametrize(
    ("name", "arguments", "read"),
    [
        (RECALL_MEMORY, {"query": " VPN ", "top_k": "３"}, RecallMemory(query="VPN", top_k=3)),  # fullwidth: a number
        (RECALL_MEMORY, {"query": "VPN", "top_k": " +5 ", "filter_expr": ""}, RecallMemory(query="VPN", top_k=5)),
        (RECALL_MEMORY, {"query": 2025, "top_k": 4.0}, RecallMemory(query="2025", top_k=4)),
        (
            RECALL_MEMORY,
            {"filter_expr": "timestamp >= '2026-04-06'"},  # a time filter alone is a search
            RecallMemory(query="", filter_expr="timestamp >= '2026-04-06'"),
        ),
        (RECALL_BY_ID, {"turn_id": " [ID:A3F2C7 "}, RecallById(turn_id="a3f2c7")),
    ],
)
def test_what_a_model_sends_is_read_into_runnable_arguments(
    name: str, arguments: dict[str, Any], read: RecallMemory | RecallById
) -> None:
    assert read_arguments(name, arguments) == read


@pytest.mark.parametrize(
    ("query", "searches"),
    [
        ("Melanie camping", ["Melanie camping"]),
        ("Melanie camping\nMelanie swimming", ["Melanie camping", "Melanie swimming"]),
        # repeated and wordless lines are no searches of their own
        ("  猫 \n---\n狗\n猫\nquery", ["猫", "狗"]),
        ("猫\n---", ["猫\n---"]),  # one line with words: one search, as written
        ("\n".join("abcdef"), ["\n".join("abcdef")]),  # six lines: a pasted text, searched as one
        (["跑步 公里", "早上 跑"], ["跑步 公里", "早上 跑"]),  # a list of strings (small models send one) is its lines
        (["跑步多少公里"], ["跑步多少公里"]),
    ],
)
def test_a_query_holds_one_search_a_line(query: str | list[str], searches: list[str]) -> None:
    assert read_arguments(RECALL_MEMORY, {"query": query}).searches == searches  # type: ignore[union-attr]

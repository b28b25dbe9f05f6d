"""The memory tools' answers as the model reads them: the time understood, hits first with their
context under each, which time each hit matched, and one line when nothing is relevant."""

from __future__ import annotations

import re
from datetime import datetime, timedelta
from pathlib import Path

from huichat.app.tool_arguments import RECALL_BY_ID, RECALL_MEMORY, TOOLS
from huichat.app.tools import ToolContext, run_tool
from huichat.memory.config import RetrieverConfig
from huichat.memory.kernel import MemoryKernel
from huichat.memory.turns import Message, TurnDraft
from tests.conftest import NOW, ZONE, open_kernel

SAID = datetime(2026, 11, 30, 10, 0, tzinfo=ZONE)  # a Monday: 上周三下午 is 2026-11-25 12:00–18:00


def test_the_tool_says_which_time_matched_and_marks_the_nearest_outside(tmp_path: Path) -> None:
    kernel = open_kernel(tmp_path)
    session = kernel.new_session(SAID)
    deployed, vpn = kernel.append_turns(
        session,
        [
            TurnDraft((Message("user", "我上周三下午在杭州部署了 Qwen 模型"), Message("assistant", "好的")), SAID),
            TurnDraft((Message("user", "VPN 又断了"), Message("assistant", "重启试试")), SAID + timedelta(minutes=1)),
        ],
    )
    now = SAID + timedelta(hours=1)
    found = run_tool(kernel, "recall_memory", {"query": "上周三下午 部署"}, ToolContext(now))
    assert found.content.startswith("时间范围 (time range): 2026-11-25 Wed 12:00–18:00 · 1 in 上周三下午 · ")
    assert f"[id:{deployed.id} | " in found.content
    assert "\n🕒 about 11-25 12:00–18:00 (上周三下午)\n" in found.content
    outside = run_tool(kernel, "recall_memory", {"query": "昨天 VPN", "top_k": 1}, ToolContext(now))
    assert outside.content.startswith(
        "时间范围 (time range): 2026-11-29 Sun · 0 in 昨天 · 1 nearest outside (marked 🕒 outside the range)"
    )
    assert f"[id:{vpn.id} | " in outside.content
    assert "\n🕒 outside the range · said 2026-11-30\n" in outside.content
    kernel.close()


def _office(root: Path, config: RetrieverConfig) -> tuple[MemoryKernel, list[str]]:
    kernel = open_kernel(root, config=config)
    session = kernel.new_session(NOW - timedelta(days=2))
    ids = []
    for i, text in enumerate(["VPN 晚上总是断", "三楼的打印机坏了", "午饭吃饺子"]):
        when = NOW - timedelta(days=2, minutes=-i)
        ids.append(kernel.append_turn(session, TurnDraft((Message("user", text),), when)).id)
    return kernel, ids


def test_the_tool_lists_the_hit_then_its_context(tmp_path: Path) -> None:
    kernel, ids = _office(tmp_path, RetrieverConfig(min_similarity=0.0))
    outcome = run_tool(kernel, RECALL_MEMORY, {"query": "打印机", "top_k": 1}, ToolContext(NOW, context_window=1))
    kernel.close()
    blocks = outcome.content.split("\n---\n")
    assert blocks[0].startswith(f"[id:{ids[1]} | prev: {ids[0]} | next: {ids[2]} | 相似度: ")
    assert blocks[1].splitlines()[:2] == [
        f"↳ 上下文，属于命中 {ids[1]} (context for hit {ids[1]})",
        f"[id:{ids[0]} | prev: none | next: {ids[1]}]",
    ]
    assert blocks[2].splitlines()[0] == f"↳ 上下文，属于命中 {ids[1]} (context for hit {ids[1]})"
    assert outcome.recalled_ids == (ids[1],)  # the neighbours are context, not recalled memories


def test_nothing_above_the_threshold_is_one_line_and_names_the_nearest(tmp_path: Path) -> None:
    kernel, ids = _office(tmp_path, RetrieverConfig(min_similarity=1.0))
    outcome = run_tool(kernel, RECALL_MEMORY, {"query": "zxqv 🤖🤖 ///"}, ToolContext(NOW, context_window=1))
    kernel.close()
    first, *rest = outcome.content.splitlines()
    assert first == "没有找到相关记忆。(no relevant memory)"
    assert len(rest) == 1 and "below the threshold — not a match" in rest[0]
    assert re.search(r"相似度 \d\.\d{3} · \S", rest[0])  # how near it came, and what it said
    assert outcome.recalled_ids == () and outcome.trace == "no relevant memory"
    # no id a model could cite as a memory: not the nearest turn's, not any other
    assert "id:" not in outcome.content and not set(re.findall(r"[a-z0-9]{6}", outcome.content)) & set(ids)


def test_an_id_that_does_not_exist_gets_the_error_and_a_search_of_the_users_message(tmp_path: Path) -> None:
    # small models call recall_by_id with the schema's example id ('a3f2c7') instead of searching
    kernel, ids = _office(tmp_path, RetrieverConfig(min_similarity=0.0))
    asked = ToolContext(NOW, question="三楼的打印机怎么了？")
    outcome = run_tool(kernel, RECALL_BY_ID, {"turn_id": "a3f2c7"}, asked)
    bare = run_tool(kernel, RECALL_BY_ID, {"turn_id": "a3f2c7"}, ToolContext(NOW))
    kernel.close()
    error, _, searched = outcome.content.partition("\n\n")
    assert error.startswith("错误 (error): ") and "a3f2c7" in error and outcome.error
    assert searched.startswith("用户问题的 recall_memory 检索结果 (recall_memory on the user's message instead):")
    assert outcome.results is not None and outcome.recalled_ids[0] == ids[1]
    assert f"[id:{ids[1]} | " in searched
    assert bare.results is None and bare.recalled_ids == () and bare.content == error  # nothing to search


def test_the_tool_description_documents_the_result_shape() -> None:
    description = TOOLS[0]["function"]["description"]
    for part in ("[id | prev | next | 相似度]", "↳ 上下文，属于命中 <id>", "结果只有一行说明", "---"):
        assert part in description


def test_neither_the_tool_nor_the_system_prompt_quotes_the_no_memory_line() -> None:
    # Qwen2.5-Coder-1.5B answered memory questions with the quoted no-memory line itself (4 of 4)
    # without ever searching: the line belongs in results only
    from huichat.app.prompts import system_prompt

    prompts = [system_prompt(language, tools=tools) for language in ("zh", "en") for tools in (True, False)]
    for text in (TOOLS[0]["function"]["description"], *prompts):
        assert "没有找到相关记忆" not in text and "no relevant memory" not in text


def test_a_number_with_two_signs_is_a_clear_argument_error_not_a_crash(tmp_path: Path) -> None:
    # found by the differential run of 100,000 hostile arguments: every sign was stripped before
    # the digits were checked, so int() was handed "--2" and raised out of the tool
    kernel = open_kernel(tmp_path)
    outcome = run_tool(kernel, "recall_memory", {"query": "VPN", "top_k": "--2"}, ToolContext(NOW))
    kernel.close()
    assert outcome.error == 'top_k must be a whole number, not "--2"'


def test_a_query_of_several_lines_is_several_searches_each_hit_shown_once(tmp_path: Path) -> None:
    kernel, ids = _office(tmp_path, RetrieverConfig(min_similarity=0.0))
    context = ToolContext(NOW, context_window=1)
    outcome = run_tool(kernel, RECALL_MEMORY, {"query": "打印机\nVPN\n---", "top_k": 1}, context)
    again = run_tool(kernel, RECALL_MEMORY, {"query": "打印机\n三楼的打印机", "top_k": 1}, context)
    kernel.close()
    first, second = outcome.content.split("\n\n## ")
    assert first.startswith(
        "## 检索 1/2 (search 1 of 2): 打印机\n\n" + f"[id:{ids[1]} | prev: {ids[0]} | next: {ids[2]}"
    )
    assert second.startswith("检索 2/2 (search 2 of 2): VPN\n\n[id:" + ids[0])
    # the first search showed the VPN turn as context only: the second shows it as its hit
    assert outcome.recalled_ids == (ids[1], ids[0])
    assert outcome.results is not None
    assert [(h.turn.id, h.rank) for h in outcome.results.hits] == [(ids[1], 1), (ids[0], 2)]
    assert outcome.results.query == "打印机 · VPN"
    # the same turn found twice is shown once and named by id where it is found again
    assert again.content.count(f"[id:{ids[1]} | prev:") == 1
    assert again.content.endswith(f"已在上面的检索结果中 (hits shown above): [id:{ids[1]}]")
    assert again.recalled_ids == (ids[1],)


def test_the_panel_line_of_several_searches_says_what_each_one_found(tmp_path: Path) -> None:
    from huichat.app.tui.screens.search import describe_results

    kernel, _ids = _office(tmp_path, RetrieverConfig(min_similarity=0.0))
    outcome = run_tool(kernel, RECALL_MEMORY, {"query": "打印机\n去年 VPN", "top_k": 1}, ToolContext(NOW))
    kernel.close()
    assert outcome.results is not None and len(outcome.results.parts) == 2
    first, second = describe_results(outcome.results).split(" | ")
    assert first == "“打印机” · 1 hit"
    # the second search's own time, and what it found there (nothing said last year)
    assert second.startswith("“VPN” · 去年 → ") and "1 hit" not in second


def test_with_nothing_found_outside_the_conversation_the_model_is_pointed_above(tmp_path: Path) -> None:
    # asked in the session where it was said, the fact is in the model's context and left out of
    # the search: "no relevant memory" alone read as "I never heard of it"
    kernel, ids = _office(tmp_path, RetrieverConfig(min_similarity=0.0))
    outcome = run_tool(kernel, RECALL_MEMORY, {"query": "打印机"}, ToolContext(NOW, exclude_ids=frozenset(ids)))
    kernel.close()
    kernel, _ids = _office(tmp_path / "other", RetrieverConfig(min_similarity=1.0))
    alone = run_tool(kernel, RECALL_MEMORY, {"query": "打印机"}, ToolContext(NOW))  # nothing left out
    kernel.close()
    assert outcome.content.splitlines() == [
        "没有找到相关记忆。(no relevant memory)",
        "本次对话中已说过的内容不在检索范围内，见上文。(this conversation is not searched: see above)",
    ]
    assert "see above" not in alone.content and alone.content.startswith("没有找到相关记忆")


def test_a_stopped_or_failed_turn_found_says_so_in_the_panel(tmp_path: Path) -> None:
    from huichat.app.tui.widgets.memory_panel import hit_prompt
    from huichat.memory.results import SearchRequest
    from huichat.memory.turns import STATUS_FAILED, STOPPED

    kernel = open_kernel(tmp_path)
    session = kernel.new_session(NOW)
    for i, error in enumerate((STOPPED, "the provider ended the reply without finishing it", "")):
        kernel.append_turn(
            session,
            TurnDraft(
                (Message("user", f"打印机第 {i} 次"), Message("assistant", "…")),
                NOW + timedelta(minutes=i),
                status=STATUS_FAILED if error else "ok",
                extra=(("error", error),) if error else (),
            ),
        )
    found = kernel.search(SearchRequest("打印机", NOW + timedelta(hours=1), 5, include_failed=True))
    kernel.close()
    shown = {h.turn.messages[0].text: str(hit_prompt(h, ZONE, 80)) for h in found.hits}
    assert "■ stopped" in shown["打印机第 0 次"] and "⚠ failed" in shown["打印机第 1 次"]
    assert "stopped" not in shown["打印机第 2 次"] and "failed" not in shown["打印机第 2 次"]

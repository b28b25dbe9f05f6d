"""``huichat mcp`` driven by the MCP SDK's own client over stdio (a real subprocess)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from mcp import ClientSession, StdioServerParameters, stdio_client

from huichat.app.tool_arguments import TOOLS
from huichat.memory.turns import Message, TurnDraft
from tests.conftest import NOW, open_kernel

pytestmark = pytest.mark.slow
ROOT = Path(__file__).resolve().parents[2]


def _params(config: Path, *extra: str) -> StdioServerParameters:
    return StdioServerParameters(
        command=sys.executable,
        args=["-m", "huichat", "--config", str(config), "mcp", *extra],
        env={"PYTHONPATH": str(ROOT), "HF_HUB_OFFLINE": "1", "HOME": str(config.parent), "PATH": os.environ["PATH"]},
        cwd=str(ROOT),
    )


@pytest.fixture
def config(tmp_path: Path) -> Path:
    kernel = open_kernel(tmp_path / "data")
    session = kernel.new_session(NOW)
    kernel.append_turn(
        session, TurnDraft((Message("user", "本地模型部署用什么"), Message("assistant", "用 llama.cpp")), NOW)
    )
    kernel.close()
    path = tmp_path / "config.yaml"
    path.write_text(
        f"embedding:\n  model_path: hash\nstorage:\n  data_dir: {tmp_path / 'data'}\nretriever:\n  timezone: Asia/Shanghai\n  min_similarity: 0.0\n",
        encoding="utf-8",
    )
    return path


async def test_read_only_tools_with_the_seeds_schemas_and_format(config: Path) -> None:
    async with stdio_client(_params(config)) as (read, write), ClientSession(read, write) as client:
        await client.initialize()
        tools = {t.name: t for t in (await client.list_tools()).tools}
        assert set(tools) == {"recall_memory", "recall_by_id", "list_sessions"}
        for seed in TOOLS:
            assert tools[seed["function"]["name"]].input_schema == seed["function"]["parameters"]
            assert tools[seed["function"]["name"]].description == seed["function"]["description"]
        found = await client.call_tool("recall_memory", {"query": "本地模型部署", "top_k": 1})
        text = found.content[0].text  # type: ignore[union-attr]
        assert not found.is_error
        assert text.startswith("[id:") and "| 相似度: " in text and "📁 " in text and "用 llama.cpp" in text
        turn_id = text[4:10]
        several = await client.call_tool("recall_memory", {"query": "本地模型部署\n用 llama.cpp 部署", "top_k": 1})
        sections = several.content[0].text.split("\n\n## ")  # type: ignore[union-attr]
        assert sections[0].startswith(f"## 检索 1/2 (search 1 of 2): 本地模型部署\n\n[id:{turn_id} | ")
        assert (
            sections[1]
            == f"检索 2/2 (search 2 of 2): 用 llama.cpp 部署\n\n已在上面的检索结果中 (hits shown above): [id:{turn_id}]"
        )
        by_id = await client.call_tool("recall_by_id", {"turn_id": turn_id})
        assert by_id.content[0].text.startswith(f"[id:{turn_id} | prev: none | next: none]")  # type: ignore[union-attr]
        missing = await client.call_tool("recall_by_id", {"turn_id": "zzzzzz"})
        assert missing.is_error and "no turn with id zzzzzz" in missing.content[0].text  # type: ignore[union-attr]
        sessions = await client.call_tool("list_sessions", {})
        assert "1 turn | 本地模型部署用什么" in sessions.content[0].text  # type: ignore[union-attr]
        refused = await client.call_tool("remember", {"text": "x"})
        assert refused.is_error
        too_long = await client.call_tool("recall_memory", {"query": "部署" * 50_000})
        assert too_long.is_error and "at most 2000 are searched" in too_long.content[0].text  # type: ignore[union-attr]


async def test_allow_write_adds_remember_and_the_turn_is_recallable(config: Path) -> None:
    async with stdio_client(_params(config, "--allow-write")) as (read, write), ClientSession(read, write) as client:
        await client.initialize()
        assert "remember" in {t.name for t in (await client.list_tools()).tools}
        stored = await client.call_tool("remember", {"text": "我的猫叫豆豆", "topic": "宠物"})
        assert stored.content[0].text.startswith("stored")  # type: ignore[union-attr]
        found = await client.call_tool("recall_memory", {"query": "猫叫什么"})
    assert "我的猫叫豆豆" in found.content[0].text  # type: ignore[union-attr]
    transcripts = list((config.parent / "data" / "sessions").glob("*/*/chat_*.md"))
    assert any("我的猫叫豆豆" in p.read_text(encoding="utf-8") for p in transcripts)


async def test_bad_arguments_of_list_sessions_and_remember_are_errors_the_host_sees(config: Path) -> None:
    # the host reads is_error: an error said only in the text reads as success (and was stored)
    async with stdio_client(_params(config, "--allow-write")) as (read, write), ClientSession(read, write) as client:
        await client.initialize()
        tools = {t.name: t for t in (await client.list_tools()).tools}
        assert tools["list_sessions"].input_schema["properties"]["limit"]["default"] == 20
        assert tools["remember"].input_schema["required"] == ["text"]
        refused = {
            "remember needs text": ("remember", {"text": "  "}),
            "text must be a string, not dict": ("remember", {"text": {"a": 1}}),
            "at most": ("remember", {"text": "长" * 32_001}),
            "remember has no parameter when": ("remember", {"text": "x", "when": "now"}),
            "limit must be between 1 and 500, not -1": ("list_sessions", {"limit": -1}),
            "limit must be a whole number": ("list_sessions", {"limit": "abc"}),
        }
        for expected, (name, arguments) in refused.items():
            answer = await client.call_tool(name, arguments)
            assert answer.is_error and expected in answer.content[0].text, (name, arguments)  # type: ignore[union-attr]
        listed = await client.call_tool("list_sessions", {"limit": "1"})
    assert not listed.is_error and "1 turn | 本地模型部署用什么" in listed.content[0].text  # type: ignore[union-attr]
    transcripts = list((config.parent / "data" / "sessions").glob("*/*/chat_*.md"))
    assert len(transcripts) == 1  # nothing refused was stored


def test_a_user_that_does_not_exist_is_refused_at_start_unless_the_host_may_write(config: Path) -> None:
    # a typo in the host's config would otherwise serve an empty memory: "no sessions", "no relevant memory"
    params = _params(config, "--user", "alcie")

    def started(*more: str) -> subprocess.CompletedProcess[str]:  # the host closes the pipe at once
        return subprocess.run(
            [params.command, *params.args, *more],
            input="",
            capture_output=True,
            text=True,
            env=params.env,
            cwd=params.cwd,
            timeout=60,
        )

    done = started()
    assert done.returncode == 2
    assert done.stderr.strip() == (
        "huichat: error: --user: no user 'alcie' (users: default); --allow-write lets the host make a new user's memory"
    )
    assert not (config.parent / "data" / "users" / "alcie").exists()
    created = started("--allow-write")
    assert created.returncode == 0, created.stderr


def test_a_damaged_key_file_at_start_is_one_line_not_a_traceback(config: Path) -> None:
    (config.parent / "data").mkdir(parents=True, exist_ok=True)
    (config.parent / "data" / "api-keys.json").write_text("{half a file", encoding="utf-8")
    params = _params(config, "--user", "alcie")
    done = subprocess.run(
        [params.command, *params.args],
        input="",
        capture_output=True,
        text=True,
        env=params.env,
        cwd=params.cwd,
        timeout=60,
    )
    assert done.returncode != 0 and "Traceback" not in done.stderr
    assert done.stderr.startswith("huichat: error: cannot read the API key file ")

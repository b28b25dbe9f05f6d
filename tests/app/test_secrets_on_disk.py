"""A provider error that echoes the API key leaves no trace of it on disk (issue 16, item 6)."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

from benchmarks.fakellm import FakeLLM, Reply
from huichat.app.config import ChatConfig
from huichat.app.runtime import Zone
from huichat.app.session import ChatSession, ReplyFailed
from huichat.providers.config import ProviderConfig, ProvidersConfig
from huichat.providers.llm import LLMClient
from tests.conftest import NOW, ZONE, open_kernel

KEY = "sk-live-0123456789abcdefghijklmnop"


async def test_a_failed_turn_keeps_its_error_without_the_key(tmp_path: Path, fake_llm: FakeLLM) -> None:
    kernel = open_kernel(tmp_path)
    refused = Reply(status=400, error_message=f"{KEY} refused")
    # a 400 on a round with tools is tried once more unstreamed (servers that cannot stream tool rounds)
    fake_llm.push(Reply(status=401, error_message=f"bad key {KEY}"), refused, refused)
    provider = ProviderConfig(
        model="openai/fake", api_base=fake_llm.base_url, api_key_env="FAKE_KEY", memory_mode="tools"
    )
    client = LLMClient(ProvidersConfig(named={"fake": provider}, max_retries=0), env={"FAKE_KEY": KEY})

    def clock() -> datetime:
        return NOW

    session = ChatSession(kernel=kernel, llm=client, config=ChatConfig(), clock=clock, zone=Zone(ZONE, "Asia/Shanghai"))
    for _ in range(2):
        events = [event async for event in session.reply("hello")]
        failed = [e for e in events if isinstance(e, ReplyFailed)]
        assert failed and KEY not in failed[0].message
    kernel.close()
    assert kernel.count() == 2
    for path in tmp_path.rglob("*"):
        if path.is_file():
            assert KEY.encode() not in path.read_bytes(), path
            assert KEY[:12].encode() not in path.read_bytes(), path

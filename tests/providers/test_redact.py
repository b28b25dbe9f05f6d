"""API keys never reach the screen, a log or the disk through a provider's error (issue 16, item 6)."""

from __future__ import annotations

import pytest

from benchmarks.fakellm import FakeLLM, Reply
from huichat.providers.config import ProviderConfig, ProvidersConfig
from huichat.providers.errors import ProviderError
from huichat.providers.llm import LLMClient
from huichat.providers.redact import REDACTED, redact

KEY = "k3y-0123456789abcdefABCDEF"


@pytest.mark.parametrize(
    ("text", "leak"),
    [
        (f"Incorrect API key provided: {KEY}", KEY),
        (f"Incorrect API key provided: {KEY[:14]}…", KEY[:14]),
        ("invalid key sk-proj-AbCdEf0123456789xyz for model", "sk-proj-AbCdEf0123456789xyz"),
        ("key sk-ant-api03-AAAAAAAAAAAAAAAAAAAA rejected", "sk-ant-api03-AAAAAAAAAAAAAAAAAAAA"),
        ("header was Authorization: Bearer eyJhbGciOiJIUzI1NiJ9.payload.sig", "eyJhbGciOiJIUzI1NiJ9"),
        ('{"api_key": "abcdef123456789"}', "abcdef123456789"),
        ("GET https://x.example/v1?key=AIzaSyA1234567890abcdefghijklmnop", "AIzaSyA1234567890"),
        # huichat serve's own keys, pasted into a chat (export --redact)
        ("my key is hc_c3eee3a5_aqMZF6VDRdZVNwg5dgLI1EIs7e-PNmfiqHlERgtf3I0.", "aqMZF6VDRdZVNwg5dgLI1EIs7e"),
    ],
)
def test_keys_and_tokens_are_redacted(text: str, leak: str) -> None:
    cleaned = redact(text, [KEY])
    assert leak not in cleaned and REDACTED in cleaned


def test_ordinary_text_is_left_alone() -> None:
    text = "the provider is unavailable (Internal Server Error: model overloaded, try again in 20 s)"
    assert redact(text, ["abc", ""]) == text


@pytest.mark.parametrize("status", [400, 403, 500])
async def test_an_error_body_that_echoes_the_key_is_redacted(fake_llm: FakeLLM, status: int) -> None:
    fake_llm.push(Reply(status=status, error_message=f"Incorrect API key provided: {KEY}. Authorization: Bearer {KEY}"))
    provider = ProviderConfig(model="openai/fake", api_base=fake_llm.base_url, api_key_env="FAKE_KEY")
    client = LLMClient(ProvidersConfig(named={"fake": provider}, max_retries=0), env={"FAKE_KEY": KEY})
    with pytest.raises(ProviderError) as caught:
        async for _ in client.stream([{"role": "user", "content": "hi"}]):
            pass
    assert KEY not in str(caught.value) and KEY[:12] not in str(caught.value)
    assert fake_llm.requests[0]["_headers"]["authorization"] == f"Bearer {KEY}"  # it was sent, not shown

"""Configuration of LLM providers (the ``providers`` section)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Literal, Self

from pydantic import BaseModel, ConfigDict, Field, model_validator

MemoryModeSetting = Literal["auto", "tools", "memory-first", "both"]


class ProviderConfig(BaseModel):
    """One named way to reach a model through litellm."""

    model_config = ConfigDict(frozen=True, extra="forbid", defer_build=True)

    model: str
    """A litellm model string: deepseek/deepseek-chat, openai/gpt-4o-mini, openai/<name> + api_base."""
    api_base: str | None = None
    """Base URL of an OpenAI-compatible server (llama.cpp, vLLM, LM Studio, Ollama's /v1)."""
    api_key_env: str | None = None
    """Name of the environment variable holding the API key (never the key itself)."""
    temperature: float | None = Field(default=None, ge=0.0, le=2.0)
    """Sampling temperature; null leaves the provider's default."""
    max_tokens: int | None = Field(default=None, ge=1)
    """Upper bound on the reply length; null leaves the provider's default."""
    timeout: float = Field(default=60.0, gt=0)
    """Seconds to wait for the provider before giving up on a request."""
    fallbacks: tuple[str, ...] = ()
    """Names of other providers tried in order when this one fails."""
    supports_tools: bool = True
    """False for models without tool calling: memory is then injected before the call."""
    memory_mode: MemoryModeSetting = "auto"
    """How this model gets at memory. ``tools``: it searches with the memory tools. ``memory-first``:
    huichat searches the message first and puts the hits into the prompt, no tools offered.
    ``both``: huichat searches first and the tools stay offered. ``auto``: ``tools`` for a cloud
    model that searches when memory holds the answer, ``both`` for one that answers without
    searching and for a local model the probe saw call tools, ``memory-first`` for a local model
    not probed yet and for one that calls no tools (``huichat doctor --ping`` probes)."""
    tool_results: Literal["tool", "observation"] = "tool"
    """How tool results go back to the model. ``tool``: tool-role messages after the assistant's
    structured calls (chat templates render them as ``<tool_response>``). ``observation``: one user
    message of ``<tool_response>`` blocks, after the call as the model printed it — for servers
    whose template drops tool messages (llama-cpp-python's ``chatml-function-calling``)."""


class ProvidersConfig(BaseModel):
    """All configured providers and which one is used."""

    model_config = ConfigDict(frozen=True, extra="forbid", defer_build=True)

    default: str = ""
    """Name of the provider used at start-up; empty picks the first one configured."""
    max_retries: int = Field(default=2, ge=0, le=10)
    """Retries (with backoff) after a transient failure: rate limit, timeout, dropped connection."""
    named: dict[str, ProviderConfig] = Field(default_factory=dict)
    """The providers, by name."""

    @model_validator(mode="after")
    def _names_exist(self) -> Self:
        if self.default and self.default not in self.named:
            known = ", ".join(sorted(self.named)) or "none configured"
            raise ValueError(f"default provider '{self.default}' is not defined (known: {known})")
        for name, provider in self.named.items():
            for fallback in provider.fallbacks:
                if fallback not in self.named:
                    raise ValueError(f"provider '{name}' falls back to unknown provider '{fallback}'")
                if fallback == name:
                    raise ValueError(f"provider '{name}' lists itself as a fallback")
        return self

    def default_name(self) -> str | None:
        """The provider to start with, or None when none is configured."""
        if self.default:
            return self.default
        return next(iter(self.named), None)


def key_problem(name: str, provider: ProviderConfig, env: Mapping[str, str]) -> str:
    """Why this provider cannot be used as configured (an unset key variable), or ''."""
    if provider.api_key_env and not env.get(provider.api_key_env):
        return f"provider '{name}' needs its API key in ${provider.api_key_env}, which is not set"
    return ""

"""The one module that talks to litellm: streaming chat with tools, retries and fallbacks.

litellm runs offline except for the configured endpoints: the local model cost map is
used (no price-list download), telemetry and debug banners are off. Fallbacks and
retries go through litellm's Router; every vendor exception is translated into a
``ProviderError`` with one line a user can act on.
"""

from __future__ import annotations

import os

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
os.environ.setdefault("LITELLM_LOG", "ERROR")

import logging
from collections.abc import AsyncIterator, Collection, Mapping
from typing import Any

import litellm

from providers.config import ProviderConfig, ProvidersConfig, key_problem
from providers.errors import ProviderError
from providers.events import ProviderEvent, ReplyDone, TextDelta, ToolCallRequest
from providers.redact import redact
from providers.toolcalls import ToolCallAssembler

_lite: Any = litellm  # litellm's exception and router names are not re-exported for type checkers
Router = _lite.Router
litellm.suppress_debug_info = True
litellm.telemetry = False
litellm.drop_params = True
for _name in ("LiteLLM", "LiteLLM Router", "LiteLLM Proxy", "litellm", "httpx"):
    logging.getLogger(_name).setLevel(logging.CRITICAL)

_PLACEHOLDER_KEY = "sk-no-key-needed"


def _params(provider: ProviderConfig, env: Mapping[str, str]) -> dict[str, Any]:
    params: dict[str, Any] = {
        "model": provider.model,
        "timeout": provider.timeout,
        "stream_timeout": provider.timeout,
    }
    if provider.api_base:
        params["api_base"] = provider.api_base
    if provider.api_key_env:
        params["api_key"] = env.get(provider.api_key_env, "")
    elif provider.api_base:
        params["api_key"] = _PLACEHOLDER_KEY  # local servers ignore it; the OpenAI client insists
    if provider.temperature is not None:
        params["temperature"] = provider.temperature
    if provider.max_tokens is not None:
        params["max_tokens"] = provider.max_tokens
    return params


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    for prefix in (
        "litellm.",
        "OpenAIException - ",
        "APIConnectionError: ",
        "InternalServerError: ",
    ):
        text = text.replace(prefix, "")
    line = text.splitlines()[0] if text else type(exc).__name__
    return line[:200]


def translate(exc: BaseException, name: str, provider: ProviderConfig, secrets: Collection[str] = ()) -> ProviderError:
    """A litellm/httpx exception as a ``ProviderError`` with one actionable line.

    What the provider said is redacted (``secrets`` and anything shaped like a key): error
    bodies echo keys, and this line is shown, logged and kept with a failed turn.
    """
    where = redact(provider.api_base or provider.model, secrets)
    detail = redact(_first_line(exc), secrets)
    if isinstance(exc, _lite.AuthenticationError):
        hint = f" (check ${provider.api_key_env})" if provider.api_key_env else ""
        return ProviderError(f"{name}: authentication failed{hint}", provider=name)
    if isinstance(exc, _lite.RateLimitError):
        return ProviderError(
            f"{name}: rate limited by the provider; try again shortly",
            transient=True,
            provider=name,
        )
    if isinstance(exc, _lite.Timeout):
        return ProviderError(f"{name}: no answer within {provider.timeout:g} s", transient=True, provider=name)
    if isinstance(exc, _lite.ContextWindowExceededError):
        return ProviderError(f"{name}: the conversation is too long for {provider.model}", provider=name)
    if isinstance(exc, _lite.NotFoundError):
        return ProviderError(f"{name}: model {provider.model} was not found at {where}", provider=name)
    if isinstance(exc, _lite.BadRequestError):
        return ProviderError(f"{name}: the provider rejected the request: {detail}", provider=name)
    lowered = detail.lower()
    if "connection error" in lowered or ("connect" in lowered and "refused" in lowered):
        return ProviderError(f"{name}: cannot connect to {where}", transient=True, provider=name)
    if "stream ended" in lowered or "finish_reason" in lowered or "incomplete" in lowered:
        return ProviderError(f"{name}: the reply stream was cut off", transient=True, provider=name)
    if isinstance(
        exc,
        _lite.ServiceUnavailableError | _lite.InternalServerError | _lite.APIConnectionError,
    ):
        return ProviderError(f"{name}: the provider is unavailable ({detail})", transient=True, provider=name)
    return ProviderError(f"{name}: {detail}", provider=name)


class LLMClient:
    """Streams chat completions from the configured providers.

    ``switch(name)`` changes the provider used by the next request.
    """

    def __init__(self, config: ProvidersConfig, env: Mapping[str, str] | None = None) -> None:
        self.config = config
        self.env = dict(os.environ) if env is None else dict(env)
        self.current = config.default_name()
        self._secrets = tuple(self.env.get(p.api_key_env or "", "") for p in config.named.values() if p.api_key_env)
        model_list = [
            {"model_name": name, "litellm_params": _params(provider, self.env)}
            for name, provider in config.named.items()
        ]
        fallbacks = [{name: list(p.fallbacks)} for name, p in config.named.items() if p.fallbacks]
        self._router: Any = (
            Router(
                model_list=model_list,
                fallbacks=fallbacks,
                num_retries=config.max_retries,
                retry_after=0,
                disable_cooldowns=True,
            )
            if model_list
            else None
        )

    @property
    def names(self) -> list[str]:
        """Configured provider names, in config order."""
        return list(self.config.named)

    def provider(self, name: str | None = None) -> ProviderConfig:
        """The config of ``name`` (default: the current provider)."""
        chosen = name or self.current
        if chosen is None or chosen not in self.config.named:
            raise ProviderError("no provider is configured")
        return self.config.named[chosen]

    def switch(self, name: str) -> ProviderConfig:
        """Use provider ``name`` from now on."""
        if name not in self.config.named:
            raise ProviderError(f"unknown provider '{name}' (configured: {', '.join(self.names) or 'none'})")
        self.current = name
        return self.config.named[name]

    def problem(self, name: str | None = None) -> str:
        """Why the provider cannot be used right now, or ''."""
        chosen = name or self.current
        if chosen is None:
            return "no provider is configured"
        return key_problem(chosen, self.provider(chosen), self.env)

    async def stream(
        self,
        messages: list[dict[str, Any]],
        tools: list[dict[str, Any]] | None = None,
        *,
        tool_names: Collection[str] = (),
    ) -> AsyncIterator[ProviderEvent]:
        """Stream one completion: ``TextDelta``s, then one ``ReplyDone`` with the assembled tool calls."""
        name = self.current
        if name is None or self._router is None:
            raise ProviderError("no provider is configured")
        provider = self.provider(name)
        problem = self.problem(name)
        if problem:
            raise ProviderError(problem, provider=name)
        kwargs: dict[str, Any] = {}
        if tools and provider.supports_tools:
            kwargs["tools"] = tools
        assembler = ToolCallAssembler()
        text: list[str] = []
        finish = ""
        model = provider.model
        try:
            response = await self._router.acompletion(model=name, messages=messages, stream=True, **kwargs)
            async for chunk in response:
                model = getattr(chunk, "model", None) or model
                if not chunk.choices:
                    continue
                choice = chunk.choices[0]
                delta = choice.delta
                if delta is not None and delta.content:
                    text.append(delta.content)
                    yield TextDelta(delta.content)
                for call in (delta.tool_calls if delta is not None else None) or []:
                    function = call.function
                    assembler.add(
                        call.index,
                        call.id,
                        function.name if function else None,
                        function.arguments if function else None,
                    )
                if choice.finish_reason:
                    finish = choice.finish_reason
        except Exception as exc:  # vendor boundary: every litellm/httpx failure becomes one line
            # not chained: the vendor's exception may quote the key, and a traceback would show it
            raise translate(exc, name, provider, self._secrets) from None
        calls: tuple[ToolCallRequest, ...] = tuple(assembler.calls())
        yield ReplyDone(finish or ("tool_calls" if calls else "stop"), str(model), calls, "".join(text))

    async def ping(self, name: str, timeout: float = 10.0) -> str:
        """One tiny request; returns the model's first words or raises ``ProviderError``."""
        provider = self.provider(name)
        problem = self.problem(name)
        if problem:
            raise ProviderError(problem, provider=name)
        params = _params(provider, self.env)
        params.update(timeout=timeout, max_tokens=8)
        params.pop("stream_timeout", None)
        try:
            response = await _lite.acompletion(messages=[{"role": "user", "content": "Say OK."}], **params)
        except Exception as exc:  # vendor boundary (not chained: it may quote the key)
            raise translate(exc, name, provider, self._secrets) from None
        content = response.choices[0].message.content or ""
        return str(content).strip()[:40] or "(empty reply)"

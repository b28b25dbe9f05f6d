"""The one module that talks to litellm: streaming chat with tools, retries and fallbacks.

litellm runs offline except for the configured endpoints: the local model cost map is
used (no price-list download), telemetry and debug banners are off, and no ``.env`` file is read. Fallbacks and
retries go through litellm's Router; every vendor exception is translated into a
``ProviderError`` with one line a user can act on.
"""

from __future__ import annotations

import os

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
os.environ.setdefault("LITELLM_LOG", "ERROR")
# litellm's default ("DEV") mode loads a .env found near the process into its environment at import:
# keys kept there for other tools would silently become huichat's (the providers name their own keys).
os.environ.setdefault("LITELLM_MODE", "PRODUCTION")

import logging
from collections.abc import AsyncGenerator, Collection, Mapping, Sequence
from typing import Any

import litellm

from huichat.providers.config import ProviderConfig, ProvidersConfig, key_problem
from huichat.providers.errors import ProviderError
from huichat.providers.events import ProviderEvent, ReplyDone, TextDelta, ToolCallRequest
from huichat.providers.reading import ReplyReader
from huichat.providers.redact import redact

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


def translate(
    exc: BaseException,
    name: str,
    provider: ProviderConfig,
    secrets: Collection[str] = (),
    *,
    answering: bool = False,
) -> ProviderError:
    """A litellm/httpx exception as a ``ProviderError`` with one actionable line; ``answering``: the
    provider had begun its answer (a lost connection then cut it off: it was no failure to connect).

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
        if answering:  # the server went away mid-reply (killed, restarted, the network dropped)
            return ProviderError(f"{name}: the connection to {where} was lost mid-reply", transient=True, provider=name)
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

    Each request names its provider (``None``: the configured default). Which provider a
    conversation uses is its owner's to hold (the TUI's choice, a request's ``model``), never
    state of the client's: one client serves every provider at once.
    """

    def __init__(self, config: ProvidersConfig, env: Mapping[str, str] | None = None) -> None:
        self.config = config
        self.env = dict(os.environ) if env is None else dict(env)
        self.default = config.default_name()
        """The provider a request that names none goes to."""
        self._unstreamed: set[str] = set()
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
        """The config of ``name`` (default: the default provider)."""
        chosen = name or self.default
        if chosen is None:
            raise ProviderError("no provider is configured")
        if chosen not in self.config.named:
            raise ProviderError(f"unknown provider '{chosen}' (configured: {', '.join(self.names) or 'none'})")
        return self.config.named[chosen]

    def problem(self, name: str | None = None) -> str:
        """Why the provider cannot be used right now, or ''."""
        chosen = name or self.default
        if chosen is None:
            return "no provider is configured"
        return key_problem(chosen, self.provider(chosen), self.env)

    async def stream(
        self,
        messages: list[dict[str, Any]],
        tools: list[dict[str, Any]] | None = None,
        *,
        tool_names: Collection[str] = (),
        provider: str | None = None,
    ) -> AsyncGenerator[ProviderEvent, None]:
        """Stream one completion: ``TextDelta``s fit to show, then one ``ReplyDone``.

        ``ReplyDone`` carries the tool calls, whether the server made them or the model printed
        them as text (read when ``tool_names`` is given; that markup is never yielded). With
        tools, ``tool_choice: auto`` is sent (llama.cpp's chatml-function-calling drops tools
        without it). A server that cannot stream a tool round (it fails, or streams nothing)
        gets the round again unstreamed, and that provider's tool rounds stay unstreamed.
        """
        name = provider or self.default
        if name is None or self._router is None:
            raise ProviderError("no provider is configured")
        config = self.provider(name)
        problem = self.problem(name)
        if problem:
            raise ProviderError(problem, provider=name)
        offered = bool(tools) and config.supports_tools
        kwargs: dict[str, Any] = {"tools": tools, "tool_choice": "auto"} if offered else {}
        reading = ReplyReader(tool_names, config.model)
        unstreamed = refused = offered and name in self._unstreamed
        if not unstreamed:
            shown = answering = False
            try:
                response = await self._router.acompletion(model=name, messages=messages, stream=True, **kwargs)
                answering = True  # the server took the request and began its answer
                try:
                    async for chunk in response:
                        for piece in reading.chunk(chunk):
                            shown = True
                            yield TextDelta(piece)
                finally:  # a stopped reply ends its HTTP request too, not only the reading of it
                    await response.aclose()
            except Exception as exc:  # vendor boundary: every litellm/httpx failure becomes one line
                # not chained: the vendor's exception may quote the key, and a traceback would show it
                if not (offered and not shown and _may_refuse_streaming(exc)):
                    raise translate(exc, name, config, self._secrets, answering=answering) from None
                unstreamed = refused = True
            else:
                unstreamed, refused = offered and not shown and reading.empty, False
            if unstreamed:
                reading = ReplyReader(tool_names, config.model)
        if unstreamed:
            try:
                response = await self._router.acompletion(model=name, messages=messages, stream=False, **kwargs)
            except Exception as exc:  # vendor boundary
                raise translate(exc, name, config, self._secrets) from None
            whole = reading.message(response)
            if refused or not reading.empty:  # empty both ways says nothing about streaming
                self._unstreamed.add(name)
            if whole:
                yield TextDelta(whole)
        tail, done = reading.done()
        if tail:
            yield TextDelta(tail)
        yield done

    def streams_tool_rounds(self, name: str | None = None) -> bool:
        """False once a provider's tool rounds had to be sent unstreamed."""
        return (name or self.default) not in self._unstreamed

    async def ping(self, name: str, timeout: float = 10.0) -> str:
        """One tiny request; returns the model's first words or raises ``ProviderError``."""
        content = await self.short_answer(name, [{"role": "user", "content": "Say OK."}], max_tokens=8, timeout=timeout)
        return content[:40] or "(empty reply)"

    async def short_answer(
        self,
        name: str | None,
        messages: list[dict[str, Any]],
        *,
        max_tokens: int,
        timeout: float | None = None,
        temperature: float | None = None,
    ) -> str:
        """A few words from provider ``name`` (None: the default), unstreamed and without tools;
        ``temperature`` unless the provider sets its own. Raises ``ProviderError``."""
        provider = self.provider(name)
        name = name or self.default or ""
        problem = self.problem(name)
        if problem:
            raise ProviderError(problem, provider=name)
        chosen = {} if temperature is None else {"temperature": temperature}
        params = {**chosen, **_params(provider, self.env), "max_tokens": max_tokens}
        if timeout is not None:
            params["timeout"] = timeout
        params.pop("stream_timeout", None)
        try:
            response = await _lite.acompletion(messages=messages, **params)
        except Exception as exc:  # vendor boundary (not chained: it may quote the key)
            raise translate(exc, name, provider, self._secrets) from None
        return str(response.choices[0].message.content or "").strip()

    async def probe_tools(
        self, name: str, messages: list[dict[str, Any]], tools: Sequence[dict[str, Any]], tool_names: Sequence[str]
    ) -> str:
        """Whether provider ``name`` calls the offered tools when ``messages`` call for one:
        ``yes (structured)``, ``yes (text)`` or ``no``. A call of any of ``tool_names`` counts.

        Raises ``ProviderError`` on failure.
        """
        calls: tuple[ToolCallRequest, ...] = ()
        async for event in self.stream(messages, list(tools), tool_names=tool_names, provider=name):
            if isinstance(event, ReplyDone):
                calls = event.tool_calls
        called = [c for c in calls if c.name in tool_names]
        if not called:
            return "no"
        how = "text" if all(c.from_text for c in called) else "structured"
        return f"yes ({how}{'' if self.streams_tool_rounds(name) else ', unstreamed'})"


def _may_refuse_streaming(exc: BaseException) -> bool:
    """Whether ``exc`` may mean "this server cannot stream a tool round" (not: down, slow, denied)."""
    if isinstance(
        exc,
        _lite.AuthenticationError
        | _lite.RateLimitError
        | _lite.Timeout
        | _lite.ContextWindowExceededError
        | _lite.NotFoundError
        | _lite.APIConnectionError,
    ):
        return False
    return isinstance(exc, _lite.BadRequestError | _lite.InternalServerError | _lite.APIError)

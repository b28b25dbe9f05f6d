"""``POST /v1/chat/completions`` (OpenAI-compatible, SSE when ``stream``) and ``GET /v1/models``.

Takeover mode: the server runs the same loop as the terminal app (``ChatSession``) — the
model gets the memory tools, every turn is stored with its anchors — so a client that
knows nothing about memory gets it. ``model`` names a configured provider. The reply runs
as a task of its own: a client that hangs up mid-stream does not lose the turn.
"""

from __future__ import annotations

import asyncio
import json
import logging
import secrets
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Annotated, Any

from fastapi import APIRouter, Header, Request
from fastapi.responses import JSONResponse, StreamingResponse
from pydantic import BaseModel, ConfigDict, Field

from huichat.app.serve.auth import Caller, user_for
from huichat.app.serve.conversations import SESSION_HEADER, BadSessionId, Conversation, UnknownSession, dialogue
from huichat.app.serve.errors import MEMORY_HEADER, ApiError, error_body
from huichat.app.serve.service import Service, service_of
from huichat.app.session import ReplyCompleted, ReplyFailed, estimate_tokens
from huichat.memory.health import IndexHealth
from huichat.memory.turns import Turn
from huichat.providers.events import TextDelta

log = logging.getLogger("huichat.serve")
router = APIRouter(tags=["chat"])


class ChatRequest(BaseModel):
    """The OpenAI chat request. Sampling options (``temperature``, ``max_tokens``, …) are accepted
    and the provider's configured ones apply; what would change the answer's shape (several
    choices, the client's own tools) is refused, since huichat cannot give it."""

    model_config = ConfigDict(extra="allow")

    model: str = Field(description="a configured provider's name (see GET /v1/models)")
    messages: list[dict[str, Any]] = Field(min_length=1, description="the conversation; the last one is the question")
    stream: bool | None = Field(default=False, description="SSE when true (null: false, as OpenAI reads it)")
    user: str | None = Field(default=None, description="whose memory: the key's own user, or any for admin keys")
    n: int | None = Field(default=1, description="choices wanted: huichat gives one (null: one)")
    tools: list[Any] | None = Field(default=None, description="not supported: the model gets huichat's memory tools")
    functions: list[Any] | None = Field(default=None, description="not supported (the older form of tools)")
    tool_choice: Any = Field(default=None, description="only 'none' or 'auto': no client tool can be called")
    stream_options: dict[str, Any] | None = Field(
        default=None, description="include_usage: a last chunk with the (estimated) usage, as OpenAI sends it"
    )

    def include_usage(self) -> bool:
        """Whether a stream ends with a usage chunk (``stream_options.include_usage``)."""
        return bool(self.stream and self.stream_options and self.stream_options.get("include_usage"))

    def unsupported(self) -> str | None:
        """Why huichat cannot answer this request as asked, or None."""
        if self.n not in (None, 1):
            return f"n is {self.n}: huichat answers with one choice; leave n out or send 1"
        if self.tools or self.functions:
            return (
                "tools are not supported: huichat gives the model its own memory tools and answers in "
                "text; leave 'tools' out (or use `huichat mcp` to add memory to a client's own tool loop)"
            )
        if self.tool_choice not in (None, "none", "auto"):
            return "tool_choice can only be 'none' or 'auto': huichat offers the client no tools to call"
        return None


@dataclass(frozen=True)
class Finished:
    """The end of a reply, as the route reports it."""

    text: str
    turn: Turn | None
    model: str
    error: str = ""
    status: int = 502
    """The HTTP status of an error: the provider's (502), or the server stopping (503)."""


STOPPING = "the server is stopping: the reply was cut short (your question is kept); ask again in a moment"


def _provider(service: Service, model: str) -> str:
    named = service.runtime.loaded.config.providers.named
    if model in named:
        return model
    for name, provider in named.items():
        if model in (provider.model, provider.model.split("/", 1)[-1]):
            return name
    known = ", ".join(named) or "none configured"
    raise ApiError(404, f"the model '{model[:80]}' does not exist (configured providers: {known})")


def memory_state(health: IndexHealth) -> str:
    """What the ``X-Huichat-Memory`` header and the status say: ``degraded`` while the index is unavailable."""
    return "ok" if health.usable else "degraded"


async def _pump(
    service: Service,
    user: str,
    conversation: Conversation,
    provider: str,
    question: str,
    said: list[tuple[str, str]],
    queue: asyncio.Queue[str | Finished],
) -> None:
    """Run one reply to its end, feeding text to ``queue``; the turn is stored even if nobody listens."""
    text: list[str] = []
    finished = Finished("", None, "", "the reply ended without an answer")
    async with conversation.lock:
        try:
            async for event in conversation.session.reply(question, provider=provider):
                if isinstance(event, TextDelta):
                    text.append(event.text)
                    queue.put_nowait(event.text)
                elif isinstance(event, ReplyCompleted):
                    finished = Finished(event.text, event.turn, event.model)
                elif isinstance(event, ReplyFailed):
                    finished = Finished("".join(text), event.turn, "", event.message)
        except Exception as exc:  # the task's boundary: log the cause, tell the client one line
            log.exception("reply failed for user %s", user)
            finished = Finished("".join(text), None, "", f"internal error: {type(exc).__name__}")
        except asyncio.CancelledError:  # the server stops (Service.stop_replies): the client hears why
            queue.put_nowait(Finished("".join(text), None, "", STOPPING, 503))
            raise
        if not finished.error:
            await service.conversations.remember(
                user, conversation, [*said, ("user", question), ("assistant", finished.text)]
            )
        if finished.turn is not None:
            service.memory(user).wrote()
    queue.put_nowait(finished)


def _extension(conversation: Conversation, finished: Finished) -> dict[str, Any]:
    turn = finished.turn
    return {
        "turn_id": turn.id if turn else None,
        "session_id": conversation.session_id,
        "memory": memory_state(conversation.session.kernel.health),
        "recalled": list(turn.recalled_ids) if turn else [],
        "provider_model": finished.model or None,
    }


def _chunk(reply_id: str, created: int, model: str, delta: dict[str, Any], finish: str | None = None) -> str:
    data = {
        "id": reply_id,
        "object": "chat.completion.chunk",
        "created": created,
        "model": model,
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
    }
    return f"data: {json.dumps(data, ensure_ascii=False)}\n\n"


def _usage(said: list[tuple[str, str]], answer: str) -> dict[str, int]:
    """OpenAI's ``usage``, estimated: what was sent (the history and the question), and the answer."""
    prompt = sum(estimate_tokens(text) for _, text in said)
    completion = estimate_tokens(answer)
    return {"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion}


async def _events(
    queue: asyncio.Queue[str | Finished],
    conversation: Conversation,
    model: str,
    said: list[tuple[str, str]],
    include_usage: bool,
) -> AsyncIterator[str]:
    reply_id = f"chatcmpl-{secrets.token_hex(12)}"
    created = int(time.time())
    yield _chunk(reply_id, created, model, {"role": "assistant", "content": ""})
    while True:
        item = await queue.get()
        if isinstance(item, str):
            yield _chunk(reply_id, created, model, {"content": item})
            continue
        if item.error:
            yield f"data: {json.dumps(error_body(item.status, item.error), ensure_ascii=False)}\n\n"
        else:
            last = json.loads(_chunk(reply_id, created, model, {}, "stop")[len("data: ") :])
            last["huichat"] = _extension(conversation, item)
            yield f"data: {json.dumps(last, ensure_ascii=False)}\n\n"
            if include_usage:  # stream_options.include_usage: one more chunk, no choices, the usage
                usage = {**last, "choices": [], "usage": _usage(said, item.text)}
                del usage["huichat"]
                yield f"data: {json.dumps(usage, ensure_ascii=False)}\n\n"
        yield "data: [DONE]\n\n"
        return


@router.post("/v1/chat/completions", summary="Chat with memory (OpenAI-compatible; SSE when stream is true)")
async def chat_completions(
    body: ChatRequest,
    request: Request,
    caller: Caller,
    session_header: Annotated[str | None, Header(alias=SESSION_HEADER)] = None,
) -> Any:
    """Answer the last user message in takeover mode: memory tools, turn storage, anchors."""
    if (refused := body.unsupported()) is not None:
        raise ApiError(400, refused)
    service = service_of(request)
    user = user_for(request, caller, body.user, may_create=True, named_by="the body's 'user' field")
    provider = _provider(service, body.model)
    last = body.messages[-1]
    said = dialogue(body.messages[:-1])
    question = dialogue([last])
    if last.get("role") != "user" or not question:
        raise ApiError(400, "the last message must be the user's, with text")
    if (problem := service.runtime.loaded.config.chat.message_problem(question[0][1])) is not None:
        raise ApiError(413, problem)
    kernel = await service.kernel(user)
    try:
        conversation = await service.conversations.find(user, kernel, await service.llm(), said, session_header)
    except BadSessionId as exc:
        raise ApiError(400, str(exc)) from None
    except UnknownSession as exc:
        raise ApiError(404, str(exc)) from None
    queue: asyncio.Queue[str | Finished] = asyncio.Queue()
    service.keep(_pump(service, user, conversation, provider, question[0][1], said, queue), f"reply for {user}")
    headers = {MEMORY_HEADER: memory_state(kernel.health)}
    if conversation.session_id:
        headers[SESSION_HEADER] = conversation.session_id
    if body.stream:
        headers["Cache-Control"] = "no-cache"
        return StreamingResponse(
            _events(queue, conversation, body.model, [*said, *question], body.include_usage()),
            media_type="text/event-stream",
            headers=headers,
        )
    while isinstance(item := await queue.get(), str):
        pass
    headers[MEMORY_HEADER] = memory_state(conversation.session.kernel.health)
    if item.error:
        return JSONResponse(error_body(item.status, item.error), status_code=item.status, headers=headers)
    if conversation.session_id:
        headers[SESSION_HEADER] = conversation.session_id
    payload = {
        "id": f"chatcmpl-{secrets.token_hex(12)}",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": body.model,
        "choices": [{"index": 0, "message": {"role": "assistant", "content": item.text}, "finish_reason": "stop"}],
        "usage": _usage([*said, *question], item.text),
        "huichat": _extension(conversation, item),
    }
    return JSONResponse(payload, headers=headers)


@router.get("/v1/models", summary="The configured providers, as models")
async def models(request: Request, _caller: Caller) -> dict[str, Any]:
    """Every configured provider name, usable as ``model``."""
    named = service_of(request).runtime.loaded.config.providers.named
    return {
        "object": "list",
        "data": [{"id": name, "object": "model", "created": 0, "owned_by": p.model} for name, p in named.items()],
    }

"""One conversation in takeover mode: context, streaming, memory tools, storing the turn.

``ChatSession.reply(text)`` is an async generator of events; screens only render them,
so the whole loop runs (and is tested) without a terminal. Blocking kernel calls run in
a thread.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from datetime import datetime, tzinfo
from typing import Any

from app.config import ChatConfig
from app.prompts import system_prompt, uses_chinese
from app.tools import RECALL_BY_ID, TOOL_NAMES, TOOLS, ToolOutcome, run_tool
from memory.errors import KernelError
from memory.kernel import MemoryKernel, SessionHandle
from memory.results import SearchResults
from memory.turns import STATUS_FAILED, Message, Turn, TurnDraft, derive_topic
from providers.errors import ProviderError
from providers.events import ReplyDone, TextDelta, ToolCallRequest
from providers.llm import LLMClient
from providers.toolcalls import calls_in_text, may_be_text_call

Clock = Callable[[], datetime]


@dataclass(frozen=True)
class RecallStarted:
    """A memory search began (``source`` is ``tool`` or ``auto``)."""

    call_id: str
    tool: str
    arguments: dict[str, Any]
    source: str = "tool"


@dataclass(frozen=True)
class RecallFinished:
    """A memory search ended; ``results`` for recall_memory, ``turn`` for recall_by_id."""

    call_id: str
    tool: str
    arguments: dict[str, Any]
    results: SearchResults | None = None
    turn: Turn | None = None
    error: str = ""
    source: str = "tool"


@dataclass(frozen=True)
class ToolCalled:
    """The model asked for a tool (shown in the transcript as a small note)."""

    name: str
    arguments: dict[str, Any]
    from_text: bool = False


@dataclass(frozen=True)
class ReplyCompleted:
    """The reply is complete and its turn is stored."""

    turn: Turn
    text: str
    model: str


@dataclass(frozen=True)
class ReplyFailed:
    """The reply failed; ``turn`` is the failed turn kept in the transcript (None if it could not be)."""

    message: str
    user_text: str
    turn: Turn | None = None


SessionEvent = RecallStarted | RecallFinished | ToolCalled | TextDelta | ReplyCompleted | ReplyFailed


def estimate_tokens(text: str) -> int:
    """A rough token count: one per CJK character, one per four other characters."""
    cjk = sum(1 for ch in text if "\u3400" <= ch <= "\u9fff")
    return cjk + (len(text) - cjk) // 4 + 1


class ChatSession:
    """The current conversation: its handle in memory and the loop that answers."""

    def __init__(
        self,
        kernel: MemoryKernel,
        llm: LLMClient,
        config: ChatConfig,
        clock: Clock,
        zone: tzinfo,
        zone_name: str,
        handle: SessionHandle | None = None,
        context_window: int = 1,
    ) -> None:
        self.kernel = kernel
        self.llm = llm
        self.config = config
        self.clock = clock
        self.zone = zone
        self.zone_name = zone_name
        self.context_window = context_window
        self.handle = handle
        self.turns: list[Turn] = []
        self.topic = ""

    async def resume(self, session_id: str) -> None:
        """Continue ``session_id``'s anchor chain from now on."""
        self.handle = await asyncio.to_thread(self.kernel.resume_session, session_id)
        self.turns = await asyncio.to_thread(self.kernel.session_turns, session_id)
        self.topic = self.turns[-1].topic if self.turns else ""

    def start_new(self) -> None:
        """Forget the current session; the next message starts a new one."""
        self.handle = None
        self.turns = []
        self.topic = ""

    # ---------------------------------------------------------------- context

    def _language(self, text: str) -> str:
        if self.config.prompt_language != "auto":
            return self.config.prompt_language
        return "zh" if uses_chinese(text) else "en"

    def _history(self) -> list[dict[str, Any]]:
        budget = self.config.context_token_budget
        picked: list[dict[str, Any]] = []
        for turn in reversed(self.turns):
            if turn.status == STATUS_FAILED:
                continue
            pair = [
                {"role": "assistant" if m.role == "assistant" else "user", "content": m.text} for m in turn.messages
            ]
            cost = sum(estimate_tokens(m["content"]) for m in pair)
            if cost > budget:
                break
            budget -= cost
            picked[:0] = pair
        return picked

    def build_messages(self, text: str, now: datetime, injected: str = "") -> list[dict[str, Any]]:
        """System prompt, the session's recent turns within the budget, and the new message."""
        local = now.astimezone(self.zone)
        messages: list[dict[str, Any]] = [
            {
                "role": "system",
                "content": system_prompt(self._language(text), local, self.zone_name),
            }
        ]
        messages.extend(self._history())
        if injected:
            messages.append({"role": "system", "content": injected})
        messages.append({"role": "user", "content": text})
        return messages

    # ------------------------------------------------------------------ reply

    async def reply(self, text: str) -> AsyncIterator[SessionEvent]:
        """Answer ``text``: stream the reply, run memory tools, then store the turn."""
        now = self.clock()
        visible: list[str] = []
        recalled: list[str] = []
        model = ""
        try:
            injected = ""
            if self.config.auto_recall or not self.llm.provider().supports_tools:
                arguments = {"query": text, "top_k": self.config.auto_recall_top_k}
                yield RecallStarted("auto", "recall_memory", arguments, "auto")
                outcome = await asyncio.to_thread(run_tool, self.kernel, "recall_memory", arguments, now, 0)
                yield RecallFinished("auto", "recall_memory", arguments, outcome.results, None, outcome.error, "auto")
                recalled.extend(outcome.recalled_ids)
                if outcome.results is not None and outcome.results.results:
                    injected = "以下是可能相关的历史记忆 (possibly relevant memories):\n\n" + outcome.content
            messages = self.build_messages(text, now, injected)
            rounds = self.config.max_tool_rounds
            for round_number in range(rounds + 1):
                tools_allowed = round_number < rounds and self.llm.provider().supports_tools
                done: ReplyDone | None = None
                held: list[str] = []
                holding = tools_allowed
                async for event in self.llm.stream(messages, TOOLS if tools_allowed else None, tool_names=TOOL_NAMES):
                    if isinstance(event, TextDelta):
                        piece = event.text
                        if holding:
                            held.append(piece)
                            if may_be_text_call("".join(held)):
                                continue
                            holding = False
                            piece = "".join(held)
                            held = []
                        visible.append(piece)
                        yield TextDelta(piece)
                    elif isinstance(event, ReplyDone):
                        done = event
                if done is None:
                    raise ProviderError("the provider ended the reply without finishing it", transient=True)
                model = done.model
                calls = list(done.tool_calls)
                if not calls and held and tools_allowed:
                    calls = calls_in_text("".join(held), TOOL_NAMES)
                if not calls:
                    if held:
                        visible.append("".join(held))
                        yield TextDelta("".join(held))
                    break
                messages.append(self._assistant_message(done, calls))
                for call in calls:
                    yield ToolCalled(call.name, call.arguments, call.from_text)
                    outcome = await self._run(call, now)
                    async for recall_event in self._recall_events(call, outcome):
                        yield recall_event
                    recalled.extend(i for i in outcome.recalled_ids if i not in recalled)
                    messages.append(self._tool_message(call, outcome))
        except ProviderError as exc:
            failed = await self._store_failed(text, "".join(visible), str(exc), recalled, now)
            yield failed
            return
        answer = "".join(visible)
        try:
            turn = await asyncio.to_thread(self._store, text, answer, tuple(recalled), now, "ok", ())
        except KernelError as exc:
            yield ReplyFailed(f"the reply could not be stored: {exc}", text)
            return
        yield ReplyCompleted(turn, answer, model)

    async def _run(self, call: ToolCallRequest, now: datetime) -> ToolOutcome:
        if call.error:
            return ToolOutcome(f"错误 (error): {call.error}", error=call.error)
        return await asyncio.to_thread(run_tool, self.kernel, call.name, call.arguments, now, self.context_window)

    async def _recall_events(self, call: ToolCallRequest, outcome: ToolOutcome) -> AsyncIterator[SessionEvent]:
        yield RecallStarted(call.id, call.name, call.arguments)
        turn = None
        if call.name == RECALL_BY_ID and outcome.recalled_ids:
            found = await asyncio.to_thread(self.kernel.recall_by_id, outcome.recalled_ids[0])
            turn = found.turn
        yield RecallFinished(call.id, call.name, call.arguments, outcome.results, turn, outcome.error)

    @staticmethod
    def _assistant_message(done: ReplyDone, calls: list[ToolCallRequest]) -> dict[str, Any]:
        if calls[0].from_text:
            return {"role": "assistant", "content": done.text or ""}
        return {
            "role": "assistant",
            "content": done.text or "",  # never null: some OpenAI-compatible servers reject it
            "tool_calls": [
                {
                    "id": call.id,
                    "type": "function",
                    "function": {
                        "name": call.name,
                        "arguments": call.raw_arguments or json.dumps(call.arguments, ensure_ascii=False),
                    },
                }
                for call in calls
            ],
        }

    @staticmethod
    def _tool_message(call: ToolCallRequest, outcome: ToolOutcome) -> dict[str, Any]:
        if call.from_text:
            return {"role": "user", "content": f"[{call.name} 结果 / result]\n\n{outcome.content}"}
        return {"role": "tool", "tool_call_id": call.id, "content": outcome.content}

    # ------------------------------------------------------------------ store

    def _store(
        self,
        user_text: str,
        answer: str,
        recalled: tuple[str, ...],
        now: datetime,
        status: str,
        extra: tuple[tuple[str, str], ...],
    ) -> Turn:
        if self.handle is None:
            self.handle = self.kernel.new_session(now)
            self.topic = derive_topic(user_text)
        messages = [Message("user", user_text)]
        if answer or status == "ok":
            messages.append(Message("assistant", answer))
        draft = TurnDraft(tuple(messages), now, self.topic, recalled, status, extra)
        turn = self.kernel.append_turn(self.handle, draft)
        self.kernel.flush_access()
        self.turns.append(turn)
        return turn

    async def _store_failed(
        self, user_text: str, partial: str, message: str, recalled: list[str], now: datetime
    ) -> ReplyFailed:
        try:
            turn = await asyncio.to_thread(
                self._store,
                user_text,
                partial,
                tuple(recalled),
                now,
                STATUS_FAILED,
                (("error", message),),
            )
        except KernelError as exc:
            return ReplyFailed(f"{message}; the message could not be kept either: {exc}", user_text)
        return ReplyFailed(message, user_text, turn)

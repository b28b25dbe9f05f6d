"""``huichat mcp``: huichat's memory for MCP hosts (Claude Desktop, Cursor, …) over stdio.

Enhance mode: the host keeps its own conversation; huichat answers ``recall_memory`` and
``recall_by_id`` with the seed's schemas and result format (the very tools the terminal
app gives its model), plus ``list_sessions``. Read-only unless ``--allow-write`` adds
``remember``, which stores a turn in a session of its own. Memory opens on the first
call and degrades like the HTTP face: a search then says why memory is unavailable.
"""

from __future__ import annotations

import asyncio
from typing import Any, Self

import mcp_types as types
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server
from pydantic import Field, model_validator

from huichat import __version__
from huichat.app.errors import CommandError
from huichat.app.runtime import Runtime
from huichat.app.tool_arguments import (
    RECALL_BY_ID,
    RECALL_MEMORY,
    TOOLS,
    ArgumentError,
    OptionalText,
    OptionalWholeNumber,
    Text,
    ToolArguments,
    argument_problem,
)
from huichat.app.tools import ERROR_PREFIX, ToolContext, run_tool
from huichat.app.users.keys import KeyRing, KeyRingError
from huichat.app.users.memories import Memory, Stores
from huichat.app.wording import plural
from huichat.memory.errors import KernelError
from huichat.memory.kernel import SessionHandle
from huichat.memory.turns import Message, TurnDraft, anchor_line

LIST_SESSIONS = "list_sessions"
REMEMBER = "remember"
EXIT_USAGE = 2
SESSIONS_MAX = 500
"""The most sessions one ``list_sessions`` call lists."""


class ListSessions(ToolArguments):
    """``list_sessions``: the stored sessions, most recent first."""

    name = LIST_SESSIONS
    description = "列出已保存的会话（最近的在前）。List stored sessions, most recent first."

    limit: OptionalWholeNumber = Field(
        None, description="最多返回多少个会话，默认 20", json_schema_extra={"default": 20}
    )

    @model_validator(mode="after")
    def _in_range(self) -> Self:
        if self.limit is not None and not 1 <= self.limit <= SESSIONS_MAX:
            raise argument_problem(f"limit must be between 1 and {SESSIONS_MAX}, not {self.limit}")
        return self


class Remember(ToolArguments):
    """``remember`` (with ``--allow-write``): one exchange, or a note, stored as a turn."""

    name = REMEMBER
    description = "把一段对话存入长期记忆。Store one exchange (or a note) in long-term memory."

    text: Text = Field(description="用户说的话，或要记住的内容")
    reply: OptionalText = Field(None, description="助手的回答（可选）")
    topic: OptionalText = Field(None, description="话题（可选）")

    @model_validator(mode="after")
    def _said(self) -> Self:
        if not self.text:
            raise argument_problem("remember needs text: what was said, or the note to keep")
        return self


_SCHEMAS: dict[str, tuple[str, dict[str, Any]]] = {
    tool["function"]["name"]: (tool["function"]["description"], tool["function"]["parameters"])
    for tool in [*TOOLS, ListSessions.tool_schema(), Remember.tool_schema()]
}


class MemoryTools:
    """The tools, run against one user's memory."""

    def __init__(self, runtime: Runtime, memory: Memory, allow_write: bool) -> None:
        self.runtime = runtime
        self.memory = memory
        self.allow_write = allow_write
        self._session: SessionHandle | None = None

    @property
    def names(self) -> list[str]:
        """The tools offered."""
        return [RECALL_MEMORY, RECALL_BY_ID, LIST_SESSIONS, *([REMEMBER] if self.allow_write else [])]

    async def call(self, name: str, arguments: dict[str, Any]) -> tuple[str, bool]:
        """The tool's text answer and whether it is an error."""
        if name not in self.names:
            return f"{ERROR_PREFIX}unknown tool '{name}' (available: {', '.join(self.names)})", True
        retry = self.runtime.loaded.config.serve.memory_retry_seconds
        kernel = await self.memory.kernel(retry)
        now = self.runtime.clock()
        if name in (RECALL_MEMORY, RECALL_BY_ID):
            window = self.runtime.loaded.config.retriever.context_window
            outcome = await asyncio.to_thread(run_tool, kernel, name, arguments, ToolContext(now, window))
            return outcome.content, bool(outcome.error)
        try:
            if name == LIST_SESSIONS:
                return await asyncio.to_thread(self._sessions, kernel, ListSessions.read(arguments)), False
            return await asyncio.to_thread(self._remember, kernel, Remember.read(arguments), now), False
        except (ArgumentError, KernelError) as exc:
            return f"{ERROR_PREFIX}{exc}", True

    def _sessions(self, kernel: Any, arguments: ListSessions) -> str:
        limit = arguments.limit or 20
        zone = self.runtime.zone.tz
        rows = [
            f"{s.session_id} | 📁 {s.session_file} | {s.last.astimezone(zone):%Y-%m-%d %H:%M} | "
            f"{plural(s.turns, 'turn')} | {s.first_text.splitlines()[0][:80] if s.first_text else ''}"
            for s in kernel.sessions()[:limit]
        ]
        return "\n".join(rows) if rows else "没有会话。(no sessions)"

    def _remember(self, kernel: Any, arguments: Remember, now: Any) -> str:
        text, reply = arguments.text, arguments.reply or ""
        chat = self.runtime.loaded.config.chat
        if (problem := chat.message_problem(text) or chat.message_problem(reply)) is not None:
            raise ArgumentError(problem)
        messages = (Message("user", text), Message("assistant", reply)) if reply else (Message("note", text),)
        if self._session is None:
            self._session = kernel.new_session(now)
        turn = kernel.append_turn(self._session, TurnDraft(messages, now, arguments.topic or ""))
        kept = "" if kernel.health.usable else " (memory is degraded: indexed when it is back)"
        return f"stored{kept}\n\n{anchor_line(turn.id, turn.prev_id, None, None)}\n\n📁 {turn.session_file}"


def build_server(tools: MemoryTools) -> Server[Any]:
    """The MCP server answering ``tools``."""

    async def list_tools(_ctx: Any, _params: Any) -> types.ListToolsResult:
        return types.ListToolsResult(
            tools=[
                types.Tool(name=name, description=_SCHEMAS[name][0], input_schema=_SCHEMAS[name][1])
                for name in tools.names
            ]
        )

    async def call_tool(_ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        text, failed = await tools.call(params.name, dict(params.arguments or {}))
        return types.CallToolResult(content=[types.TextContent(type="text", text=text)], is_error=failed)

    return Server(
        "huichat",
        version=__version__,
        instructions="Long-term memory of past conversations: search with recall_memory, "
        "walk prev/next anchors with recall_by_id.",
        on_list_tools=list_tools,
        on_call_tool=call_tool,
    )


def run_mcp(runtime: Runtime, user: str | None, allow_write: bool) -> int:
    """Serve MCP on stdin/stdout until the host closes the pipe.

    A read-only host names an existing user (a typo would serve an empty memory); one that may
    write may make a new user's memory, as a chat client's first message does."""
    stores = Stores(runtime)
    name = user or stores.owner
    if not allow_write:
        try:
            holders = [k.user for k in KeyRing.configured(runtime.loaded).entries()]
        except KeyRingError as exc:  # the users holding a key count as known: say why they cannot be read
            raise CommandError(str(exc)) from None
        known = stores.users(holders)
        if name not in known:
            raise CommandError(
                f"--user: no user '{name}' (users: {', '.join(known)}); "
                "--allow-write lets the host make a new user's memory",
                EXIT_USAGE,
            )
    memory = stores.memory(name)
    server = build_server(MemoryTools(runtime, memory, allow_write))

    async def serve() -> None:
        try:
            async with stdio_server() as (read_stream, write_stream):
                await server.run(read_stream, write_stream, server.create_initialization_options())
        finally:
            await stores.close()

    asyncio.run(serve())
    return 0

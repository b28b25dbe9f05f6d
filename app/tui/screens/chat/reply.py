"""The reply path: send a message, stream the answer, stop it, retry it."""

from __future__ import annotations

import asyncio
import contextlib
from typing import TYPE_CHECKING

from textual import on, work

from huichat.app.tui.screens.chat.memory import ChatMemory
from huichat.app.tui.widgets.chat_message import ChatMessage, call_label
from huichat.app.tui.widgets.prompt_input import PromptInput
from huichat.memory.errors import KernelError
from huichat.providers.errors import ProviderError

if TYPE_CHECKING:
    from huichat.app.session import ChatSession, SessionEvent


class ChatReply(ChatMemory):
    """The reply part of the chat screen."""

    @on(PromptInput.Submitted)
    def _submitted(self, event: PromptInput.Submitted) -> None:
        if self.replying:
            self.notify("Wait for the current reply to finish.", timeout=3)
            return
        problem = self.provider_problem() or self.huichat.runtime.loaded.config.chat.message_problem(event.text)
        if problem:  # the text stays in the prompt
            self.notify(problem, severity="error", timeout=8)
            return
        event.prompt.clear()
        if self.history is not None:
            self.history.add(event.text)
        self.send(event.text)

    def send(self, text: str) -> None:
        """Show the user's message at once and answer it in the background."""
        message = ChatMessage("user", text, label="you")
        self.transcript.mount(message)
        self.reply(text, message)

    async def _ensure_session(self) -> ChatSession:
        """The conversation loop, once memory and the LLM client are loaded (raises their errors)."""
        if self.session is None:
            from huichat.app.session import ChatSession

            kernel = await self.gateway.kernel()
            llm = await self.gateway.llm()
            session = ChatSession.from_runtime(self.huichat.runtime, kernel=kernel, llm=llm)
            if self.session_id is not None:
                await session.resume(self.session_id)
            if session.handle is None:
                session.role = self.role
            elif not session.role and self.role:  # a stored session never given one takes the chosen role
                await session.choose_role(self.role)
            self.role = session.role
            self.session = session
        return self.session

    @work(exclusive=True, group="reply", exit_on_error=False)
    async def reply(self, text: str, user_message: ChatMessage) -> None:
        """Run one reply: wait for memory if needed, stream, show recalls, store."""
        self.replying = True
        try:
            if not (self.gateway.memory.settled and self.gateway.llm_client.settled):
                self.huichat.start_llm()  # a reply needs it now, not after memory
                user_message.state = "waiting"
                user_message.set_note("waiting for memory and the model to load…")
            try:
                session = await self._ensure_session()
            except (KernelError, ProviderError) as exc:
                self.notify(str(exc), title="Cannot reply", severity="error", timeout=10)
                self.restore_prompt(text)
                user_message.remove()
                return
            user_message.state = "done"
            user_message.set_note("")
            self.panel.clear("Recalling…")
            provider = self.huichat.provider_name
            answer = ChatMessage("assistant", label=provider or "assistant")
            await self.transcript.mount(answer)
            answer.state = "streaming"
            try:
                # closed explicitly on a stop, so the session keeps the stopped turn at once
                async with contextlib.aclosing(session.reply(text, provider=provider)) as events:
                    async for event in events:
                        await self.show_event(event, answer)
            except asyncio.CancelledError:
                await self.show_stopped(session, text, answer)
                raise
        finally:
            self.replying = False

    async def show_stopped(self, session: ChatSession, text: str, answer: ChatMessage) -> None:
        """Settle a stopped reply: what arrived stays, marked stopped; F4 asks again."""
        await answer.finish("stopped")
        answer.set_note("■ stopped — F4 asks again")
        self.failed_text = text
        if session.handle is not None:  # the stopped turn may have started the session
            self.session_id = session.handle.session_id
            self.session_title = session.topic
            self.refresh_session_label()

    async def show_event(self, event: SessionEvent, answer: ChatMessage) -> None:
        """Render one event of the reply."""
        from huichat.app.session import RecallFinished, ReplyCompleted, ReplyFailed, ToolCalled
        from huichat.providers.events import TextDelta

        if isinstance(event, TextDelta):
            await answer.append(event.text)
        elif isinstance(event, ToolCalled):
            answer.add_tool_note(call_label(event.name, event.arguments))
        elif isinstance(event, RecallFinished):
            self.show_recall(event.results, event.turn, event.error)
        elif isinstance(event, ReplyCompleted):
            await answer.finish("done")
            self.failed_text = None
            self.session_id = event.turn.session_id
            self.session_title = event.turn.topic
            self.refresh_session_label()
            self.refresh_provider_status()  # auto may have learnt a new mode
            await self.update_memory_status()
            self.maintain_memory()
            if self.session is not None:
                self.refresh_title(self.session)
        elif isinstance(event, ReplyFailed):
            await answer.finish("failed")
            hint = "press F4 to retry" if event.turn is not None else "your message is back in the prompt"
            answer.set_note(f"⚠ {event.message} — {hint}")
            self.notify(event.message, title="Reply failed", severity="error", timeout=8)
            if event.turn is None:
                self.restore_prompt(event.user_text)
            else:
                self.failed_text = event.user_text
                self.session_id = event.turn.session_id
                self.session_title = event.turn.topic
                self.refresh_session_label()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "stop":
            return self.replying
        return True

    def action_stop(self) -> None:
        """Esc / ctrl+c while a reply streams: cancel it (the provider request and the tool loop with it)."""
        self.workers.cancel_group(self, "reply")

    def action_retry(self) -> None:
        """Send the last failed or stopped message again."""
        if self.replying:
            self.notify("Wait for the current reply to finish.", timeout=3)
            return
        if not self.failed_text:
            self.notify("Nothing to retry: the last reply did not fail or stop.", timeout=3)
            return
        text, self.failed_text = self.failed_text, None
        self.send(text)

"""The reply path: send a message, stream the answer, stop it, retry it."""

from __future__ import annotations

import asyncio
import contextlib
from typing import TYPE_CHECKING

from textual import on, work

from huichat.app.tui.screens.chat.memory import ChatMemory
from huichat.app.tui.widgets.chat_message import ChatMessage, LaterTurns, call_label
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
        too_long = self.huichat.runtime.loaded.config.chat.message_problem(event.text)
        problem = self.provider_problem() or (f"{too_long} · ctrl+l clears the prompt" if too_long else "")
        if problem:  # the text stays in the prompt
            self.notify(problem, severity="error", timeout=8)
            return
        event.prompt.take(event.text)
        if self.history is not None:
            self.history.add(event.text)
        editing = self.editing
        if editing is not None:
            self.leave_edit()  # the edit goes; what was being typed before it comes back
        self.send(event.text, editing)

    def send(self, text: str, in_place_of: str | None = None) -> None:
        """Show the user's message at once and answer it in the background; ``in_place_of`` a
        turn: the message starts a new branch there (that turn and what followed leave the view)."""
        if self._later and in_place_of is None and self.session_id is not None:
            # opened on an earlier turn: the message continues the conversation's end, shown first
            self.run_worker(self._send_at_the_end(text, self.session_id), group="reopen", exit_on_error=False)
            return
        if in_place_of is not None:
            for marker in self.transcript.query(LaterTurns):  # what followed leaves the view with it
                marker.remove()
            self._later = []
            shown = list(self.transcript.query(ChatMessage))
            first = next((i for i, m in enumerate(shown) if m.turn_id == in_place_of), len(shown))
            for widget in shown[first:]:
                widget.remove()
        message = ChatMessage("user", text, label="you")
        self.transcript.mount(message)
        # follow the conversation again: reading back up it (ctrl+up, ↑) let go of the end, and
        # the message and its reply were added out of sight
        self.transcript.anchor()
        self.reply(text, message, in_place_of)

    async def _send_at_the_end(self, text: str, session_id: str) -> None:
        await self.open_session(session_id)
        self._later = []  # shown at its end now (or, had it failed to open, sent below what is shown)
        self.send(text)

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
    async def reply(self, text: str, user_message: ChatMessage, in_place_of: str | None = None) -> None:
        """Run one reply: wait for memory if needed, stream, show recalls, store (as a new branch
        in place of turn ``in_place_of``, when given)."""
        self.replying = True
        self.recalled = None  # set when the panel waits for this reply's recall
        try:
            if not (self.gateway.memory.settled and self.gateway.llm_client.settled):
                self.huichat.start_llm()  # a reply needs it now, not after memory
                user_message.state = "waiting"
                user_message.set_note("waiting for memory and the model to load…")
            try:
                session = await self._ensure_session()
                if in_place_of is not None:
                    await session.branch_before(in_place_of)
            except (KernelError, ProviderError) as exc:
                self.notify(str(exc), title="Cannot reply", severity="error", timeout=10)
                self.restore_prompt(text)
                user_message.remove()
                return
            user_message.state = "done"
            user_message.set_note("")
            self.panel.clear("Waiting for the reply: memory is searched when it is needed…")
            self.recalled = False
            provider = self.huichat.provider_name
            answer = ChatMessage("assistant", label=provider or "assistant")
            await self.transcript.mount(answer)
            answer.state = "streaming"
            try:
                # closed explicitly on a stop, so the session keeps the stopped turn at once
                async with contextlib.aclosing(session.reply(text, provider=provider)) as events:
                    async for event in events:
                        await self.show_event(event, user_message, answer)
            except asyncio.CancelledError:
                await self.show_stopped(session, user_message, answer)
                raise
        finally:
            self.replying = False
            if self.recalled is False:  # the model answered (or stopped, or failed) without recalling
                self.panel.clear("Nothing recalled for this reply.")

    async def show_stopped(self, session: ChatSession, asked: ChatMessage, answer: ChatMessage) -> None:
        """Settle a stopped reply: what arrived stays, marked stopped; F4 asks again."""
        await answer.finish("stopped")
        answer.set_note("■ stopped — F4 asks again")
        if session.handle is not None:  # the stopped turn may have started the session
            kept = session.turns[-1] if session.turns else None
            if kept is not None and kept.messages[0].text == asked.text:  # stored as it was cancelled
                asked.turn_id = answer.turn_id = kept.id
            self.session_id = session.handle.session_id
            self.session_title = session.topic
            self.refresh_session_label()
            self.call_later(self.update_memory_status)  # the stopped turn is stored: it counts
            if kept is not None:  # a stopped F4, r or edit is a branch beside the reply it replaced
                await self.show_branches(kept.session_file)

    async def show_event(self, event: SessionEvent, asked: ChatMessage, answer: ChatMessage) -> None:
        """Render one event of the reply to ``asked``."""
        from huichat.app.session import RecallFinished, RecallStarted, ReplyCompleted, ReplyFailed, ToolCalled
        from huichat.providers.events import TextDelta

        if isinstance(event, TextDelta):
            await answer.append(event.text)
        elif isinstance(event, RecallStarted) and self.recalled is False:  # the first search of this reply
            self.panel.clear("Recalling…")
        elif isinstance(event, ToolCalled):
            answer.add_tool_note(call_label(event.name, event.arguments))
        elif isinstance(event, RecallFinished):
            self.recalled = True
            self.show_recall(event.results, event.turn, event.error)
        elif isinstance(event, ReplyCompleted):
            await answer.finish("done")
            asked.turn_id = answer.turn_id = event.turn.id
            self.session_id = event.turn.session_id
            self.session_title = event.turn.topic
            self.refresh_session_label()
            self.refresh_provider_status()  # auto may have learnt a new mode
            await self.update_memory_status()
            self.maintain_memory()
            if self.session is not None:
                self.refresh_title(self.session)
            await self.show_branches(event.turn.session_file)
        elif isinstance(event, ReplyFailed):
            await answer.finish("failed")
            hint = "press F4 to retry" if event.turn is not None else "your message is back in the prompt"
            answer.set_note(f"⚠ {event.message} — {hint}")
            self.notify(event.message, title="Reply failed", severity="error", timeout=8)
            if event.turn is None:
                self.restore_prompt(event.user_text)
            else:
                asked.turn_id = answer.turn_id = event.turn.id
                self.session_id = event.turn.session_id
                self.session_title = event.turn.topic
                self.refresh_session_label()
                await self.update_memory_status()  # the failed turn is stored: it counts
                await self.show_branches(event.turn.session_file)

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "stop":
            return self.replying
        return True

    def action_stop(self) -> None:
        """Esc / ctrl+c while a reply streams: cancel it (the provider request and the tool loop with it)."""
        self.workers.cancel_group(self, "reply")

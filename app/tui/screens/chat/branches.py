"""Branches in the chat: edit a message and send it again, ask a reply again, switch between them.

Each makes or picks a branch of the session (``memory.branches``): the new reply becomes the
current branch, the earlier one is kept beside it — ‹ n/m › on the turn, ← → to switch — and
the model's context, search and recall follow the current branch.
"""

from __future__ import annotations

from textual import on, work

from huichat.app.tui.screens.chat.reply import ChatReply
from huichat.app.tui.widgets.chat_message import ChatMessage
from huichat.memory.errors import KernelError


class ChatBranches(ChatReply):
    """The branch part of the chat screen."""

    def _turn_messages(self, turn_id: str) -> list[ChatMessage]:
        return [m for m in self.transcript.query(ChatMessage) if m.turn_id == turn_id]

    def _asked(self, turn_id: str) -> str:
        """The user's message of a turn on screen ('' when it has none)."""
        return next((m.text for m in self._turn_messages(turn_id) if m.role == "user"), "")

    @on(ChatMessage.TurnAction)
    async def _turn_action(self, event: ChatMessage.TurnAction) -> None:
        turn_id = event.message.turn_id
        if turn_id is None:
            return
        if self.replying:
            self.notify("Wait for the current reply to finish.", timeout=3)
        elif event.action == "edit":
            self.edit(turn_id)
        elif event.action == "regenerate":
            self.regenerate(turn_id)
        else:
            self.switch_branch(turn_id, event.step)

    def edit(self, turn_id: str) -> None:
        """Put a turn's message into the prompt; sending it starts a new branch in that turn's place."""
        text = self._asked(turn_id)
        if not text:
            self.notify("This turn has no message of yours to edit.", timeout=3)
            return
        if self.editing is None:  # what was being typed waits beside the edit (nothing typed is lost)
            self.draft = self.prompt.text if self.prompt.text.strip() and self.prompt.text != text else ""
        self.editing = turn_id
        self.prompt.text = text
        self.prompt.move_cursor(self.prompt.document.end)
        self.prompt.focus()
        self.notify("Editing: Enter sends it as a new branch (the earlier one is kept); Esc cancels.", timeout=6)

    def regenerate(self, turn_id: str) -> None:
        """Ask a turn's message again: the new reply is a new branch, the earlier one is kept beside it."""
        text = self._asked(turn_id)
        if not text:
            self.notify("This turn has no message of yours to ask again.", timeout=3)
            return
        if self.editing is not None:
            self.leave_edit()
        self.send(text, turn_id)

    def _target(self, what: str) -> str | None:
        """The focused message's turn, else the last turn shown; None (and why) while replying or with none."""
        if self.replying:
            self.notify("Wait for the current reply to finish.", timeout=3)
            return None
        focused = self.focused if isinstance(self.focused, ChatMessage) else None
        stored = [m.turn_id for m in self.transcript.query(ChatMessage) if m.turn_id is not None]
        turn_id = focused.turn_id if focused is not None and focused.turn_id else (stored[-1] if stored else None)
        if turn_id is None:
            self.notify(f"Nothing to {what} yet: no reply in this conversation.", timeout=3)
        return turn_id

    def action_regenerate(self) -> None:
        """F4: ask the focused turn's message again — else the last turn's (a failed, stopped or good reply)."""
        if (turn_id := self._target("regenerate")) is not None:
            self.regenerate(turn_id)

    def action_edit_last(self) -> None:
        """Palette: edit the last message (or the focused one) and send it again as a new branch."""
        if (turn_id := self._target("edit")) is not None:
            self.edit(turn_id)

    def action_switch_last(self, step: int) -> None:
        """Palette: the branch before or after the last turn's (or the focused one's)."""
        if (turn_id := self._target("switch")) is not None:
            self.switch_branch(turn_id, step)

    def action_focus_prompt(self) -> None:
        """Esc: back to typing (an edit in progress is cancelled: its text stays, to send as a new message)."""
        if self.editing is not None:
            if self.leave_edit():
                self.notify("Edit cancelled: what you were typing is back in the prompt.", timeout=4)
            else:
                self.notify("Edit cancelled: Enter now sends the text as a new message.", timeout=4)
        self.prompt.focus()

    @work(group="branch", exclusive=True, exit_on_error=False)
    async def switch_branch(self, turn_id: str, step: int) -> None:
        """Show and continue the branch ``step`` away from ``turn_id``'s, at the point where they part."""
        try:
            here = await self.gateway.turn(turn_id)
            if here is None:
                return
            tree = (await self.gateway.run(lambda kernel: kernel.read_session(here.session_file))).tree
            siblings = tree.siblings(turn_id)
            at = siblings.index(turn_id) + step
            if len(siblings) < 2 or not 0 <= at < len(siblings):
                self.notify("No other branch that way." if len(siblings) > 1 else "No other branch here.", timeout=3)
                return
            target = siblings[at]
            await self.gateway.run(lambda kernel: kernel.switch_branch(here.session_file, target))
        except KernelError as exc:
            self.notify(str(exc), title="Branches", severity="error")
            return
        await self.open_session(here.session_id)
        await self.update_memory_status()  # the branch taken may hold more turns, or fewer
        shown = self._turn_messages(target)
        if shown:
            shown[-1].focus()
            self.transcript.scroll_to_widget(shown[-1], animate=False)

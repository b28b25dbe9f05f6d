"""Sessions in the chat: open one, continue the last, start a new one, title, rename and export it."""

from __future__ import annotations

import asyncio
from functools import partial
from typing import TYPE_CHECKING, Any

from textual import on, work

from huichat.app.tui.screens.chat.provider import ChatProvider
from huichat.app.tui.widgets.chat_message import ChatMessage, EarlierTurns, LaterTurns, MoreTurns
from huichat.memory.errors import KernelError

if TYPE_CHECKING:
    from huichat.app.session import ChatSession
    from huichat.memory.kernel import MemoryKernel

_CONTINUE_CANDIDATES = 20
"""Sessions looked at, newest first, for the last one the user had in the terminal."""
SHOWN_TURNS = 40
"""Turns of a session shown when it opens, and shown more each time the user goes above them: a
session of 300 imported turns took 22–58 s to open (and 650 MB) with every message built at once."""


def _meta_of(session_file: str, kernel: MemoryKernel) -> dict[str, Any]:
    return kernel.session_meta(session_file)


class ChatSessions(ChatProvider):
    """The session part of the chat screen."""

    @work(group="title", exit_on_error=False)
    async def refresh_title(self, session: ChatSession) -> None:
        """Let the session title itself when due, beside the conversation (a reply never waits for it)."""
        titled = session.handle.session_id if session.handle else None
        title = await session.refresh_title(provider=self.huichat.provider_name)
        if title is not None and titled == self.session_id:
            self.session_title = title.text
            self.refresh_session_label()

    async def reread_title(self) -> None:
        """Show the title the session's transcript holds now (a turn was forgotten)."""
        if self.session is None or self.session.handle is None:
            return
        await self.session.reread_title()
        self.session_title = self.session.topic
        self.refresh_session_label()

    @work(group="title", exit_on_error=False)
    async def action_rename_session(self) -> None:
        """Palette: ask for the session's title (the current one to edit) and keep it as the user's own."""
        from huichat.app.tui.screens.ask_path import AskPathScreen

        session, session_id = self.session, self.session_id
        if session_id is None:
            self.notify("Nothing to rename yet: this session has no turn.", timeout=4)
            return
        asked = AskPathScreen(
            "New title for this session:",
            self.session_title,
            empty="A session's title cannot be empty.",
            enter="renames",
        )
        text = await self.app.push_screen_wait(asked)
        if text is None:
            return
        try:
            if session is not None and session.handle is not None and session.handle.session_id == session_id:
                title = await session.rename(text)
            else:  # shown, nothing said in it in this window yet: its conversation loop starts with the reply
                title = await self.gateway.run(lambda kernel: kernel.rename_session(session_id, text))
        except KernelError as exc:
            self.notify(str(exc), title="Rename", severity="error")
            return
        if session_id == self.session_id:
            self.session_title = title.text
            self.refresh_session_label()
        self.notify(f"Session renamed: {title.text}")

    async def action_new_session(self) -> None:
        """Start a new session: an empty transcript; memory keeps everything."""
        if self.replying:
            self.notify("Wait for the current reply to finish.", timeout=3)
            return
        if self.session is not None:
            self.session.start_new()
            self.session.role = self.role  # the role chosen stays for the next session
        self.session_id = None
        self.session_title = ""
        if self.editing is not None:
            self.leave_edit()
        await self.transcript.remove_children()
        self._earlier, self._later = [], []
        self.panel.clear()
        self.refresh_session_label()
        self.notify("New session.", timeout=2)

    @work(group="sessions", exit_on_error=False)
    async def action_open_session(self) -> None:
        """Choose a past session and continue it (not while a reply streams: it could not be opened)."""
        from huichat.app.tui.screens.sessions import SessionsScreen

        if self.replying:
            self.notify("Wait for the current reply to finish.", timeout=3)
            return
        try:
            infos = await self.gateway.sessions()
        except KernelError as exc:
            self.notify(str(exc), title="Sessions", severity="error")
            return
        chosen = await self.app.push_screen_wait(SessionsScreen(infos, self.huichat.runtime.zone.tz, self.session_id))
        if chosen:
            await self.open_session(chosen)

    async def continue_last_session(self) -> None:
        """At start-up: show the session the chat showed when it last closed, else the user's most recent
        one, and continue it (ctrl+n starts a new one)."""
        try:
            infos = await self.gateway.sessions()
        except KernelError:
            return
        shown = self.huichat.last_session.session_id()
        for info in [i for i in infos if i.session_id == shown] + infos[:_CONTINUE_CANDIDATES]:
            if self.session_id is not None or self.replying:
                return
            try:
                meta = await self.gateway.run(partial(_meta_of, info.session_file))
            except KernelError:
                return
            # an API client's conversation (huichat serve) is not the user's own, unless the user had it open
            if meta.get("face") != "serve" or info.session_id == shown:
                await self.open_session(info.session_id, note="Continuing your last session · ctrl+n starts a new one")
                return

    async def open_session(self, session_id: str, note: str = "", *, at: str | None = None) -> None:
        """Show a stored session's transcript and continue its anchor chain (``at``: on that turn, focused)."""
        if self.replying:
            self.notify("Wait for the current reply to finish.", timeout=3)
            return
        try:
            turns = await self.gateway.run(lambda kernel: kernel.session_turns(session_id))
        except KernelError as exc:
            self.notify(str(exc), severity="error")
            return
        if not turns:
            self.notify(f"No session '{session_id}'.", severity="error")
            return
        self.session_status = "opening the session…"
        if self.session is not None:
            await self.session.resume(session_id)
            self.role = self.session.role
        self.session_id = session_id
        self.session_title = self.session.topic if self.session is not None else turns[-1].topic
        if self.editing is not None:
            self.leave_edit()
        self.panel.clear()
        await self.transcript.remove_children()
        place = next((i for i, turn in enumerate(turns) if turn.id == at), None)
        # the last SHOWN_TURNS, or those from the turn asked for (two before it, for its context) on
        start = max(0, len(turns) - SHOWN_TURNS) if place is None else max(0, min(len(turns) - SHOWN_TURNS, place - 2))
        end = start + SHOWN_TURNS
        self._earlier, self._later = list(turns[:start]), list(turns[end:])
        widgets: list[Any] = [EarlierTurns(len(self._earlier))] if self._earlier else []
        widgets += [widget for turn in turns[start:end] for widget in ChatMessage.for_turn(turn)]
        if self._later:
            widgets.append(LaterTurns(len(self._later)))
        if note:
            widgets.append(ChatMessage("system", note, label="huichat"))
        await self.transcript.mount_all(widgets)
        self.refresh_session_label()
        await self.show_branches(turns[-1].session_file)
        asked = [m for m in self.transcript.query(ChatMessage) if at is not None and m.turn_id == at]
        if asked:
            asked[0].focus()
            self.transcript.scroll_to_widget(asked[0], animate=False, top=True)
            return
        self.transcript.scroll_end(animate=False)
        if at is not None:  # forgotten since, or on a branch the conversation no longer follows
            self.notify(f"Turn {at} is not on this conversation's current path.", timeout=5)

    async def show_earlier(self) -> ChatMessage | None:
        """Show the ``SHOWN_TURNS`` turns before those shown (the view stays where it was); the first
        message shown before them, None when every turn is shown already."""
        earlier = self._earlier
        markers = list(self.transcript.query(EarlierTurns))
        if not earlier or not markers:
            return None
        chunk, self._earlier = earlier[-SHOWN_TURNS:], earlier[:-SHOWN_TURNS]
        shown = list(self.transcript.query(ChatMessage))
        widgets = [widget for turn in chunk for widget in ChatMessage.for_turn(turn)]
        await self.transcript.mount_all(widgets, after=markers[0])
        if self._earlier:
            markers[0].count = len(self._earlier)
        else:
            await markers[0].remove()
        if shown:
            self.transcript.scroll_to_widget(shown[0], animate=False, top=True)
        await self.show_branches(chunk[0].session_file)
        return shown[0] if shown else None

    async def show_later(self) -> ChatMessage | None:
        """Show the ``SHOWN_TURNS`` turns after those shown; the first of their messages, None when
        every turn is shown already."""
        markers = list(self.transcript.query(LaterTurns))
        if not self._later or not markers:
            return None
        chunk, self._later = self._later[:SHOWN_TURNS], self._later[SHOWN_TURNS:]
        widgets = [widget for turn in chunk for widget in ChatMessage.for_turn(turn)]
        await self.transcript.mount_all(widgets, before=markers[0])
        if self._later:
            markers[0].count = len(self._later)
        else:
            await markers[0].remove()
        await self.show_branches(chunk[0].session_file)
        return widgets[0] if widgets else None

    @on(MoreTurns.Wanted)
    async def _more_wanted(self, event: MoreTurns.Wanted) -> None:
        if isinstance(event.marker, LaterTurns):
            await self.show_later()
        else:
            await self.show_earlier()

    async def show_branches(self, session_file: str) -> None:
        """Mark each turn with branches beside it ‹ n/m › (on its last message), as its transcript says."""
        try:
            tree = (await self.gateway.run(lambda kernel: kernel.read_session(session_file))).tree
        except KernelError:
            return
        last = {m.turn_id: m for m in self.transcript.query(ChatMessage) if m.turn_id is not None}
        for turn_id, message in last.items():
            siblings = tree.siblings(turn_id)
            message.set_branch(siblings.index(turn_id) + 1 if turn_id in siblings else 1, len(siblings))

    @work(group="export", exit_on_error=False)
    async def action_export_session(self) -> None:
        """Palette: this session as Markdown into a folder the user picks (one file per session, as the CLI)."""
        from pathlib import Path

        from huichat.app.tui.screens.ask_path import AskPathScreen
        from huichat.memory.exports import ExportFormat
        from huichat.memory.exports.selection import Selection
        from huichat.memory.exports.writer import export

        session_id = self.session_id
        if session_id is None:
            self.notify("Nothing to export yet: this session has no turn.", timeout=4)
            return
        asked = AskPathScreen(f"Export session {session_id} as Markdown into the folder:", str(Path.cwd()))
        folder = await self.app.push_screen_wait(asked)
        if folder is None:
            return
        runtime = self.huichat.runtime
        out = Path(folder).expanduser()
        try:
            report = await asyncio.to_thread(
                export,
                runtime.loaded.paths.sessions_dir,
                ExportFormat.MARKDOWN,
                out,
                Selection(None, None, session_id),
                runtime.zone.tz,
            )
        except (KernelError, OSError) as exc:
            self.notify(str(exc), title="Export", severity="error", timeout=8)
            return
        if report.path is None:
            self.notify(f"Session {session_id} was not found in the transcripts.", severity="error")
            return
        self.notify(f"Exported to {report.path / f'{session_id}.md'}", title="Export", timeout=8)

"""Which server-side session a client's request continues.

OpenAI-style clients send the whole conversation each time. The last user message is the
question; the earlier messages say which conversation it belongs to:

- ``X-Huichat-Session: <id>`` continues that stored session of the caller's user (the id
  comes back in every reply's ``X-Huichat-Session`` header);
- otherwise the earlier user and assistant messages are hashed: after each reply the
  server remembers the hash of the conversation *including* that reply, so the client's
  next request (which sends it back) continues the same session.

On one machine the hashes are also appended to the user's ``serve-conversations.jsonl``
(0600; hashes only, no words), so a conversation continues its session after a restart.
A conversation the server does not know (a new client, or one forgotten) starts a new
session; its earlier messages are given to the model as context but are not stored (the
client owns them). Client system messages are not used: the server's system prompt
carries the memory rules.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import json
import logging
import os
import re
import threading
from collections import OrderedDict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from huichat.app.runtime import Runtime
from huichat.app.session import ChatSession
from huichat.memory.errors import KernelError
from huichat.memory.objectstore import Conflict, ObjectStore, StoreError
from huichat.memory.turns import Message, Turn

if TYPE_CHECKING:
    from huichat.memory.kernel import MemoryKernel
    from huichat.providers.llm import LLMClient

log = logging.getLogger("huichat.serve")
SESSION_HEADER = "X-Huichat-Session"
SESSION_ID = re.compile(r"^[A-Za-z0-9_-]{1,64}$")
_REMEMBERED = 20_000
"""Conversation hashes kept (oldest forgotten first); a forgotten one starts a new session."""
SAVED_FILE = "serve-conversations.jsonl"
"""In a user's data folder (one machine): ``{"said": hash, "session": id}`` a line, oldest first."""


class UnknownSession(KernelError):
    """An ``X-Huichat-Session`` that names no session of this user."""


class BadSessionId(KernelError):
    """An ``X-Huichat-Session`` that is not a session id at all."""


def message_text(content: Any) -> str:
    """The text of an OpenAI message ``content``: a string, or a list of parts (text parts joined)."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        texts = [str(p.get("text", "")) for p in content if isinstance(p, dict) and p.get("type") == "text"]
        return "\n".join(t for t in texts if t)
    return ""


def dialogue(messages: Iterable[Mapping[str, Any]]) -> list[tuple[str, str]]:
    """The user and assistant messages as (role, text); system and tool messages left out."""
    return [
        (str(m["role"]), message_text(m.get("content")))
        for m in messages
        if m.get("role") in ("user", "assistant") and message_text(m.get("content"))
    ]


def digest(user: str, said: Sequence[tuple[str, str]]) -> str:
    """The hash naming a conversation of ``user`` by what was said in it."""
    payload = json.dumps([user, [[role, text.strip()] for role, text in said]], ensure_ascii=False)
    return hashlib.sha256(payload.encode()).hexdigest()


@dataclass
class Conversation:
    """One server-side session and the lock that keeps its replies in order."""

    session: ChatSession
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)

    @property
    def session_id(self) -> str | None:
        """The stored session's id (None until its first turn is stored)."""
        return self.session.handle.session_id if self.session.handle else None


class Conversations:
    """Server-side sessions per (user, conversation).

    With a shared store (replicas) nothing of a conversation stays in this process between
    requests: the conversation's hash names its session in the store
    (``users/<name>/conversations/<hash>``, written once before the reply ends), and every
    request resumes the session from the memory, which the request brought up to date — so
    whichever replica gets the next request continues it."""

    def __init__(self, runtime: Runtime, shared: ObjectStore | None = None) -> None:
        self.runtime = runtime
        self.shared = shared
        self._by_hash: OrderedDict[str, Conversation] = OrderedDict()
        self._by_id: dict[tuple[str, str], Conversation] = {}
        self._saved: dict[str, OrderedDict[str, str]] = {}
        """Per user: conversation hash -> session id, as read from its ``SAVED_FILE`` (one machine)."""
        self._saved_lock = threading.Lock()
        """Replies of one user end in worker threads at once: one reads or appends at a time."""

    async def find(
        self,
        user: str,
        kernel: MemoryKernel,
        llm: LLMClient,
        earlier: Sequence[tuple[str, str]],
        session_id: str | None,
    ) -> Conversation:
        """The conversation to continue, or a new one seeded with ``earlier`` as context."""
        if session_id is None and earlier and self.shared is not None:
            session_id = await asyncio.to_thread(self._stored_session, user, digest(user, earlier))
        if session_id is not None:
            return await self._named(user, kernel, llm, session_id)
        known = self._by_hash.get(digest(user, earlier)) if earlier and self.shared is None else None
        if known is not None:
            known.session.continue_in(kernel)
            return known
        if earlier and self.shared is None:  # this process was restarted since: the file knows
            saved = await asyncio.to_thread(self._saved_of, user, kernel.data_dir)
            if (stored_id := saved.get(digest(user, earlier))) is not None:
                with contextlib.suppress(UnknownSession):  # a session gone since starts anew
                    return await self._named(user, kernel, llm, stored_id)
        session = ChatSession.from_runtime(self.runtime, kernel=kernel, llm=llm)
        session.face = "serve"  # the terminal app does not continue an API client's session at start-up
        session.turns = _context_turns(earlier, self.runtime.clock())
        return Conversation(session)

    async def _named(self, user: str, kernel: MemoryKernel, llm: LLMClient, session_id: str) -> Conversation:
        if not SESSION_ID.match(session_id):
            raise BadSessionId(f"'{session_id[:64]}' is not a session id ({SESSION_HEADER})")
        known = self._by_id.get((user, session_id)) if self.shared is None else None
        if known is None:
            session = ChatSession.from_runtime(self.runtime, kernel=kernel, llm=llm)
            try:
                await session.resume(session_id)
            except KernelError:
                raise UnknownSession(f"no session '{session_id}'") from None
            if self.shared is not None:
                return Conversation(session)
            known = self._by_id.setdefault((user, session_id), Conversation(session))
        known.session.continue_in(kernel)
        return known

    def _stored_session(self, user: str, said_digest: str) -> str | None:
        assert self.shared is not None
        found = self.shared.get(_conversation_object(user, said_digest))
        return found.body.decode("utf-8") if found is not None else None

    async def remember(self, user: str, conversation: Conversation, said: Sequence[tuple[str, str]]) -> None:
        """After a reply: the conversation as it now stands (``said`` ends with the reply) leads here."""
        session_id = conversation.session_id
        if self.shared is not None:
            if session_id is not None:
                name = _conversation_object(user, digest(user, said))
                try:
                    await asyncio.to_thread(self.shared.create, name, session_id.encode("utf-8"))
                except Conflict:
                    pass  # the same words said again lead to the same session
                except StoreError as exc:  # the reply stands; only its continuation elsewhere is lost
                    log.warning("cannot record conversation of %s in the store: %s", user, exc)
            return
        if session_id is not None:
            self._by_id.setdefault((user, session_id), conversation)
            data_dir = conversation.session.kernel.data_dir
            await asyncio.to_thread(self._save, user, data_dir, digest(user, said), session_id)
        self._by_hash[digest(user, said)] = conversation
        self._by_hash.move_to_end(digest(user, said))
        while len(self._by_hash) > _REMEMBERED:
            self._by_hash.popitem(last=False)
        if len(self._by_id) > _REMEMBERED:
            live = {id(c) for c in self._by_hash.values()}
            for key in [k for k, c in self._by_id.items() if id(c) not in live]:
                del self._by_id[key]

    def _saved_of(self, user: str, data_dir: Path) -> OrderedDict[str, str]:
        """The user's saved hashes, read once (a damaged line is skipped: the cost is a new session)."""
        with self._saved_lock:
            return self._read_saved(user, data_dir)

    def _read_saved(self, user: str, data_dir: Path) -> OrderedDict[str, str]:
        if user not in self._saved:
            saved: OrderedDict[str, str] = OrderedDict()
            with contextlib.suppress(FileNotFoundError):
                for line in (data_dir / SAVED_FILE).read_text(encoding="utf-8").splitlines():
                    with contextlib.suppress(ValueError, TypeError, KeyError):
                        entry = json.loads(line)
                        saved[str(entry["said"])] = str(entry["session"])
                        saved.move_to_end(str(entry["said"]))
            while len(saved) > _REMEMBERED:
                saved.popitem(last=False)
            self._saved[user] = saved
        return self._saved[user]

    def _save(self, user: str, data_dir: Path, said_digest: str, session_id: str) -> None:
        with self._saved_lock:
            self._append_saved(user, data_dir, said_digest, session_id)

    def _append_saved(self, user: str, data_dir: Path, said_digest: str, session_id: str) -> None:
        saved = self._read_saved(user, data_dir)
        saved[said_digest] = session_id
        saved.move_to_end(said_digest)
        path = data_dir / SAVED_FILE
        try:
            if len(saved) > _REMEMBERED:  # the oldest go: the file is written anew, once in a while
                while len(saved) > _REMEMBERED // 2:
                    saved.popitem(last=False)
                lines = "".join(_saved_line(k, v) for k, v in saved.items())
                descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
            else:
                lines = _saved_line(said_digest, session_id)
                descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
            with os.fdopen(descriptor, "w", encoding="utf-8") as file:
                file.write(lines)
        except OSError as exc:  # the reply stands; only its continuation after a restart is lost
            log.warning("cannot save conversation of %s in %s: %s", user, path, exc)


def _saved_line(said_digest: str, session_id: str) -> str:
    return json.dumps({"said": said_digest, "session": session_id}) + "\n"


def _conversation_object(user: str, said_digest: str) -> str:
    return f"users/{user}/conversations/{said_digest}"


def _context_turns(earlier: Sequence[tuple[str, str]], now: datetime) -> list[Turn]:
    """The client's earlier messages as unstored turns, so the model sees them as the conversation so far."""
    turns: list[Turn] = []
    pending: list[Message] = []
    for role, text in earlier:
        if role == "user" and pending:
            turns.append(Turn("", "", "", len(turns), now, tuple(pending)))
            pending = []
        pending.append(Message(role, text))
    if pending:
        turns.append(Turn("", "", "", len(turns), now, tuple(pending)))
    return turns

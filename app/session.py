"""One conversation in takeover mode: context, streaming, memory tools, storing the turn.

``ChatSession.reply(text)`` is an async generator of events; screens only render them,
so the whole loop runs (and is tested) without a terminal. Blocking kernel calls run in
a thread. A reply never raises: whatever fails ends it with ``ReplyFailed``, after the
user's message was kept as a failed turn (or, when even that fails, handed back).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncGenerator, AsyncIterator, Callable
from contextlib import aclosing
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Any

from huichat.app.config import ChatConfig
from huichat.app.hit_check import answering_hits
from huichat.app.memory_modes import Choice, ModeBook
from huichat.app.prompts import (
    ALREADY_HAVE,
    ANSWER_NOW,
    CUT_SHORT,
    EMPTY_ANSWER,
    IN_WORDS,
    NO_ANSWER,
    language_of_message,
    memory_block,
    prompt_results,
    question_note,
    system_prompt,
    time_note,
    without_time_note,
)
from huichat.app.rounds import EchoCut, Progress, call_key, round_messages
from huichat.app.runtime import Runtime, Zone
from huichat.app.titles import model_title, title_due
from huichat.app.tool_arguments import RECALL_MEMORY, TOOL_NAMES, TOOLS
from huichat.app.tools import ToolContext, ToolOutcome, run_tool, search
from huichat.memory.errors import KernelError
from huichat.memory.kernel import MemoryKernel, SessionHandle
from huichat.memory.results import SearchRequest, SearchResults
from huichat.memory.turns import (
    STATUS_FAILED,
    STATUS_OK,
    STOPPED,
    TITLE_LOCAL,
    TITLE_MODEL,
    TITLE_USER,
    Message,
    SessionTitle,
    Turn,
    TurnDraft,
    derive_topic,
    local_title,
)
from huichat.providers.config import ProviderConfig
from huichat.providers.errors import ProviderError
from huichat.providers.events import ReplyDone, TextDelta, ToolCallRequest
from huichat.providers.llm import LLMClient

Clock = Callable[[], datetime]
_log = logging.getLogger(__name__)


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
    """The model asked for a tool (shown in the transcript as a small note).

    A ``repeated`` call (same tool, same arguments, earlier in this reply) is not run again:
    no ``RecallStarted``/``RecallFinished`` follow it.
    """

    name: str
    arguments: dict[str, Any]
    from_text: bool = False
    repeated: bool = False


@dataclass(frozen=True)
class ReplyCompleted:
    """The reply is complete and its turn is stored; ``rounds`` counts the tool rounds it took."""

    turn: Turn
    text: str
    model: str
    rounds: int = 0


@dataclass(frozen=True)
class ReplyFailed:
    """The reply failed or produced no answer; ``turn`` is the failed turn kept in the transcript
    (None if it could not be kept: then ``user_text`` must go back to the user)."""

    message: str
    user_text: str
    turn: Turn | None = None
    rounds: int = 0


SessionEvent = RecallStarted | RecallFinished | ToolCalled | TextDelta | ReplyCompleted | ReplyFailed


def _shown(text: str, said: list[str], progress: Progress) -> list[TextDelta]:
    """``text`` of this round's answer as deltas to show, recorded in ``said`` and the reply's progress
    (a round that speaks after earlier rounds' words starts a new paragraph)."""
    if not text:
        return []
    deltas = []
    if not said and progress.shown and not progress.answer.endswith("\n"):
        progress.shown.append("\n\n")
        deltas.append(TextDelta("\n\n"))
    said.append(text)
    progress.shown.append(text)
    deltas.append(TextDelta(text))
    return deltas


def estimate_tokens(text: str) -> int:
    """A rough token count: one per CJK character, one per four other characters."""
    cjk = sum(1 for ch in text if "\u3400" <= ch <= "\u9fff")
    return cjk + (len(text) - cjk) // 4 + 1


def _reason(exc: Exception) -> str:
    if isinstance(exc, ProviderError | KernelError):
        return str(exc)
    _log.error("the reply failed", exc_info=exc)
    return f"unexpected error ({type(exc).__name__}: {exc})"


@dataclass(kw_only=True, eq=False)
class ChatSession:
    """The current conversation: its handle in memory and the loop that answers.

    Faces build it with ``from_runtime``. Which provider answers is the caller's to say at
    each reply (the TUI's choice, a request's ``model``): the session does not hold it.
    """

    kernel: MemoryKernel
    llm: LLMClient
    config: ChatConfig
    clock: Clock
    zone: Zone
    context_window: int = 1
    """Neighbouring turns (±N) a tool's search shows around each hit."""
    face: str = ""
    """Which face starts its sessions when not the terminal (``serve``): recorded, so the TUI does not continue them."""
    modes: ModeBook = field(default_factory=lambda: ModeBook(None))
    """How each provider gets at memory (``memory_modes``): shared by the process's sessions."""
    handle: SessionHandle | None = field(default=None, init=False)
    """Where the next turn goes (None: the next message starts a new session)."""
    turns: list[Turn] = field(default_factory=list, init=False)
    topic: str = field(default="", init=False)
    """Every new turn's topic: the session's title."""
    title: SessionTitle | None = field(default=None, init=False)
    """The title recorded in the session's transcript (None: not yet)."""
    role: str = field(default="", init=False)
    """The session's role (a name in ``chat.roles``; '': none), recorded in its transcript."""
    _titled_at: int | None = field(default=None, init=False)
    _language_of_session: str = field(default="", init=False)
    _set_aside: frozenset[str] = field(default=frozenset(), init=False)
    """The turns a new branch is about to replace (``branch_before``): still on the current branch
    in the index until the next turn is written, they are no memory for the reply that replaces
    them (asked again, "我的牙医是谁？" found the very answer being replaced, at 1.000)."""

    @classmethod
    def from_runtime(cls, runtime: Runtime, *, kernel: MemoryKernel, llm: LLMClient) -> ChatSession:
        """A new conversation as configured: chat settings, clock, zone and context window from ``runtime``."""
        config = runtime.loaded.config
        return cls(
            kernel=kernel,
            llm=llm,
            config=config.chat,
            clock=runtime.clock,
            zone=runtime.zone,
            context_window=config.retriever.context_window,
            modes=ModeBook.shared(runtime.loaded.paths.data_dir),
        )

    def memory_mode(self, provider: str | None = None) -> Choice:
        """The mode ``provider`` (None: the default) answers in now, and why."""
        return self.modes.choose(provider or self.llm.default or "", self.llm.provider(provider))

    def continue_in(self, kernel: MemoryKernel) -> None:
        """Go on in ``kernel``: the same memory opened again (the server reopens a degraded one).

        The handle and the turns stay valid: they name transcripts and turns, not the kernel object.
        """
        self.kernel = kernel

    async def resume(self, session_id: str) -> None:
        """Continue ``session_id``'s anchor chain from now on."""
        self.handle = await asyncio.to_thread(self.kernel.resume_session, session_id)
        self.turns = await asyncio.to_thread(self.kernel.session_turns, session_id)
        self._set_aside = frozenset()
        meta = await asyncio.to_thread(self.kernel.session_meta, self.handle.session_file)
        self.title = SessionTitle.from_meta(meta)
        self.role = str(meta.get("role") or "")
        self.topic = self.title.text if self.title else (self.turns[-1].topic if self.turns else "")
        # a session from before titles keeps its topic until enough new turns are said
        self._titled_at = self.title.turns if self.title else len(self.turns)
        first = next((m.text for t in self.turns for m in t.messages if m.role == "user" and m.is_chat), "")
        self._language_of_session = language_of_message(first) if first else ""

    async def reread_title(self) -> None:
        """The title as the transcript holds it now: forgetting the turn a local title was cut
        from gives the session the title of the first turn left."""
        if self.handle is None:
            return
        meta = await asyncio.to_thread(self.kernel.session_meta, self.handle.session_file)
        if "title" in meta:
            self.title = SessionTitle.from_meta(meta)
            self.topic = self.title.text if self.title else ""

    async def branch_before(self, turn_id: str) -> None:
        """The next reply starts a new branch in place of turn ``turn_id`` (a message edited and
        sent again, a reply asked again); that turn and those after it are kept beside it."""
        if self.handle is None:
            raise KernelError("nothing to branch from: this session has no turn yet")
        self.handle = await asyncio.to_thread(self.kernel.branch_before, self.handle.session_id, turn_id)
        self._set_aside = frozenset(t.id for t in self.turns if t.turn_index >= self.handle.next_index)
        self.turns = [t for t in self.turns if t.turn_index < self.handle.next_index]

    async def switch_branch(self, turn_id: str) -> None:
        """Continue on the branch through turn ``turn_id``: it is the model's context from now on."""
        if self.handle is None:
            raise KernelError("this session has no branches yet")
        await asyncio.to_thread(self.kernel.switch_branch, self.handle.session_file, turn_id)
        self._set_aside = frozenset()
        self.handle = await asyncio.to_thread(self.kernel.resume_session, self.handle.session_id)
        self.turns = await asyncio.to_thread(self.kernel.session_turns, self.handle.session_id)

    def start_new(self) -> None:
        """Forget the current session; the next message starts a new one."""
        self.handle = None
        self.turns = []
        self._set_aside = frozenset()
        self.topic = ""
        self.title = None
        self.role = ""
        self._titled_at = None
        self._language_of_session = ""

    async def choose_role(self, name: str) -> None:
        """Answer in role ``name`` ('' : none) from the next reply on; a stored session records it."""
        if name and name not in self.config.roles:
            raise KernelError(f"no role '{name}' (chat.roles: {', '.join(self.config.roles) or 'none configured'})")
        self.role = name
        if self.handle is not None:
            await asyncio.to_thread(self.kernel.update_session, self.handle.session_file, {"role": name})

    # ---------------------------------------------------------------- context

    def _language(self, text: str) -> str:
        """The prompt's language: configured, else the session's first message's (so the prompt stays cached)."""
        if self.config.prompt_language != "auto":
            return self.config.prompt_language
        if not self._language_of_session:
            self._language_of_session = language_of_message(text)
        return self._language_of_session

    def _notes_language(self, text: str) -> str:
        """The language of the memory block and the notes about one message's answer: configured, else
        the message's own. The system prompt, the history and the time line its rules refer to stay in
        the session's (``_language``, so a server's prompt cache holds): an English question in a
        session begun in Chinese is not told to answer "我不记得了"."""
        if self.config.prompt_language != "auto":
            return self.config.prompt_language
        return language_of_message(text)

    def _history(self, language: str, forgotten: frozenset[str]) -> tuple[list[dict[str, Any]], frozenset[str]]:
        """The session's recent turns within the token budget, as chat messages, and their ids.

        A failed reply is left out, and so is a turn ``forgotten`` since; a stopped one stays
        (the user saw it and may answer it), marked as cut short (``CUT_SHORT``, in ``language``)."""
        budget = self.config.context_token_budget
        picked: list[dict[str, Any]] = []
        ids: set[str] = set()
        for turn in reversed(self.turns):
            stopped = dict(turn.extra).get("error") == STOPPED
            if (turn.status == STATUS_FAILED and not stopped) or turn.id in forgotten:
                continue
            pair = [
                {"role": "assistant" if m.role == "assistant" else "user", "content": m.text}
                for m in turn.messages
                if m.is_chat
            ]
            if stopped:
                cut = CUT_SHORT[language]
                if pair and pair[-1]["role"] == "assistant":
                    pair[-1]["content"] += f"\n\n{cut}"
                else:  # stopped before a word arrived
                    pair.append({"role": "assistant", "content": cut})
            cost = sum(estimate_tokens(m["content"]) for m in pair)
            if cost > budget:
                break
            budget -= cost
            picked[:0] = pair
            ids.add(turn.id)
        return picked, frozenset(ids)

    def build_messages(
        self,
        text: str,
        now: datetime,
        history: list[dict[str, Any]],
        injected: str = "",
        *,
        tools: bool = True,
        after: str = "",
    ) -> list[dict[str, Any]]:
        """The request: the (unchanging) system prompt, the recent turns, the memory block, then the new
        message with the time (``tools``: the request offers the memory tools, and its rules say how) and
        ``after`` it a note of the app's (``question_note``: what small models read last, they follow)."""
        language = self._language(text)
        role = self.config.roles.get(self.role, "")
        system = system_prompt(language, role, tools=tools)
        messages: list[dict[str, Any]] = [{"role": "system", "content": system}, *history]
        if injected:
            messages.append({"role": "system", "content": injected})
        note = time_note(language, now.astimezone(self.zone.tz), self.zone.name, weeks=tools)
        messages.append({"role": "user", "content": f"{note}\n{text}\n\n{after}" if after else f"{note}\n{text}"})
        return messages

    # ------------------------------------------------------------------ reply

    async def reply(self, text: str, *, provider: str | None = None) -> AsyncGenerator[SessionEvent, None]:
        """Answer ``text`` with ``provider`` (None: the configured default): stream the reply,
        run memory tools, then store the turn. Never raises."""
        now = self.clock()
        progress = Progress()
        try:
            async for event in self._answer(text, provider, now, progress):
                yield event
        except Exception as exc:  # the reply's boundary: a failure ends the reply, never its caller (a TUI worker)
            yield await self._store_failed(text, progress, _reason(exc), now)
        except (asyncio.CancelledError, GeneratorExit):
            if not progress.storing:  # stopped (the app closing, the reader gone): keep what was typed, then stop
                self._keep_stopped(text, progress, now)
            raise

    async def _answer(
        self, text: str, provider_name: str | None, now: datetime, progress: Progress
    ) -> AsyncIterator[SessionEvent]:
        language = self._language(text)
        notes = self._notes_language(text)
        progress.provider = provider_name or self.llm.default or ""
        # forgotten meanwhile, here or by another huichat (the transcript says): out of the context too
        session_file = self.handle.session_file if self.handle is not None and self.turns else None
        forgotten = await asyncio.to_thread(self.kernel.forgotten_in, session_file) if session_file else frozenset()
        history, in_context = self._history(language, forgotten)
        in_context |= self._set_aside
        provider = self.llm.provider(provider_name)
        choice = self.memory_mode(provider_name)
        recall_first = self.config.auto_recall or choice.recalls_first
        context = ToolContext(now, self.context_window, in_context, question=text, memory_block=recall_first)
        injected = after = ""
        if recall_first:
            top_k = self.config.auto_recall_top_k
            query = text.strip()[: self.kernel.config.max_query_chars]  # a long message is recalled by its start
            arguments: dict[str, Any] = {"query": query, "top_k": top_k}
            yield RecallStarted("auto", RECALL_MEMORY, arguments, "auto")
            outcome = await self._guarded(
                RECALL_MEMORY, lambda: search(self.kernel, query, replace(context, context_window=0), top_k=top_k)
            )
            if outcome.results is not None:  # with no hit, the one candidate that stands out, marked uncertain
                shown = prompt_results(outcome.results)
                if not choice.offers_tools and shown.hits:  # memory-first: the model says which answer the message
                    shown = await answering_hits(self.llm, provider_name, text, shown, self.modes)
                outcome = replace(outcome, results=shown, recalled_ids=tuple(h.turn.id for h in shown.hits))
            yield RecallFinished("auto", RECALL_MEMORY, arguments, outcome.results, None, outcome.error, "auto")
            progress.recalled.extend(outcome.recalled_ids)
            if outcome.results is not None:
                injected = memory_block(outcome.results, self.zone.tz, notes, explained=not choice.offers_tools)
                # memory-first: the block is all the model sees of memory (a failed search says nothing)
                after = "" if choice.offers_tools else question_note(outcome.results, notes, text)
        messages = self.build_messages(text, now, history, injected, tools=choice.offers_tools, after=after)
        ran: set[str] = set()
        answer_now = not choice.offers_tools
        asked_in_words = False
        for round_number in range(self.config.max_tool_rounds + 1):
            final_round = round_number == self.config.max_tool_rounds
            final = answer_now or final_round
            if final and progress.rounds > 0:
                messages.append({"role": "user", "content": ANSWER_NOW[notes]})
            done: ReplyDone | None = None
            said: list[str] = []
            echo = EchoCut()
            offered = None if final else TOOLS
            async with aclosing(
                self.llm.stream(messages, offered, tool_names=TOOL_NAMES, provider=provider_name)
            ) as stream:
                async for event in stream:
                    if isinstance(event, TextDelta):
                        for delta in _shown(echo.feed(event.text), said, progress):
                            yield delta
                        if echo.cut and offered is None:
                            # nothing after the cut is shown, and without tools nothing is called: the
                            # request ends here (Qwen2.5-Coder-0.5B went on copying memory lines until
                            # its context was full, five minutes after its answer)
                            done = ReplyDone("stop", provider.model)
                            break
                    elif isinstance(event, ReplyDone):
                        done = event
            for delta in _shown(echo.finish(), said, progress):
                yield delta
            if echo.cut:
                _log.info("a copied tool result was cut from the answer")
            if done is None:
                raise ProviderError("the provider ended the reply without finishing it", transient=True)
            progress.model = done.model
            if not done.tool_calls and not final and not said:
                # nothing at all while tools were offered (llama-cpp-python's chatml-function-calling
                # cannot write text then): ask again without them
                answer_now = True
                continue
            if not done.tool_calls and echo.cut and not said and not asked_in_words and not final_round:
                # nothing but a copy of memory lines, cut: nothing was shown, so it is asked once more
                asked_in_words = True
                messages.append({"role": "user", "content": IN_WORDS[notes]})
                continue
            if not done.tool_calls:
                break
            if final:
                yield await self._store_failed(text, progress, NO_ANSWER[language], now, NO_ANSWER[language])
                return
            progress.rounds += 1
            answered: list[tuple[ToolCallRequest, ToolOutcome]] = []
            for index, call in enumerate(done.tool_calls):
                if call.from_text or not call.id:
                    call = replace(call, id=f"call_{round_number}_{index}")
                key = call_key(call)
                yield ToolCalled(call.name or "(unreadable call)", call.arguments, call.from_text, key in ran)
                if key in ran:
                    outcome = ToolOutcome(ALREADY_HAVE, trace="repeated call, not run again")
                else:
                    yield RecallStarted(call.id, call.name, call.arguments)
                    outcome = await self._call(call, context)
                    yield RecallFinished(
                        call.id, call.name, call.arguments, outcome.results, outcome.turn, outcome.error
                    )
                    ran.add(key)
                progress.note(call, outcome)
                answered.append((call, outcome))
            messages.extend(round_messages(done, "".join(said), answered, provider.tool_results))
            # only repeats, or (with the memory block in the prompt) a second look that failed: answer now
            answer_now = all(o.content == ALREADY_HAVE or (recall_first and o.error) for _, o in answered)
        answer = progress.answer
        if not answer.strip():
            yield await self._store_failed(text, progress, EMPTY_ANSWER[language], now, EMPTY_ANSWER[language])
            return
        progress.storing = True
        turn = await asyncio.to_thread(self._store, text, answer, progress, now, STATUS_OK, ())
        yield ReplyCompleted(turn, answer, progress.model, progress.rounds)
        if choice.learning and (progress.rounds or not recall_first):
            await self._learn(provider, text, context, searched=progress.rounds > 0)

    async def _learn(self, provider: ProviderConfig, text: str, context: ToolContext, *, searched: bool) -> None:
        """What this reply shows of a model in ``auto``: it searched, or it answered without searching
        although memory held a hit for the message (found by one search, after the reply)."""

        def learn() -> None:
            held = False
            if not searched:  # not counted as an access: nobody recalled anything
                request = SearchRequest(
                    text.strip(), context.now, 1, exclude_ids=context.exclude_ids, record_access=False
                )
                held = bool(self.kernel.search(request).hits)
            self.modes.record_reply(provider, searched=searched, memory_held=held)

        try:
            await asyncio.to_thread(learn)
        except Exception as exc:  # learning is a nicety: the reply is already stored
            _log.info("what the reply showed of the model was not recorded: %s", exc)

    async def _call(self, call: ToolCallRequest, context: ToolContext) -> ToolOutcome:
        if call.error:
            return ToolOutcome.failure(call.error)
        arguments = dict(call.arguments)
        query = arguments.get("query")
        if isinstance(query, str):  # models copy the time line this session wrote into queries
            arguments["query"] = without_time_note(query)
        elif isinstance(query, list):  # several searches (``RecallMemory.searches``)
            arguments["query"] = [without_time_note(q) if isinstance(q, str) else q for q in query]
        return await self._guarded(call.name, lambda: run_tool(self.kernel, call.name, arguments, context))

    @staticmethod
    async def _guarded(name: str, work: Callable[[], ToolOutcome]) -> ToolOutcome:
        """``work`` in a thread; a failure becomes the tool's answer (a ``KernelError`` already is one)."""
        try:
            return await asyncio.to_thread(work)
        except KernelError as exc:
            return ToolOutcome.failure(str(exc))
        except Exception as exc:  # a tool's failure is the model's to read, never the end of the reply
            _log.warning("tool %s failed", name, exc_info=exc)
            return ToolOutcome.failure(f"the tool failed ({type(exc).__name__}: {exc})")

    # ------------------------------------------------------------------ title

    async def refresh_title(self, *, provider: str | None = None) -> SessionTitle | None:
        """Title the session when due (see ``title_due``), asking ``provider``; the new title, or None.

        Run it after a reply completed, beside the conversation: it never delays a reply.
        The model's request is not a turn; when it fails, the session keeps its title, or
        gets the local one if it had none. Failures are logged, never shown.
        """
        handle = self.handle
        if handle is None or not title_due(handle.next_index, self._titled_at, self.config.retitle_every):
            return None
        if self.named_by_user:
            return None  # the model is not asked
        count = handle.next_index
        self._titled_at = count  # one attempt per due point, even while this one runs
        turns = list(self.turns)
        current = self.title
        title: SessionTitle | None = None
        if self.config.titles == TITLE_MODEL:
            try:
                text = await model_title(self.llm, turns, current.text if current else "", provider=provider)
            except ProviderError as exc:  # a title is a nicety: the session keeps what it has
                _log.info("no title from the model: %s", exc)
            else:
                title = SessionTitle(text, TITLE_MODEL, count) if text else None
        if title is None:
            if current is not None:
                return None
            title = SessionTitle(local_title(turns) or self.topic, TITLE_LOCAL, count)
        if current is not None and (title.text, title.source) == (current.text, current.source):
            return None
        if self.named_by_user:
            return None  # renamed while the model was asked
        if self.handle is handle:
            self.topic, self.title = title.text, title
        try:
            await asyncio.to_thread(self.kernel.set_title, handle.session_file, title)
        except KernelError as exc:
            _log.warning("the title was not saved: %s", exc)
            return None
        return title

    @property
    def named_by_user(self) -> bool:
        """True when the session's title is one the user gave: automatic titling leaves it."""
        return self.title is not None and self.title.source == TITLE_USER

    async def rename(self, text: str) -> SessionTitle:
        """Give the session the title the user chose (``MemoryKernel.rename_session``): every turn's
        topic from now on, never replaced by the model's. ``KernelError`` when it is empty, or the
        session has no turn yet."""
        if self.handle is None:
            raise KernelError("nothing to rename yet: this session has no turn")
        title = await asyncio.to_thread(self.kernel.rename_session, self.handle.session_id, text)
        self.topic, self.title = title.text, title
        return title

    # ------------------------------------------------------------------ store

    def _store(
        self,
        user_text: str,
        answer: str,
        progress: Progress,
        now: datetime,
        status: str,
        extra: tuple[tuple[str, str], ...],
    ) -> Turn:
        starts = self.handle is None
        if self.handle is None:
            self.handle = self.kernel.new_session(now)
            self.topic = derive_topic(user_text)
        messages = [Message("user", user_text), *progress.trace]
        if answer or status == STATUS_OK:
            messages.append(Message("assistant", answer))
        # who answered, as imports keep it: the reply is labelled with its provider when reopened
        answered_by = tuple(
            (key, value) for key, value in (("provider", progress.provider), ("model", progress.model)) if value
        )
        draft = TurnDraft(tuple(messages), now, self.topic, tuple(progress.recalled), status, (*extra, *answered_by))
        turn = self.kernel.append_turn(self.handle, draft)
        self._set_aside = frozenset()  # beside the new branch now: the index leaves them out
        self.turns.append(turn)
        fields = {key: value for key, value in (("role", self.role), ("face", self.face)) if value}
        if starts and fields:  # the transcript exists from its first turn on
            try:
                self.kernel.update_session(self.handle.session_file, fields)
            except KernelError as exc:  # the turn stands; the session only answers without its role when reopened
                _log.warning("the session's role or face was not recorded: %s", exc)
        try:
            self.kernel.flush_access()
        except Exception as exc:  # access statistics are a nicety: the stored turn stands without them
            _log.warning("access statistics were not saved", exc_info=exc)
        return turn

    def _keep_stopped(self, user_text: str, progress: Progress, now: datetime) -> None:
        """Store a stopped reply's turn at once (no thread: the task is being cancelled)."""
        try:
            self._store(user_text, progress.answer, progress, now, STATUS_FAILED, (("error", STOPPED),))
        except Exception as exc:  # the stop goes on regardless; say why the message was not kept
            _log.error("a stopped reply's message could not be kept", exc_info=exc)

    async def _store_failed(
        self, user_text: str, progress: Progress, message: str, now: datetime, answer: str | None = None
    ) -> ReplyFailed:
        """Keep the user's message as a failed turn (with what was said so far, or ``answer``)."""
        kept = progress.answer if answer is None else answer
        progress.storing = True
        try:
            turn = await asyncio.to_thread(
                self._store, user_text, kept, progress, now, STATUS_FAILED, (("error", message),)
            )
        except Exception as exc:  # nothing typed is lost: the caller gets the text back instead
            return ReplyFailed(
                f"{message}; the message could not be kept either: {exc}", user_text, None, progress.rounds
            )
        return ReplyFailed(message, user_text, turn, progress.rounds)

"""Importing conversations through the kernel's write path: idempotent, resumable, batched.

For each conversation a ``Plan`` is made against what is stored (``SessionLocator``): the
visible messages not stored yet become turns appended to the conversation's session; the
alternatives and skipped nodes not recorded yet, the details of new parts and the import's
own record go to the session's import record. Nothing stored is rewritten; the keys are
(service, conversation id, message id), read back from the transcripts and import records.

Order, for a crash at any point: the import record is appended and fsynced first, then the
transcript, then the index — the transcripts of a batch of conversations are written
before one index commit for all of them (``MemoryKernel.append_sessions``). A rerun finds
what is there by its source ids and writes the rest; the next open indexes turns whose
transcript was written but whose index commit was lost.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import datetime, tzinfo
from pathlib import Path
from typing import Any

from huichat.memory.durability import make_durable
from huichat.memory.imports import sidecar
from huichat.memory.imports.codec import HUICHAT, part_details, session_header, session_id_for, turn_drafts
from huichat.memory.imports.model import ImportedConversation, ImportedMessage, PartKind, SourceFormat
from huichat.memory.imports.stored import SessionLocator, StoredSession
from huichat.memory.kernel import MemoryKernel, SessionHandle, SessionWrite
from huichat.memory.turns import TurnDraft, session_relpath

BATCH_TURNS = 2048
"""Turns written to transcripts before one index commit (each commit costs ~10 ms)."""


@dataclass(frozen=True)
class Plan:
    """What importing one conversation writes."""

    conversation: ImportedConversation
    session_id: str
    session_file: str
    stored: StoredSession | None
    new: tuple[ImportedMessage, ...]
    """Visible messages not stored yet (they become ``drafts``)."""
    drafts: tuple[TurnDraft, ...]
    records: tuple[dict[str, Any], ...]
    """For the import record, in order."""
    header: dict[str, Any] | None
    """The session's facts, for the header of a transcript still to be created."""
    title: str | None
    """A new title for a stored session."""
    present: int
    """Messages (visible or not) already stored."""
    alternatives: int
    skipped: tuple[str, ...]
    """Reasons of the skipped nodes newly recorded."""
    moved: bool
    """The current node moved to a message already stored."""


@dataclass
class ImportTally:
    """What an import did (or a dry run would do), counted as it goes."""

    conversations: int = 0
    """Conversations read from the source."""
    new_sessions: int = 0
    """Conversations stored as new sessions."""
    extended_sessions: int = 0
    """Conversations stored before that gained messages, branches or a title."""
    unchanged: int = 0
    """Conversations already wholly stored."""
    nothing_visible: int = 0
    """Conversations with no visible message (empty): nothing to import."""
    turns: int = 0
    """Turns written (a user message and the replies to it)."""
    messages: int = 0
    """Visible messages new to memory."""
    present: int = 0
    """Messages (visible or not) found already stored."""
    alternatives: int = 0
    """Branches kept beside the current one (edits, regenerations)."""
    skipped: Counter[str] = field(default_factory=Counter)
    """Nodes passed over, by reason (system prompts, tool plumbing, empty)."""
    moved: int = 0
    """Conversations whose current branch moved to a message already stored."""
    retitled: int = 0
    """Stored sessions given the source's newer title."""
    times_estimated: int = 0
    """New messages whose time the source did not give (estimated from their neighbours)."""
    unknown_parts: int = 0
    """Parts of new messages of a kind the reader does not know (kept raw)."""
    guessed_branches: int = 0
    """New sessions whose current branch had to be guessed (the source does not mark it)."""

    def add(self, conversation: ImportedConversation, plan: Plan | None) -> None:
        """Count one conversation and its plan."""
        self.conversations += 1
        if plan is None:
            self.nothing_visible += 1
            return
        changed = bool(plan.drafts or plan.alternatives or plan.skipped or plan.moved or plan.title)
        if plan.stored is None:
            self.new_sessions += 1
            self.guessed_branches += conversation.branch_heuristic
        elif changed:
            self.extended_sessions += 1
        else:
            self.unchanged += 1
        self.turns += len(plan.drafts)
        self.messages += len(plan.new)
        self.present += plan.present
        self.alternatives += plan.alternatives
        self.skipped.update(plan.skipped)
        self.moved += plan.moved
        self.retitled += plan.title is not None
        self.times_estimated += sum(m.time.estimated for m in plan.new)
        self.unknown_parts += sum(p.kind is PartKind.UNKNOWN for m in plan.new for p in m.parts)


class Planner:
    """Plans conversations against the sessions a ``SessionLocator`` sees (reads only)."""

    def __init__(self, locator: SessionLocator, zone: tzinfo, now: datetime) -> None:
        self.locator = locator
        self.zone = zone
        self.now = now

    def _place(self, conversation: ImportedConversation) -> tuple[str, str, StoredSession | None]:
        key = (conversation.service, conversation.conversation_id)
        started = conversation.created.instant
        session_id = session_id_for(*key, started, self.zone)
        stored = self.locator.find(key, session_id) or self._exported_from_here(conversation)
        if stored is not None:
            return stored.session_id, stored.session_file, stored
        length = 4
        session_file = session_relpath(session_id, started.astimezone(self.zone))
        # another conversation began that second, with the same digest start (an abandoned
        # record is no conversation's: this one resumes there)
        while self.locator.exists(session_file) and not self.locator.abandoned(session_file):
            length += 1
            session_id = session_id_for(*key, started, self.zone, length)
            session_file = session_relpath(session_id, started.astimezone(self.zone))
        return session_id, session_file, None

    def _exported_from_here(self, conversation: ImportedConversation) -> StoredSession | None:
        """The stored session a ChatGPT-format file that ``huichat export`` wrote came from: the
        format keeps a conversation's id (a session written here is its own), not its service,
        so reading it back must find the session under the service it was stored with."""
        if conversation.source is not SourceFormat.CHATGPT:
            return None
        started = conversation.created.instant
        for service in sorted({HUICHAT, *(f.service for f in SourceFormat)} - {conversation.service}):
            key = (service, conversation.conversation_id)
            if (stored := self.locator.find(key, session_id_for(*key, started, self.zone))) is not None:
                return stored
        return None

    def plan(self, conversation: ImportedConversation) -> Plan | None:
        """What importing ``conversation`` writes; None when it has no visible message."""
        if not conversation.messages:
            return None
        session_id, session_file, stored = self._place(conversation)
        known: set[str] = set()
        described: set[str] = set()
        previous: str | None = None
        if stored is not None:
            for message, _ in stored.messages():
                known.add(message.id)
                previous = message.id
            known.update(str(r.get("message", {}).get("id")) for r in stored.of_type(sidecar.ALTERNATIVE))
            # the turns kept beside the current branch (an edit, a reply asked again) are there already
            known.update(message.id for message, _ in stored.beside_messages())
            known.update(str(r.get("node", {}).get("id")) for r in stored.of_type(sidecar.SKIPPED))
            described = {str(r.get("id")) for r in stored.of_type(sidecar.PARTS)}
        new = tuple(m for m in conversation.messages if m.id not in known)
        body: list[dict[str, Any]] = []
        for branch in conversation.alternatives:
            after = branch.parent_id
            for message in branch.messages:
                if message.id not in known:
                    body.append(sidecar.record(sidecar.ALTERNATIVE, after=after, message=message.to_record()))
                after = message.id
        alternatives = len(body)
        branch_messages = sum(len(branch.messages) for branch in conversation.alternatives)
        skipped = [node for node in conversation.skipped if node.id not in known]
        body += [sidecar.record(sidecar.SKIPPED, node=node.to_record()) for node in skipped]
        for message in new:
            details = part_details(message)
            if details is not None and message.id not in described:
                body.append(sidecar.record(sidecar.PARTS, id=message.id, parts=details))
        leaf = conversation.messages[-1].id
        current = stored.current if stored is not None else None
        # the source's current node moved: not the one the last import recorded, nor the end of
        # the turns said here since (a huichat export of the session read back names that)
        changed_current = stored is not None and current is not None and leaf not in (current, stored.leaf)
        header = session_header(conversation, self.now)
        drafts = tuple(turn_drafts(conversation, new, previous)) if new else ()
        records: list[dict[str, Any]] = []
        if stored is None or body or changed_current or (new and not stored.of_type(sidecar.IMPORT)):
            if stored is None or not stored.of_type(sidecar.HEADER):
                records.append(sidecar.record(sidecar.HEADER, session_id=session_id, **header))
            records += body
            notes = [{"kind": n.kind.value, "detail": n.detail, "message_id": n.message_id} for n in conversation.notes]
            added = {"turns": len(drafts), "messages": len(new), "alternatives": alternatives, "skipped": len(skipped)}
            records.append(
                sidecar.record(
                    sidecar.IMPORT,
                    at=self.now.isoformat(),
                    origin=conversation.origin,
                    current=leaf,
                    title=conversation.title,
                    notes=notes,
                    added=added,
                )
            )
        title = conversation.title
        # a session written in huichat exports its turns' topic as its title: read back, it is no new one
        retitle = stored is not None and bool(title) and title != stored.title
        return Plan(
            conversation=conversation,
            session_id=session_id,
            session_file=session_file,
            stored=stored,
            new=new,
            drafts=drafts,
            records=tuple(records),
            header=header if stored is None or not stored.turns else None,
            title=title if retitle else None,
            present=len(conversation.messages) - len(new) + branch_messages - alternatives,
            alternatives=alternatives,
            skipped=tuple(node.reason.value for node in skipped),
            moved=changed_current and leaf in known,
        )


class Importer:
    """Writes plans through the kernel, batching index commits across conversations."""

    def __init__(self, kernel: MemoryKernel, now: datetime, *, batch_turns: int = BATCH_TURNS) -> None:
        self.kernel = kernel
        self.locator = SessionLocator(kernel.sessions_dir)
        self.planner = Planner(self.locator, kernel.zone, now)
        self.tally = ImportTally()
        self.batch_turns = batch_turns
        self._batch: list[SessionWrite] = []
        self._keys: set[tuple[str, str]] = set()
        self._records: list[Path] = []
        self._pending = 0

    def add(self, conversation: ImportedConversation) -> None:
        """Import one conversation (its turns may wait in the batch until ``flush``)."""
        key = (conversation.service, conversation.conversation_id)
        if key in self._keys:
            self.flush()  # the same conversation twice in one run: plan against the first one written
        plan = self.planner.plan(conversation)
        self.tally.add(conversation, plan)
        if plan is None:
            return
        path = self.kernel.sessions_dir / plan.session_file
        if plan.records:
            record_path = sidecar.sidecar_of(path)
            sidecar.append_records(record_path, plan.records, durable=False)
            self._records.append(record_path)
            self.locator.register(plan.session_file)
        if plan.title is not None and path.exists():
            self.kernel.transcripts.update_session(plan.session_file, {"title": plan.title})
        if plan.drafts:
            stored = plan.stored
            last = stored.turns[-1] if stored is not None and stored.turns else None
            handle = SessionHandle(plan.session_id, plan.session_file, last.turn_index + 1 if last else 0, last)
            self._batch.append(SessionWrite(handle, plan.drafts, plan.header))
            self._keys.add(key)
            self._pending += len(plan.drafts)
            self.locator.register(plan.session_file)
        if self._pending >= self.batch_turns:
            self.flush()

    def flush(self) -> None:
        """Make the import records written so far durable, then write the waiting transcripts and
        index them in one commit."""
        if self._records:
            make_durable(self.kernel.sessions_dir, self._records)
        if self._batch:
            self.kernel.append_sessions(self._batch, embed=False)
        self._batch, self._keys, self._records, self._pending = [], set(), [], 0


def import_conversations(
    kernel: MemoryKernel,
    conversations: Iterable[ImportedConversation],
    now: datetime,
    progress: Callable[[ImportedConversation], None] | None = None,
) -> ImportTally:
    """Import a stream of conversations; turns are found by their words when this returns.

    Interrupted (Ctrl-C), the turns waiting in the batch are written before the interrupt
    goes on; killed, nothing is half-written and a rerun adds the rest.
    """
    importer = Importer(kernel, now)
    try:
        for conversation in conversations:
            importer.add(conversation)
            if progress is not None:
                progress(conversation)
    except KeyboardInterrupt:
        importer.flush()
        raise
    importer.flush()
    return importer.tally


def plan_conversations(
    locator: SessionLocator,
    zone: tzinfo,
    conversations: Iterable[ImportedConversation],
    now: datetime,
    progress: Callable[[ImportedConversation], None] | None = None,
) -> ImportTally:
    """What importing would do, without writing anything (``--dry-run``)."""
    planner = Planner(locator, zone, now)
    tally = ImportTally()
    for conversation in conversations:
        tally.add(conversation, planner.plan(conversation))
        if progress is not None:
            progress(conversation)
    return tally

"""The catch-up (``embed_pending``): memory keeps answering while it embeds, and a stop keeps what it finished."""

from __future__ import annotations

import fcntl
import io
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import replace
from datetime import timedelta
from pathlib import Path

import numpy as np
import numpy.typing as npt
import pytest
from rich.console import Console

from huichat.app.cli.catch_up import catch_up
from huichat.memory import embedding_lease
from huichat.memory.config import RetrieverConfig
from huichat.memory.embedding import HashEmbedder
from huichat.memory.embedding_lease import EmbeddingLease
from huichat.memory.indexing import session_entries
from huichat.memory.kernel import MemoryKernel
from huichat.memory.results import SearchRequest
from huichat.memory.turns import Message, TurnDraft
from tests.conftest import NOW, open_kernel

LONG_ANSWER = "长回答。"
_GUARD = 60
"""Seconds a call may take before the test calls it blocked (a deadlock guard, not a speed target)."""


class GatedEmbedder(HashEmbedder):
    """The hash embedder, counting the texts it embeds; from the ``gate_at``-th call on waiting turns
    (``waiting_turns``) it waits for ``gate`` to open, so a test can act while a catch-up is mid-way."""

    def __init__(self, gate_at: int = 1) -> None:
        super().__init__(64)
        self.gate = threading.Event()
        self.waiting = threading.Event()
        self.gate_at = gate_at
        self.bulk_calls = 0
        self.embedded = 0

    def embed_passages(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        if any(LONG_ANSWER in text for text in texts):
            self.bulk_calls += 1
            if self.bulk_calls >= self.gate_at:
                self.waiting.set()
                assert self.gate.wait(_GUARD)
        self.embedded += len(texts)
        return super().embed_passages(texts)


def _in_thread(call: Callable[[], object]) -> threading.Thread:
    thread = threading.Thread(target=call, daemon=True)
    thread.start()
    return thread


def _finished(call: Callable[[], object]) -> bool:
    thread = _in_thread(call)
    thread.join(_GUARD)
    return not thread.is_alive()


def waiting_turns(kernel: MemoryKernel, count: int, length: int) -> None:
    session = kernel.new_session(NOW)
    drafts = [
        TurnDraft(
            (
                Message("user", f"第 {i} 件事：WireGuard keepalive"),
                Message("assistant", f"{i} " + LONG_ANSWER * length),
            ),
            NOW + timedelta(minutes=i),
        )
        for i in range(count)
    ]
    kernel.append_turns(session, drafts, embed=False)


def test_searches_writes_and_closing_go_on_while_the_catch_up_embeds(tmp_path: Path) -> None:
    embedder = GatedEmbedder()
    kernel = open_kernel(tmp_path, embedder, RetrieverConfig(min_similarity=0.0))
    waiting_turns(kernel, 40, 10)
    catch_up = _in_thread(lambda: kernel.embed_pending(limit=64))
    assert embedder.waiting.wait(_GUARD)
    later = NOW + timedelta(hours=1)
    assert _finished(lambda: kernel.search(SearchRequest("keepalive", later, 5, mode="text")))
    assert _finished(kernel.flush_access)
    assert _finished(
        lambda: kernel.append_turn(kernel.new_session(later), TurnDraft((Message("user", "新的一轮"),), later))
    )
    embedder.gate.set()
    catch_up.join(_GUARD)
    assert kernel.pending_vectors == 0
    assert len(kernel.search(SearchRequest("keepalive", later, 5, mode="vector")).hits) == 5
    kernel.close()


def test_a_stopped_catch_up_keeps_what_it_finished_and_never_embeds_it_again(tmp_path: Path) -> None:
    embedder = GatedEmbedder(gate_at=2)
    kernel = open_kernel(tmp_path, embedder)
    waiting_turns(kernel, 40, 1_500)  # ~6,000 characters a turn: parts of 8 turns
    done: list[int] = []
    catch_up = _in_thread(lambda: done.append(kernel.embed_pending(limit=40)))
    assert embedder.waiting.wait(_GUARD)  # the first part is finished, the second under way
    kernel.stop_embedding()
    embedder.gate.set()
    catch_up.join(_GUARD)
    assert done == [16] and kernel.pending_vectors == 24  # the part in flight finished: kept too
    assert kernel.embed_pending() == 0  # stopped for good
    kernel.close()
    fresh = GatedEmbedder(gate_at=10_000)
    reopened = open_kernel(tmp_path, fresh)
    assert reopened.pending_vectors == 24
    while reopened.embed_pending(limit=64):
        pass
    assert reopened.pending_vectors == 0 and fresh.embedded == 24  # no vector computed twice
    reopened.close()


def test_a_turn_edited_while_its_vector_was_computed_keeps_waiting_for_its_new_text(tmp_path: Path) -> None:
    embedder = GatedEmbedder()
    kernel = open_kernel(tmp_path, embedder)
    waiting_turns(kernel, 10, 10)
    catch_up = _in_thread(lambda: kernel.embed_pending(limit=64))
    assert embedder.waiting.wait(_GUARD)
    edited = kernel.store.pending(1)[0]
    kernel.store.upsert(session_entries([replace(edited, messages=(Message("user", "改过的文字"),))]))
    embedder.gate.set()
    catch_up.join(_GUARD)
    assert [t.id for t in kernel.store.pending(5)] == [edited.id]
    kernel.close()


def _settles(condition: Callable[[], bool]) -> bool:
    """Whether ``condition`` holds within the guard (a deadlock guard, not a speed target)."""
    deadline = time.monotonic() + _GUARD
    while not condition():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.01)
    return True


def test_two_processes_on_one_memory_never_embed_the_same_waiting_turns(tmp_path: Path) -> None:
    # a trial: the chat opened during `huichat import` computed the importer's batches again (and threw
    # them away at the commit); each kernel here stands for a process (its own files and lock handles)
    chat_embedder, command_embedder = GatedEmbedder(), GatedEmbedder(gate_at=10**6)
    chat = open_kernel(tmp_path, chat_embedder, RetrieverConfig(min_similarity=0.0))
    command = open_kernel(tmp_path, command_embedder, RetrieverConfig(min_similarity=0.0), reconcile=False)
    waiting_turns(chat, 40, 10)
    assert command.recount_pending() == 40
    busy = _in_thread(lambda: chat.embed_pending(limit=64))
    assert chat_embedder.waiting.wait(_GUARD)  # mid-batch, holding the lease
    assert command.embed_pending() == 0 and command.embedding_elsewhere
    assert command_embedder.embedded == 0
    chat_embedder.gate.set()
    busy.join(_GUARD)
    assert command.recount_pending() == 0 and command.embed_pending() == 0 and not command.embedding_elsewhere
    assert command_embedder.embedded == 0 and chat_embedder.embedded == 40

    # a command the user waits for goes first: the chat's background catch-up starts no batch meanwhile
    waiting_turns(chat, 5, 1)
    with command.embedding_in_foreground():
        assert chat.embed_pending() == 0 and chat.embedding_elsewhere
        assert command.embed_pending() == 5
    assert chat.recount_pending() == 0 and chat.embed_pending() == 0 and not chat.embedding_elsewhere
    chat.close()
    command.close()


def test_an_import_waits_for_the_chats_batch_and_counts_it_as_done(tmp_path: Path) -> None:
    chat_embedder, command_embedder = GatedEmbedder(), GatedEmbedder(gate_at=10**6)
    chat = open_kernel(tmp_path, chat_embedder, RetrieverConfig(min_similarity=0.0))
    command = open_kernel(tmp_path, command_embedder, RetrieverConfig(min_similarity=0.0), reconcile=False)
    waiting_turns(chat, 30, 10)
    busy = _in_thread(lambda: chat.embed_pending(limit=20))  # the chat's batch: 20 of the 30
    assert chat_embedder.waiting.wait(_GUARD)
    out = io.StringIO()
    finished: list[bool] = []
    assert command.recount_pending() == 30
    importing = _in_thread(lambda: finished.append(catch_up(command, Console(file=out, force_terminal=False))))
    assert _settles(lambda: command.embedding_elsewhere)  # the command found the lease taken
    chat_embedder.gate.set()
    busy.join(_GUARD)
    importing.join(_GUARD)
    assert finished == [True]
    assert chat_embedder.embedded == 20 and command_embedder.embedded == 10  # each turn once
    assert command.recount_pending() == 0
    assert out.getvalue().splitlines()[-1].startswith("embedding: 30 of 30 turns")
    chat.close()
    command.close()


def test_the_chats_batch_in_flight_stops_after_its_part_when_a_command_wants_the_lease(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(embedding_lease, "_LOOK", 0.0)  # looked at between every two parts
    chat_embedder, command_embedder = GatedEmbedder(), GatedEmbedder(gate_at=10**6)
    chat = open_kernel(tmp_path, chat_embedder, RetrieverConfig(min_similarity=0.0))
    command = open_kernel(tmp_path, command_embedder, RetrieverConfig(min_similarity=0.0), reconcile=False)
    waiting_turns(chat, 40, 1_500)  # parts of 8 turns
    done: list[int] = []
    busy = _in_thread(lambda: done.append(chat.embed_pending(limit=64)))
    assert chat_embedder.waiting.wait(_GUARD)  # in its first part
    with command.embedding_in_foreground():
        chat_embedder.gate.set()
        busy.join(_GUARD)
        [first_part] = done
        assert 0 < first_part < 40 and chat.embedding_elsewhere  # what it finished is stored
        assert command.embed_pending() == 40 - first_part
    assert chat_embedder.embedded == first_part and command_embedder.embedded == 40 - first_part
    assert chat.recount_pending() == 0
    chat.close()
    command.close()


def test_a_recount_while_a_batch_is_stored_counts_the_batch_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # the chat's sync recounts (in another thread) while its catch-up stores a batch: a recount that
    # came between the batch's commit and the count's update took the batch off twice, and the
    # catch-up stopped with turns still waiting
    kernel = open_kernel(tmp_path, HashEmbedder(64), RetrieverConfig(min_similarity=0.0))
    waiting_turns(kernel, 20, 1)
    store = kernel.store
    committed = store.update_columns
    syncs: list[threading.Thread] = []

    def commit_then_recount(*args: object, **kwargs: object) -> None:
        committed(*args, **kwargs)  # type: ignore[arg-type]
        syncs.append(_in_thread(kernel.recount_pending))
        syncs[-1].join(1.0)  # a recount that must wait for the batch to be stored stays blocked here

    monkeypatch.setattr(store, "update_columns", commit_then_recount)
    assert kernel.embed_pending(limit=10) == 10
    monkeypatch.undo()
    [syncing] = syncs
    syncing.join(_GUARD)
    assert kernel.pending_vectors == 10
    assert kernel.recount_pending() == 10
    kernel.close()


def test_a_command_holds_the_lease_although_a_chat_was_looking_at_it_as_it_began(tmp_path: Path) -> None:
    # a background catch-up looks at embedding.wanted by holding it shared for a moment: a command
    # that began at that moment went without the lease, and the chat's batches went on beside it
    chat, command = EmbeddingLease(tmp_path), EmbeddingLease(tmp_path)
    wanted = tmp_path / "embedding.wanted"
    wanted.touch()
    looking = wanted.open("r")
    fcntl.flock(looking, fcntl.LOCK_SH)  # the chat's look, in flight
    looked = threading.Timer(0.05, looking.close)
    looked.start()
    with command.foreground(), chat.batch() as ours:
        assert not ours
    looked.join(_GUARD)
    with chat.batch() as ours:
        assert ours

"""Calls run in kept background threads: a given-up call never holds up the next, a finished thread is reused."""

from __future__ import annotations

import os
import signal
import threading

import pytest

from huichat.memory import deadline
from huichat.memory.deadline import call_with_deadline


def _fail() -> None:
    raise ValueError("bad input")


def test_a_call_past_its_deadline_does_not_hold_up_the_next() -> None:
    release = threading.Event()
    with pytest.raises(TimeoutError):
        call_with_deadline(release.wait, 0.05)
    try:
        assert call_with_deadline(lambda: 7, 10) == 7  # another thread answers while the first is stuck
    finally:
        release.set()


def test_an_exception_in_the_call_reaches_the_caller() -> None:
    with pytest.raises(ValueError, match="bad input"):
        call_with_deadline(_fail, 10)


def test_finished_threads_run_later_calls() -> None:
    threads = {call_with_deadline(threading.get_ident, 10) for _ in range(50)}
    assert threading.get_ident() not in threads
    assert len(threads) < 25  # a thread start per call cost 1-2 ms on a busy machine


def _forked_child_calls() -> int:
    """The exit status of a forked child that makes one background call (0: it was answered)."""
    child = os.fork()
    if child == 0:  # pragma: no cover - the child's result is its exit status
        signal.alarm(10)  # a child stuck on a copied lock ends by the alarm, not by hanging the suite
        answered = False
        try:
            answered = call_with_deadline(lambda: 42, 10) == 42
        finally:
            os._exit(0 if answered else 1)
    _, status = os.waitpid(child, 0)
    return os.waitstatus_to_exitcode(status)


def test_a_forked_child_starts_threads_of_its_own() -> None:
    call_with_deadline(lambda: None, 10)  # the parent keeps an idle thread, which a child does not have
    assert _forked_child_calls() == 0


def test_a_child_forked_while_the_threads_lock_was_held_can_still_call() -> None:
    with deadline._Worker._lock:  # another thread handing out a worker at the moment of the fork
        assert _forked_child_calls() == 0

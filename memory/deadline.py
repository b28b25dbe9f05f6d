"""Running a call that may not return in time (LanceDB's queries cannot be interrupted).

The call runs in a daemon thread: the caller stops waiting at the deadline, the call
finishes (or not) in the background, and a process that exits does not wait for it.

The threads are kept and reused: every search runs in one (its deadline) and starts its
full-text half in another, and starting a thread waits until the new thread has run, which
on a busy machine cost a millisecond or more each time. A thread that is still busy (a call
given up at its deadline) is simply not reused until it returns; a new one is started when
none is idle. (``concurrent.futures.ThreadPoolExecutor`` would make the process wait at exit
for a call that never returns.)
"""

from __future__ import annotations

import os
import queue
import threading
from collections.abc import Callable
from concurrent.futures import Future
from typing import Any, TypeVar

T = TypeVar("T")

_KEEP_IDLE = 8
"""Idle threads kept for later calls; one finishing beyond that many ends."""


class _Worker:
    """A daemon thread that runs one call at a time, handed to it through its own queue."""

    _idle: list[_Worker] = []
    _lock = threading.Lock()

    def __init__(self) -> None:
        self._calls: queue.SimpleQueue[tuple[Future[Any], Callable[[], Any]]] = queue.SimpleQueue()
        threading.Thread(target=self._serve, name="huichat-background", daemon=True).start()

    @classmethod
    def take(cls) -> _Worker:
        """An idle worker, or a new one."""
        with cls._lock:
            if cls._idle:
                return cls._idle.pop()
        return cls()

    def run(self, future: Future[Any], action: Callable[[], Any]) -> None:
        self._calls.put((future, action))

    def _serve(self) -> None:
        while True:
            future, action = self._calls.get()
            if future.set_running_or_notify_cancel():
                try:
                    future.set_result(action())
                except BaseException as exc:  # handed to whoever waits on the future
                    future.set_exception(exc)
            del future, action  # nothing of a finished call is kept alive by an idle thread
            with self._lock:
                if len(self._idle) >= _KEEP_IDLE:
                    return
                self._idle.append(self)


def _forget_idle_threads() -> None:
    """A forked child has none of its parent's threads, and a lock one of them held stays held."""
    _Worker._idle = []
    _Worker._lock = threading.Lock()


os.register_at_fork(after_in_child=_forget_idle_threads)


def in_background(action: Callable[[], T]) -> Future[T]:
    """Start ``action`` in a daemon thread; its future holds the result or the exception."""
    future: Future[T] = Future()
    _Worker.take().run(future, action)
    return future


def call_with_deadline(action: Callable[[], T], seconds: float) -> T:
    """``action()``'s result, or ``TimeoutError`` once ``seconds`` have passed without one."""
    return in_background(action).result(timeout=seconds)

"""Running a call that may not return in time (LanceDB's queries cannot be interrupted).

The call runs in a daemon thread: the caller stops waiting at the deadline, the call
finishes (or not) in the background, and a process that exits does not wait for it.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from concurrent.futures import Future
from typing import TypeVar

T = TypeVar("T")


def in_background(action: Callable[[], T]) -> Future[T]:
    """Start ``action`` in a daemon thread; its future holds the result or the exception."""
    future: Future[T] = Future()

    def run() -> None:
        if not future.set_running_or_notify_cancel():
            return
        try:
            future.set_result(action())
        except BaseException as exc:  # handed to whoever waits on the future
            future.set_exception(exc)

    threading.Thread(target=run, name="huichat-background", daemon=True).start()
    return future


def call_with_deadline(action: Callable[[], T], seconds: float) -> T:
    """``action()``'s result, or ``TimeoutError`` once ``seconds`` have passed without one."""
    return in_background(action).result(timeout=seconds)

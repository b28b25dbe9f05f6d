"""How the store meets its vendor's failures: translated into the kernel's errors, conflicts retried.

Everything LanceDB, pyarrow or the file system raise under the store is one of
``VENDOR_ERRORS``. ``translated`` turns those into the kernel's own error (``KernelError``
or ``IndexUnavailable``) with the vendor's message on one line; it is the one place where
that happens. ``retry_conflicts`` is separate: it only repeats a commit that raced another
process's commit (LanceDB says "Retryable commit conflict") and lets every other failure
through, to be translated around it.
"""

from __future__ import annotations

import random
import re
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TypeVar

import pyarrow as pa

from huichat.memory.errors import KernelError

VENDOR_ERRORS: tuple[type[Exception], ...] = (OSError, ValueError, RuntimeError, pa.ArrowException)
"""What LanceDB (its Rust errors arrive as these), pyarrow and the file system raise."""
_PANICS = frozenset({"RustPanic", "PanicException"})
"""The names of pyo3's panic exceptions (a Rust panic in the vendor's code, e.g. on damaged data)."""
_RUST_SOURCE = re.compile(r", /\S*\.rs:\d+(:\d+)?")
"""Where in its Rust sources the vendor raised (``, /root/.cargo/…/commit.rs:653:26``)."""
_ATTEMPTS = 12
_FIRST_PAUSE = 0.02
_LONGEST_PAUSE = 1.0
T = TypeVar("T")


def one_line(exc: BaseException) -> str:
    """The vendor's message, on one line, without its Rust source location."""
    text = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
    text = _RUST_SOURCE.sub("", text)
    for noise in ("lance error: ", "LanceError(IO): ", "Generic LocalFileSystem error: "):
        text = text.replace(noise, "")
    return text[:200]


@contextmanager
def translated(error: Callable[[str], KernelError]) -> Iterator[None]:
    """Run a block of vendor calls; a vendor failure inside becomes ``error(one line of it)``.

    ``error`` says what could not be done (and what to run about it); the vendor's exception
    stays attached as the cause for a traceback, never shown to the user.
    """
    try:
        yield
    except BaseException as exc:
        if not is_vendor_error(exc):
            raise
        raise error(one_line(exc)) from exc


def is_vendor_error(exc: BaseException) -> bool:
    """True for what the vendor raises: ``VENDOR_ERRORS``, and a panic in its Rust code while
    reading damaged data (pyo3's ``RustPanic``/``PanicException``, which it does not export)."""
    return isinstance(exc, VENDOR_ERRORS) or type(exc).__name__ in _PANICS


def is_conflict(exc: BaseException) -> bool:
    """True for LanceDB's refusal of a commit that raced another writer (worth retrying)."""
    return "conflict" in str(exc).lower()


def retry_conflicts(action: Callable[[], T], retried: Callable[[], None]) -> T:
    """``action()``, repeated with a growing, jittered pause while its commit conflicts with
    another process's commit (``retried`` is told each time); any other failure, or the last
    conflict, is raised as the vendor raised it."""
    pause = _FIRST_PAUSE
    for _ in range(_ATTEMPTS - 1):
        try:
            return action()
        except VENDOR_ERRORS as exc:
            if not is_conflict(exc):
                raise
        retried()
        time.sleep(pause * (0.5 + random.random()))
        pause = min(pause * 2, _LONGEST_PAUSE)
    return action()

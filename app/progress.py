"""How far a long job is — its rate and the time left — in one wording for every face.

The CLI prints it (a live line on a terminal, a line every few seconds otherwise: a log or a
pipe must show progress too), and the TUI's status line shows the catch-up's. The rate is
measured over the last minute, so it follows a job whose pace changes (short turns, then long).
"""

from __future__ import annotations

import threading
import time
from collections import deque
from collections.abc import Callable
from types import TracebackType
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from rich.console import Console
    from rich.progress import Progress

_WINDOW = 60.0
"""Seconds of history the rate is measured over."""
EVERY = 5.0
"""Seconds between two progress lines when output is not a terminal."""


class Pace:
    """Items per second over the last minute of a job, and the time its remaining items take at that rate."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self._marks: deque[tuple[float, int]] = deque()

    def note(self, done: int) -> None:
        """Record that ``done`` items are finished so far (a running total)."""
        now = self._clock()
        self._marks.append((now, done))
        while len(self._marks) > 2 and self._marks[1][0] < now - _WINDOW:
            self._marks.popleft()

    @property
    def rate(self) -> float | None:
        """Items per second, or None before there is anything to measure."""
        if len(self._marks) < 2:
            return None
        (start, first), (end, last) = self._marks[0], self._marks[-1]
        return (last - first) / (end - start) if end > start and last > first else None

    def describe(self, done: int, total: int, unit: str) -> str:
        """``1,234 of 2,500 turns · 8.1 turns/s · about 3 min left`` (rate and time once known)."""
        parts = [f"{done:,} of {total:,} {unit}"]
        rate = self.rate
        if rate is not None:
            parts.append(f"{rate:.1f} {unit}/s" if rate < 10 else f"{rate:,.0f} {unit}/s")
            if total > done:
                parts.append(f"about {duration((total - done) / rate)} left")
        return " · ".join(parts)


def duration(seconds: float) -> str:
    """A wait in words, as precise as it is worth: ``40 s``, ``3 min``, ``1 h 5 min``."""
    if seconds < 60:
        return f"{max(1, round(seconds))} s"
    minutes = round(seconds / 60)
    if minutes < 60:
        return f"{minutes} min"
    return f"{minutes // 60} h {minutes % 60} min"


class ProgressReport:
    """A command's progress on one job: a live bar and line on a terminal, else a plain line
    every ``every`` seconds and one at the end. ``update`` may be called from any thread."""

    def __init__(self, console: Console, what: str, total: int, unit: str, every: float = EVERY) -> None:
        self.console = console
        self.what = what
        self.total = total
        self.unit = unit
        self.every = every
        self.pace = Pace()
        self.done = 0
        self._printed_at: float | None = None
        self._progress: Progress | None = None
        self._lock = threading.Lock()

    def __enter__(self) -> ProgressReport:
        if self.console.is_terminal:
            from rich.progress import BarColumn, Progress, SpinnerColumn, TextColumn

            self._progress = Progress(
                SpinnerColumn(),
                TextColumn(self.what),
                BarColumn(),
                TextColumn("{task.fields[line]}"),
                console=self.console,
                transient=True,
            )
            self._progress.start()
            self._task = self._progress.add_task(self.what, total=self.total, line=self._line())
        self.update(0)
        return self

    def update(self, done: int) -> None:
        """``done`` items are finished so far."""
        with self._lock:
            self.done = done
            self.pace.note(done)
            if self._progress is not None:
                self._progress.update(self._task, completed=done, line=self._line())
                return
            self._due()

    def tick(self) -> None:
        """Print the line if it is due, also without news: a pipe shows that the job is alive."""
        with self._lock:
            if self._progress is None:
                self._due()

    def _due(self) -> None:
        now = time.monotonic()
        if self._printed_at is None or now - self._printed_at >= self.every:
            self._print()
            self._printed_at = now

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None
    ) -> None:
        if self._progress is not None:
            self._progress.stop()
        elif self._printed_at is not None:
            self._print()  # where it ended

    def _line(self) -> str:
        return self.pace.describe(self.done, self.total, self.unit)

    def _print(self) -> None:
        self.console.print(f"{self.what}: {self._line()}", markup=False, highlight=False, soft_wrap=True)

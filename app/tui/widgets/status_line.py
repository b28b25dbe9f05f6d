"""The status line: provider and model, session, memory state, the catch-up's progress — fitted to the terminal's width."""

from __future__ import annotations

from textual.content import Content
from textual.reactive import reactive
from textual.widgets import Static

_SEPARATOR = "  ·  "


def _short(part: str) -> str:
    """The same fact in fewer characters: ``a · b`` keeps ``a``; a session id keeps its tail."""
    if part.startswith("session "):
        return "session …" + part.rsplit("-", 1)[-1]
    return part.split(" · ", 1)[0]


def fit(parts: list[str], width: int) -> str:
    """``parts`` joined on one line no wider than ``width``.

    Detail goes first (each part but the last shortened, from the first), then whole parts from
    the left; the last part (the memory state, or the catch-up's progress with its rate and time
    left while it runs) is kept whole longest, then shortened the same way: while vectors are
    computed on a narrow line, the time left outranks the provider's name.
    """
    parts = [p for p in parts if p]
    for last in (lambda p: p, _short):
        for shorter in range(len(parts)):
            candidate = [_short(p) if i < shorter else p for i, p in enumerate(parts[:-1])]
            line = " " + _SEPARATOR.join([*candidate, last(parts[-1])])
            if len(line) <= width:
                return line
        for first in range(1, len(parts)):
            line = " " + _SEPARATOR.join([*(_short(p) for p in parts[first:-1]), last(parts[-1])])
            if len(line) <= width:
                return line
    return (" " + _short(parts[-1]))[:width] if parts else ""


class StatusLine(Static):
    """One line of state bound from the screen; ``busy`` toggles the ``-busy`` class."""

    provider: reactive[str] = reactive("no provider")
    session: reactive[str] = reactive("new session")
    memory: reactive[str] = reactive("memory: loading…")
    progress: reactive[str] = reactive("")
    """The catch-up's progress while turns get their vectors ('' otherwise): a part of its own, so
    that fitting a narrow line shortens the model's name away before the progress."""
    busy: reactive[bool] = reactive(False)

    def render(self) -> Content:
        # plain text: a session's title is what was said ("[/INST] tokens" as markup raised)
        return Content(fit([self.provider, self.session, self.memory, self.progress], self.size.width or 200))

    def watch_busy(self, busy: bool) -> None:
        self.set_class(busy, "-busy")

"""Control characters made visible in everything a person reads: the one rule, applied in one place.

Stored text, imported titles, file names and model replies may hold terminal escape sequences
(``ESC ]52;`` writes the clipboard, ``ESC ]0;`` the window title, ``ESC [2J`` clears the
screen). Printed as they are, the terminal obeys them. Every human-readable output shows them
instead: C0 controls as their Control Pictures (ESC → ``␛``, NUL → ``␀``), DEL as ``␡``, C1
controls as ``\\x9b``; newline and tab stay, and CR LF is a line end. JSON output is exact.

The rule reaches every face from here: ``install`` rewrites rich's and Textual's own
control-code tables (they strip BEL, BS, VT, FF and CR and pass the rest; CR stays stripped
there, so CR LF is a line end), so every rich ``Text`` and Textual ``Content`` — tables, progress lines, every
widget of the TUI, a streamed reply — is made visible before it is measured and laid out;
``VisibleStream`` does the same for the commands' plain prints, and ``console`` gives commands
a rich console that writes below it (rich's own escapes — colours, progress — must pass).
rich and Textual are imported only when asked for: a command that prints plain text loads neither.
"""

from __future__ import annotations

import io
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, TextIO

if TYPE_CHECKING:
    from rich.console import Console

_KEPT = frozenset((0x09, 0x0A))
_CR = 0x0D
PICTURES: dict[int, str] = {
    **{code: chr(0x2400 + code) for code in range(0x20) if code not in _KEPT},
    0x7F: "\u2421",
    **{code: f"\\x{code:02x}" for code in range(0x80, 0xA0)},
}
"""Each control character but newline and tab, and what is shown instead."""


def visible(text: str) -> str:
    """``text`` with every control character but newline and tab shown, never obeyed."""
    return text.replace("\r\n", "\n").translate(PICTURES)


def install(*, tui: bool = False) -> None:
    """Make rich (and with ``tui`` Textual) show control characters wherever they render text.

    Their tables map a few code points to nothing (stripped); each now maps every control
    character to its picture (CR excepted), so widths are measured on what is shown. Idempotent.
    """
    import rich.control

    tables: list[dict[int, str | None]] = [rich.control._CONTROL_STRIP_TRANSLATE]  # type: ignore[list-item]
    if tui:
        import textual.content

        tables.append(textual.content._CONTROL_STRIP_TRANSLATE)  # type: ignore[arg-type]
    for table in tables:
        table.update((code, picture) for code, picture in PICTURES.items() if code != _CR)


def console(*, stderr: bool = False) -> Console:
    """A rich console for a command's tables and progress lines, showing control characters."""
    from rich.console import Console

    install()
    return Console(file=raw_stream(sys.stderr if stderr else sys.stdout))


class VisibleStream(io.TextIOBase):
    """A text stream that shows control characters in what is written to it (bytes pass untouched)."""

    def __init__(self, raw: TextIO) -> None:
        self.raw = raw

    def write(self, text: str) -> int:
        self.raw.write(visible(text))
        return len(text)

    def flush(self) -> None:
        self.raw.flush()

    def isatty(self) -> bool:
        return self.raw.isatty()

    def fileno(self) -> int:
        return self.raw.fileno()

    @property
    def encoding(self) -> str:  # type: ignore[override]
        return self.raw.encoding

    @property
    def buffer(self) -> object:
        """The binary stream below: a protocol written as bytes (MCP) is not touched."""
        return self.raw.buffer


def raw_stream(stream: TextIO) -> TextIO:
    """The stream below a ``VisibleStream``: for rich consoles, which write their own escapes
    (colours, progress lines) after ``install`` has made their text visible."""
    return stream.raw if isinstance(stream, VisibleStream) else stream


@contextmanager
def visible_output(*, stdout: bool) -> Iterator[None]:
    """Within the block, what is printed to stderr (and to stdout unless ``stdout`` is False:
    JSON output stays exact) shows its control characters."""
    saved = sys.stdout, sys.stderr
    sys.stderr = VisibleStream(sys.stderr)
    if stdout:
        sys.stdout = VisibleStream(sys.stdout)
    try:
        yield
    finally:
        sys.stdout, sys.stderr = saved

"""Reading within limits (``imports:``): JSON no deeper and no bigger than configured, archives
that do not unpack past their budget, and the bytes read reported as they go.

ijson's own pipeline keeps a prefix string per nesting level (memory grows with the square of
the depth: 100,000 brackets took 8 GB) and copies a token's bytes once per read (time grows
with the square of a long string's size). So the byte-level events are checked here, between
the parser and the builder of values, and a token that spans reads is read in growing chunks.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import IO, Any

import ijson

from huichat.memory.config import ImportsConfig
from huichat.memory.imports.model import ImportFormatError

Progress = Callable[[str, int, int | None], None]
"""Called as a source is read: its label, the bytes read so far, its size when known."""

BOM = b"\xef\xbb\xbf"
RATIO_FLOOR = 16 * 2**20
"""Members that unpack to less than this are not held to ``max_ratio`` (a small file of zeros is harmless)."""
_READ = 65536
_MAX_READ = 16 * 2**20
_OPEN = frozenset(("start_map", "start_array"))
_CLOSE = frozenset(("end_map", "end_array"))


class ImportLimitError(ImportFormatError):
    """Input past one of the ``imports:`` limits: it stops the import, even inside a folder or archive."""


@dataclass(frozen=True)
class Reading:
    """How sources are read: the limits they are held to and who hears of the progress."""

    limits: ImportsConfig = field(default_factory=ImportsConfig)
    on_progress: Progress | None = None


def size_text(size: int) -> str:
    """``2 MiB``, ``1.5 GiB``: a byte count as people read it."""
    units = ("bytes", "KiB", "MiB", "GiB", "TiB")
    power = min(len(units) - 1, max(0, (size.bit_length() - 1) // 10))
    return f"{size} bytes" if power == 0 else f"{size / 1024**power:.3g} {units[power]}"


class Metered:
    """A binary stream that tells ``step`` how many bytes each read took (to count or refuse them)."""

    def __init__(self, stream: IO[bytes], step: Callable[[int], None]) -> None:
        self._stream = stream
        self._step = step

    def read(self, size: int = -1) -> bytes:
        data = self._stream.read(size)
        if data:
            self._step(len(data))
        return data

    def close(self) -> None:
        self._stream.close()

    def __enter__(self) -> Metered:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class Unpacking:
    """The bytes unpacked from one archive in one pass, held to ``max_unpacked_bytes`` and ``max_ratio``."""

    def __init__(self, label: str, limits: ImportsConfig) -> None:
        self.label = label
        self.limits = limits
        self.total = 0

    def check_ratio(self, label: str, unpacked: int, packed: int) -> None:
        """Refuse a member (or a whole stream) that grows more than ``max_ratio`` times."""
        ratio = self.limits.max_ratio
        if unpacked > RATIO_FLOOR and unpacked > ratio * max(packed, 1):
            raise ImportLimitError(
                f"{label}: unpacks to {size_text(unpacked)} from {size_text(packed)}, more than {ratio}:1; "
                "refused as a possible zip bomb (the limit is imports.max_ratio)"
            )

    def add(self, size: int) -> None:
        """Count ``size`` more unpacked bytes; past the budget the import stops."""
        self.total += size
        if self.total > self.limits.max_unpacked_bytes:
            raise ImportLimitError(
                f"{self.label}: unpacks to more than {size_text(self.limits.max_unpacked_bytes)}; "
                "refused (the limit is imports.max_unpacked_bytes)"
            )


class JsonStream:
    """What ijson reads: a leading byte-order mark removed, each value's bytes counted.

    A read that follows reads without an event in between (one long token) asks for as many
    bytes as that token has taken so far, so a long string costs a few reads, not thousands.
    """

    def __init__(self, stream: IO[bytes], label: str, limits: ImportsConfig) -> None:
        self._stream = stream
        self._label = label
        self._limit = limits.max_value_bytes
        self._head = stream.read(len(BOM)).removeprefix(BOM)
        self.since_event = 0
        self.value_bytes = 0
        self.values = 0
        """Values ended so far (items of the top array, or top-level values)."""

    def read(self, size: int = -1) -> bytes:
        if size == 0:  # ijson probes the stream's type with read(0)
            return b""
        wanted = max(size, _READ, min(self.since_event, _MAX_READ))
        wanted = max(1, min(wanted, self._limit + 1 - self.value_bytes))
        head, self._head = self._head, b""
        data = head + self._stream.read(max(0, wanted - len(head)))
        self.since_event += len(data)
        self.value_bytes += len(data)
        if self.value_bytes > self._limit:
            raise ImportLimitError(
                f"{self._label}: item {self.values + 1} of the JSON is more than {size_text(self._limit)}; "
                "refused (the limit is imports.max_value_bytes)"
            )
        return data

    def value_ended(self) -> None:
        """One value is whole: the next one's bytes are counted from here."""
        self.values += 1
        self.value_bytes = 0


def bounded_events(stream: JsonStream, label: str, limits: ImportsConfig, *, multiple: bool) -> Iterator[Any]:
    """ijson's ``parse`` events (prefix, event, value) for ``stream``, refused past ``max_depth``.

    ``multiple``: the file is a sequence of top-level values (JSON Lines) rather than one value
    whose items are the conversations.
    """
    events: Iterator[Any] = ijson.parse(_checked(stream, label, limits, multiple=multiple))
    return events


def _checked(stream: JsonStream, label: str, limits: ImportsConfig, *, multiple: bool) -> Iterator[Any]:
    deepest = limits.max_depth
    between = 0 if multiple else 1  # the depth at which one value has ended
    depth = 0
    for event in ijson.basic_parse(stream, multiple_values=multiple, use_float=False):
        stream.since_event = 0
        kind = event[0]
        if kind in _OPEN:
            depth += 1
            if depth > deepest:
                raise ImportLimitError(
                    f"{label}: JSON nested deeper than {deepest} levels; refused (the limit is imports.max_depth)"
                )
        elif kind in _CLOSE:
            depth -= 1
        if depth == between and kind not in _OPEN:  # (the array around the items opens at this depth)
            stream.value_ended()
        yield event

"""Reading paths: every recognisable file of files, folders and archives, one conversation at a time.

A file named on the command line must be readable: an unknown shape is an error naming it.
Inside a folder or an archive, files of other shapes (``user.json``, images, ``chat.html``)
are passed over and listed in ``ignored``; if nothing in it is readable, that is the error.
``format`` forces a format: a named file is read as that format whatever its shape; inside a
folder or archive only the files detected as that format are read.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Generator, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

from huichat.memory.config import ImportsConfig
from huichat.memory.imports import chatgpt, claude, deepseek, elia, huichat_jsonl, jsonl, llm_logs, transcripts
from huichat.memory.imports.bounded import ImportLimitError, Progress, Reading
from huichat.memory.imports.detect import EXPECTED, detect
from huichat.memory.imports.model import ImportedConversation, ImportFormatError, SourceFormat
from huichat.memory.imports.sources import Source, expand

Reader = Callable[[Source], Iterator[ImportedConversation]]

READERS: dict[SourceFormat, Reader] = {
    SourceFormat.CHATGPT: chatgpt.read,
    SourceFormat.CLAUDE: claude.read,
    SourceFormat.DEEPSEEK: deepseek.read_export,
    SourceFormat.DEEPSEEK_WEB: deepseek.read_web,
    SourceFormat.LLM: llm_logs.read,
    SourceFormat.ELIA: elia.read,
    SourceFormat.JSONL: jsonl.read,
    SourceFormat.HUICHAT: transcripts.read,
    SourceFormat.HUICHAT_JSONL: huichat_jsonl.read,
}


@dataclass(frozen=True)
class ReadFile:
    """A file that was read, and as what."""

    label: str
    """The path, or ``archive.zip:member`` inside an archive."""
    format: SourceFormat


@dataclass(frozen=True)
class IgnoredFile:
    """A file inside a folder or archive that was passed over, and why."""

    label: str
    """The path, or ``archive.zip:member`` inside an archive."""
    reason: str


class ImportReader:
    """Reads ``paths`` lazily; ``read`` and ``ignored`` fill in as the stream is consumed.

    Input past the ``limits`` stops the reading with ``ImportLimitError``, even inside a folder
    or an archive; ``on_progress`` hears of every read (label, bytes read, size).
    """

    def __init__(
        self,
        paths: Iterable[Path],
        format: SourceFormat | None = None,
        *,
        limits: ImportsConfig | None = None,
        on_progress: Progress | None = None,
    ) -> None:
        self.paths = list(paths)
        self.format = format
        self.limits = limits or ImportsConfig()
        self.on_progress = on_progress
        self.read: list[ReadFile] = []
        self.ignored: list[IgnoredFile] = []

    def conversations(self) -> Iterator[ImportedConversation]:
        """Every conversation of every path, in file order and then source order."""
        for path in self.paths:
            yield from self._path(path)

    def _path(self, path: Path) -> Iterator[ImportedConversation]:
        sources = expand(path, Reading(self.limits, self.on_progress))
        first = next(sources, None)
        if first is None:
            raise ImportFormatError(f"{path}: nothing in it to import; expected {EXPECTED}")
        if path.is_file() and first.label == str(path):  # a plain file, named by the user
            fmt = self.format or detect(first)
            self.read.append(ReadFile(first.label, fmt))
            yield from READERS[fmt](first)
            return
        found = False
        for source in itertools.chain([first], sources):
            read = yield from self._member(source)
            found = found or read
        if not found:
            wanted = f"{self.format.value} files" if self.format else EXPECTED
            raise ImportFormatError(f"{path}: no file in it could be imported; expected {wanted}")

    def _member(self, source: Source) -> Generator[ImportedConversation, None, bool]:
        """Read ``source`` if it is recognised (and the format asked for); else note why not."""
        try:
            fmt = detect(source)
        except ImportLimitError:
            raise
        except ImportFormatError as exc:
            self.ignored.append(IgnoredFile(source.label, str(exc).removeprefix(f"{source.label}: ")))
            return False
        if self.format is not None and fmt is not self.format:
            self.ignored.append(IgnoredFile(source.label, f"{fmt.value}, not the {self.format.value} asked for"))
            return False
        self.read.append(ReadFile(source.label, fmt))
        yield from READERS[fmt](source)
        return True


def iter_conversations(path: Path, format: SourceFormat | None = None) -> Iterator[ImportedConversation]:
    """Every conversation under ``path`` (a file, a folder or a zip), one at a time."""
    return ImportReader([path], format).conversations()

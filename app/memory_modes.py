"""How each provider gets at memory: it searches with the tools, the app recalls first, or both.

Small local models often answer without searching (or invent a search result), so for them
the app searches the user's message before asking and puts the hits into the prompt
("memory-first"). ``providers.named.<name>.memory_mode`` chooses per provider; ``auto``
decides from what is known about the model, kept in ``<data_dir>/provider-modes.json``:

- whether it calls tools at all: the capability probe (``huichat doctor --ping``), or a tool
  call seen in a reply;
- what it did in its recent replies: one that answered without searching although memory
  held a hit for the message counts as a miss, and a model that misses moves to ``both``.

The palette can set a mode for the running app (``override``); the file keeps verdicts only.
"""

from __future__ import annotations

import ipaddress
import json
import logging
import tempfile
import threading
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Literal, get_args
from urllib.parse import urlsplit

from huichat.providers.config import MemoryModeSetting, ProviderConfig

Mode = Literal["tools", "memory-first", "both"]
"""``tools``: the model searches; ``memory-first``: the app recalls before asking and offers no
tools; ``both``: the app recalls first and the tools stay offered for a second look."""
MODES: tuple[Mode, ...] = get_args(Mode)
ModeSetting = MemoryModeSetting
MODE_HELP: dict[ModeSetting, str] = {
    "auto": "as configured, learnt from the probe and from the model's replies",
    "tools": "the model searches memory with its tools",
    "memory-first": "huichat searches first and puts the hits into the prompt; no tools",
    "both": "huichat searches first; the tools stay offered for a second look",
}

RECENT = 6
"""Replies remembered per model for ``auto``."""
MISSES_FOR_BOTH = 2
"""Misses among the recent replies that move an ``auto`` model from ``tools`` to ``both``."""
FILE_NAME = "provider-modes.json"

_log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Choice:
    """The mode a reply uses, and why (shown in the status line and by doctor)."""

    mode: Mode
    why: str
    learning: bool = False
    """``auto`` chose it: what the reply shows of the model is recorded."""

    @property
    def recalls_first(self) -> bool:
        return self.mode != "tools"

    @property
    def offers_tools(self) -> bool:
        return self.mode != "memory-first"

    def label(self) -> str:
        return f"{self.mode} ({self.why})"


@dataclass
class Verdict:
    """What is known of one model: does it call tools, and did it search when it should have."""

    calls_tools: bool | None = None
    """None until probed or seen calling a tool."""
    source: str = ""
    """``probe`` or ``seen``."""
    at: str = ""
    recent: list[bool] = field(default_factory=list)
    """For the latest replies in ``tools`` mode where memory held a hit: True when it searched."""
    checks_hits: bool | None = None
    """Whether its yes or no on a memory-first hit can be trusted (``hit_check.check_trusted``); None
    until tried."""

    @property
    def misses(self) -> int:
        return self.recent.count(False)


def is_local(provider: ProviderConfig) -> bool:
    """True for a model served on this machine or the local network (llama.cpp, Ollama, LM Studio,
    vLLM): mostly small models, which answer without searching more often than not."""
    if not provider.api_base:
        return False
    host = urlsplit(provider.api_base).hostname or ""
    if host == "localhost" or host.endswith((".local", ".localhost", ".lan", ".internal")):
        return True
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        return False
    return address.is_loopback or address.is_private or address.is_link_local


def model_key(provider: ProviderConfig) -> str:
    """One model behind one endpoint (two provider names for the same model share what is known)."""
    return f"{provider.model} @ {provider.api_base or 'default'}"


class ModeBook:
    """The verdicts per model (in ``<data_dir>/provider-modes.json``) and the palette's overrides.

    One per data folder in a process (``shared``): every session of the app and of the server
    learns into the same book.
    """

    _books: dict[Path, ModeBook] = {}
    _books_lock = threading.Lock()

    @classmethod
    def shared(cls, data_dir: Path) -> ModeBook:
        """The book of ``data_dir`` for this process."""
        with cls._books_lock:
            book = cls._books.get(data_dir)
            if book is None:
                book = cls._books[data_dir] = cls(data_dir)
            return book

    def __init__(self, data_dir: Path | None) -> None:
        self.path = data_dir / FILE_NAME if data_dir is not None else None
        self._lock = threading.RLock()
        self._seen: tuple[int, int, int] | None = None
        """The file's (inode, mtime, size) as this book last read or wrote it."""
        self._verdicts = self._read()
        self._overrides: dict[str, Mode] = {}

    def choose(self, name: str, provider: ProviderConfig, setting: MemoryModeSetting | None = None) -> Choice:
        """The mode provider ``name`` answers in now (``setting``: its configured one)."""
        if not provider.supports_tools:
            return Choice("memory-first", "supports_tools: false")
        override = self._overrides.get(name)
        if override is not None:
            return Choice(override, "chosen")
        chosen = setting or provider.memory_mode
        if chosen != "auto":
            return Choice(chosen, "configured")
        verdict = self.verdict(provider)
        if verdict.calls_tools is False:
            return Choice("memory-first", f"auto: calls no tools ({verdict.source})", learning=True)
        if verdict.misses >= MISSES_FOR_BOTH:
            missed = f"auto: answered {verdict.misses} of {len(verdict.recent)} without searching"
            return Choice("both", missed, learning=True)
        if is_local(provider):
            if verdict.calls_tools is None:  # small models confuse tools more often than they use them
                return Choice("memory-first", "auto: a local model, not probed", learning=True)
            return Choice("both", f"auto: a local model that calls tools ({verdict.source})", learning=True)
        if verdict.calls_tools is None:
            return Choice("tools", "auto: not probed yet", learning=True)
        return Choice("tools", f"auto: calls tools ({verdict.source})", learning=True)

    def override(self, name: str, mode: Mode | None) -> None:
        """Use ``mode`` for provider ``name`` until the app ends (None: back to its setting)."""
        if mode is None:
            self._overrides.pop(name, None)
        else:
            self._overrides[name] = mode

    def verdict(self, provider: ProviderConfig) -> Verdict:
        with self._lock:
            self._take_in_others()
            found = self._verdicts.get(model_key(provider))
            return replace(found, recent=list(found.recent)) if found is not None else Verdict()

    def record_probe(self, provider: ProviderConfig, calls_tools: bool) -> None:
        """The capability probe's answer (it replaces what replies showed; the recent replies stay). The
        hit check is tried again at its next use: a probe is how a user says the model may have changed."""
        self._update(provider, calls_tools=calls_tools, source="probe", checks_hits=None)

    def record_check(self, provider: ProviderConfig, trusted: bool) -> None:
        """Whether the model's yes or no on a memory-first hit can be trusted (``hit_check.check_trusted``)."""
        self._update(provider, checks_hits=trusted)

    def record_reply(self, provider: ProviderConfig, *, searched: bool, memory_held: bool) -> None:
        """One reply: whether the model called a memory tool, and whether memory held a hit for the message."""
        with self._lock:  # read and write as one step: two replies ending at once both count
            current = self.verdict(provider)
            recent = current.recent
            if memory_held or searched:
                recent = [*recent, searched][-RECENT:]
            if searched and not current.calls_tools:
                self._update(provider, calls_tools=True, source="seen", recent=recent)
            elif recent != current.recent:
                self._update(provider, recent=recent)

    def _update(self, provider: ProviderConfig, **changes: object) -> None:
        key = model_key(provider)
        with self._lock:
            self._take_in_others()  # what another process wrote is not written over with an older copy
            verdict = self._verdicts.setdefault(key, Verdict())
            for name, value in changes.items():
                setattr(verdict, name, value)
            if "calls_tools" in changes:
                verdict.at = datetime.now(UTC).isoformat(timespec="seconds")
            # written under the lock: two probes finishing at once must not write an older snapshot last
            self._write({k: _record(v) for k, v in self._verdicts.items()})

    def _take_in_others(self) -> None:
        """What another process wrote since this book last read or wrote the file (``huichat doctor
        --ping`` beside a running chat: its next message answers in the mode the probe found)."""
        stamp = self._stamp()
        if stamp is not None and stamp != self._seen:
            self._verdicts = self._read()

    def _stamp(self, path: Path | None = None) -> tuple[int, int, int] | None:
        """Which write of the file (or of ``path``) this is: every write is a rename of a new file, a new inode."""
        target = path or self.path
        if target is None:
            return None
        try:
            found = target.stat()
        except OSError:
            return None
        return (found.st_ino, found.st_mtime_ns, found.st_size)

    def _read(self) -> dict[str, Verdict]:
        if self.path is None or not self.path.exists():
            return {}
        try:
            self._seen = self._stamp()
            data = json.loads(self.path.read_text(encoding="utf-8"))
            return {str(k): _verdict(v) for k, v in data.items() if isinstance(v, Mapping)}
        except (OSError, ValueError, TypeError) as exc:  # a damaged file: start over, never fail a reply
            _log.warning("%s cannot be read (%s); provider modes are learnt again", self.path, exc)
            return {}

    def _write(self, snapshot: dict[str, dict[str, object]]) -> None:
        if self.path is None:
            return
        written: Path | None = None
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            with tempfile.NamedTemporaryFile(  # 0600, whatever the umask: it names the user's models
                "w", encoding="utf-8", dir=self.path.parent, prefix=".modes-", delete=False
            ) as handle:
                written = Path(handle.name)
                json.dump(snapshot, handle, ensure_ascii=False, indent=1)
            stamp = self._stamp(written)  # before the rename: another process's file may follow it at once
            written.replace(self.path)
            self._seen = stamp
        except OSError as exc:  # a full or read-only disk: the verdict lives in memory for this run
            _log.warning("provider modes not saved: %s", exc)
            if written is not None:
                written.unlink(missing_ok=True)


def _record(verdict: Verdict) -> dict[str, object]:
    return asdict(verdict)


def _verdict(data: Mapping[str, object]) -> Verdict:
    calls = data.get("calls_tools")
    recent = data.get("recent")
    checks = data.get("checks_hits")
    return Verdict(
        calls if isinstance(calls, bool) else None,
        str(data.get("source") or ""),
        str(data.get("at") or ""),
        [bool(r) for r in recent][-RECENT:] if isinstance(recent, list) else [],
        checks if isinstance(checks, bool) else None,
    )

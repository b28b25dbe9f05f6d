"""API keys for ``huichat serve``: created once, stored hashed (argon2), revocable.

A key reads ``hc_<id>_<secret>``. The id is public (listing, revoking, rate limits); the
secret is shown once when the key is made and only its argon2 hash is kept, in
``<data_dir>/api-keys.json`` (mode 0600) — or, with ``storage.uri``, in the shared store, so
every replica refuses a key revoked through any of them within ``refresh_seconds``. A verified key is remembered in this process
while the file holds it unchanged (a ``keys revoke`` from another process takes effect on
the next request), so argon2's deliberate slowness is paid once per key, not per request.
A secret found wrong is remembered the same way (by its digest, never itself), so a client
that resends one wrong key costs argon2 once, not once per try.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import math
import os
import re
import secrets
import threading
import time
from collections.abc import Callable, Hashable
from dataclasses import asdict, dataclass, replace
from datetime import datetime
from pathlib import Path
from typing import Any

from argon2 import PasswordHasher
from argon2.exceptions import InvalidHashError, VerificationError

from huichat.app.config import LoadedConfig
from huichat.app.users.memories import check_user_name
from huichat.memory.objectstore import ObjectStore, Stored, StoreError, configured_store

KEYS_FILE = "api-keys.json"
_REFUSED_KEPT = 4096
"""Wrong tokens remembered (digests, oldest forgotten first): a flood of distinct ones is
bounded by the failed-check limits, not by this memory."""
_TOKEN = re.compile(r"^hc_([0-9a-f]{8})_([A-Za-z0-9_-]{20,100})$")
_FORMAT = 1


class KeyRingError(Exception):
    """A key operation that cannot be done (unknown id, unreadable key file)."""


@dataclass(frozen=True)
class ApiKey:
    """One key as stored: never the secret, only its hash."""

    id: str
    user: str
    created: str
    hash: str
    admin: bool = False
    """An admin key may act for any user (``user`` in a request) and list every user."""
    revoked: str | None = None

    @property
    def active(self) -> bool:
        """False once revoked."""
        return self.revoked is None


class _KeyFile:
    """The keys in ``<data_dir>/api-keys.json`` (one machine): read when its stat changes,
    edited under an exclusive ``flock``, written atomically with mode 0600."""

    def __init__(self, data_dir: Path) -> None:
        self.path = data_dir / KEYS_FILE
        self.where = str(self.path)
        self.refresh_seconds = 0.0
        """A stat per request is cheap: never read ahead."""

    def refresh(self) -> None:
        return

    def state(self) -> Hashable:
        try:
            stat = self.path.stat()
        except FileNotFoundError:
            return None
        return (stat.st_mtime_ns, stat.st_size)

    def read(self) -> dict[str, ApiKey]:
        try:
            text = self.path.read_text(encoding="utf-8")
        except FileNotFoundError:
            return {}
        except OSError as exc:
            raise KeyRingError(f"cannot read the API key file {self.path}: {exc}") from exc
        return _parse(text, self.where)

    def edit(self, change: Callable[[dict[str, ApiKey]], None]) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with (self.path.parent / f".{KEYS_FILE}.lock").open("a") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            keys = self.read()
            change(keys)
            temporary = self.path.with_suffix(f".{os.getpid()}.tmp")
            descriptor = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
            with os.fdopen(descriptor, "w", encoding="utf-8") as handle:
                handle.write(_render(keys))
                handle.flush()
                os.fsync(handle.fileno())
            temporary.replace(self.path)


class _KeyObject:
    """The keys as one object in the shared store (``storage.uri``), so every replica refuses a
    key revoked through any of them: read again once ``refresh_seconds`` have passed (one GET,
    not one per request; a server does it in the background, ``KeyRing.refresh``), replaced by
    read-modify-write under ``If-Match`` (``ObjectStore.update``)."""

    def __init__(self, store: ObjectStore, refresh_seconds: float) -> None:
        self.store = store
        self.where = store.uri_of(KEYS_FILE)
        self.refresh_seconds = refresh_seconds
        self._read_at: tuple[Stored | None, float] = (None, -math.inf)
        """The object as last read, and when (replaced whole, so a reader never sees half)."""

    def refresh(self) -> None:
        try:
            stored = self.store.get(KEYS_FILE)
        except StoreError as exc:
            raise KeyRingError(f"cannot read the API key file {self.where}: {exc}") from exc
        self._read_at = (stored, time.monotonic())

    def state(self) -> Hashable:
        if time.monotonic() - self._read_at[1] >= self.refresh_seconds:
            self.refresh()
        stored = self._read_at[0]
        return stored.etag if stored else None

    def read(self) -> dict[str, ApiKey]:
        stored = self._read_at[0]
        return _parse(stored.body.decode("utf-8"), self.where) if stored else {}

    def edit(self, change: Callable[[dict[str, ApiKey]], None]) -> None:
        def changed(body: bytes | None) -> bytes:
            keys = _parse(body.decode("utf-8"), self.where) if body is not None else {}
            change(keys)
            return _render(keys).encode("utf-8")

        try:
            self.store.update(KEYS_FILE, changed)
        except StoreError as exc:
            raise KeyRingError(f"cannot write the API key file {self.where}: {exc}") from exc
        self._read_at = (None, -math.inf)  # this process sees its own change at once


def _parse(text: str, where: str) -> dict[str, ApiKey]:
    try:
        data = json.loads(text)
    except ValueError as exc:
        raise KeyRingError(f"cannot read the API key file {where}: {exc}") from exc
    if not isinstance(data, dict) or data.get("format") != _FORMAT:
        raise KeyRingError(f"{where} is not a huichat API key file (format {_FORMAT})")
    return {k["id"]: ApiKey(**k) for k in data.get("keys", [])}


def _parsed(token: str) -> tuple[str, str, str] | None:
    """A well-formed token's key id, secret and digest (what verified and refused tokens are kept by)."""
    match = _TOKEN.match(token.strip())
    if match is None:
        return None
    return match.group(1), match.group(2), hashlib.sha256(token.strip().encode()).hexdigest()


def _render(keys: dict[str, ApiKey]) -> str:
    return json.dumps({"format": _FORMAT, "keys": [asdict(k) for k in keys.values()]}, indent=1)


class KeyRing:
    """The keys: create, list, revoke, verify — in the key file, or in the shared store."""

    def __init__(self, data_dir: Path, store: ObjectStore | None = None, *, refresh_seconds: float = 1.0) -> None:
        self._source = _KeyFile(data_dir) if store is None else _KeyObject(store, refresh_seconds)
        self._hasher = PasswordHasher()
        self._lock = threading.Lock()
        self._state: Hashable = None
        self._keys: dict[str, ApiKey] = {}
        self._verified: dict[str, str] = {}
        """sha256(token) -> key id, for keys verified since the file last changed."""
        self._refused: dict[str, ApiKey] = {}
        """sha256(token) -> the key as stored when argon2 refused the token's secret for it."""

    @classmethod
    def configured(cls, loaded: LoadedConfig) -> KeyRing:
        """The deployment's keys: in the shared store when ``storage.uri`` is set, else the data dir's file."""
        return cls(loaded.paths.data_dir, configured_store(loaded.config.storage))

    @property
    def refresh_seconds(self) -> float:
        """How old the keys a request is checked against may be (0: read on every request)."""
        return self._source.refresh_seconds

    def refresh(self) -> None:
        """Read keys kept in the shared store again now (a server's background task calls this
        twice per ``refresh_seconds``, so no request waits for the store); a no-op for the file."""
        self._source.refresh()

    @property
    def where(self) -> str:
        """Where the keys are kept (a path or an ``s3://`` URI), for messages."""
        return self._source.where

    def _current(self) -> dict[str, ApiKey]:
        state = self._source.state()
        if state != self._state:
            keys = self._source.read() if state is not None else {}
            # a verified key stays verified while it is stored unchanged (a new key elsewhere in
            # the file costs the others nothing); a revoked or replaced one is forgotten
            self._verified = {
                digest: key_id
                for digest, key_id in self._verified.items()
                if keys.get(key_id) == self._keys.get(key_id)
            }
            self._refused = {d: key for d, key in self._refused.items() if keys.get(key.id) == key}
            self._keys = keys
            self._state = state
        return self._keys

    # ------------------------------------------------------------ commands

    def create(self, user: str, now: datetime, *, admin: bool = False) -> tuple[ApiKey, str]:
        """A new key for ``user``; returns it and the token, which is never shown again."""
        check_user_name(user)
        secret = secrets.token_urlsafe(32)
        hashed = self._hasher.hash(secret)
        made: list[ApiKey] = []

        def add(keys: dict[str, ApiKey]) -> None:
            key_id = secrets.token_hex(4)
            while key_id in keys:
                key_id = secrets.token_hex(4)
            made[:] = [ApiKey(key_id, user, now.isoformat(timespec="seconds"), hashed, admin)]
            keys[key_id] = made[0]

        with self._lock:
            self._source.edit(add)
        return made[0], f"hc_{made[0].id}_{secret}"

    def entries(self) -> list[ApiKey]:
        """Every key, revoked ones included, oldest first."""
        with self._lock:
            return sorted(self._current().values(), key=lambda k: k.created)

    def revoke(self, key_id: str, now: datetime) -> ApiKey:
        """Revoke a key by id (it stays listed, marked revoked)."""
        revoked: list[ApiKey] = []

        def mark(keys: dict[str, ApiKey]) -> None:
            key = keys.get(key_id.strip())
            if key is None:
                raise KeyRingError(f"no key with id '{key_id[:20]}' (see `huichat keys list`)")
            if key.active:
                key = replace(key, revoked=now.isoformat(timespec="seconds"))
                keys[key.id] = key
            revoked[:] = [key]

        with self._lock:
            self._source.edit(mark)
        return revoked[0]

    # ---------------------------------------------------------- requests

    def any_active(self) -> bool:
        """True when at least one key can be used (then every request needs one)."""
        with self._lock:
            return any(k.active for k in self._current().values())

    def _active(self, key_id: str) -> ApiKey | None:
        """The stored key ``key_id`` if it is not revoked (the caller holds the lock)."""
        key = self._current().get(key_id)
        return key if key is not None and key.active else None

    def remembered(self, token: str) -> ApiKey | None:
        """The key of ``token`` if it was verified since the file last changed (cheap: no argon2)."""
        parsed = _parsed(token)
        if parsed is None:
            return None
        key_id, _, digest = parsed
        with self._lock:
            key = self._active(key_id)
            return key if key is not None and self._verified.get(digest) == key_id else None

    @staticmethod
    def key_id(token: str) -> str | None:
        """The public id of a well-formed token (what key checks are counted by), else None."""
        match = _TOKEN.match(token.strip())
        return match.group(1) if match else None

    def checkable(self, token: str) -> bool:
        """True when ``verify`` would run argon2 for ``token``: its key is stored and active, and
        the token was neither verified nor refused for it yet. Any other check costs nothing."""
        parsed = _parsed(token)
        if parsed is None:
            return False
        key_id, _, digest = parsed
        with self._lock:
            key = self._active(key_id)
            return key is not None and self._verified.get(digest) != key_id and self._refused.get(digest) != key

    def verify(self, token: str) -> ApiKey | None:
        """The active key ``token`` belongs to, or None (malformed, unknown, revoked or wrong).

        argon2 runs once per token while its key is stored unchanged: a right one is remembered
        as verified, a wrong one as refused."""
        parsed = _parsed(token)
        if parsed is None:
            return None
        key_id, secret, digest = parsed
        with self._lock:
            key = self._active(key_id)
            if key is None or self._refused.get(digest) == key:
                return None
            if self._verified.get(digest) == key_id:
                return key
        try:
            self._hasher.verify(key.hash, secret)
        except (VerificationError, InvalidHashError):
            with self._lock:
                if self._current().get(key_id) == key:
                    self._refused[digest] = key
                    if len(self._refused) > _REFUSED_KEPT:
                        del self._refused[next(iter(self._refused))]
            return None
        with self._lock:
            if self._current().get(key_id) == key:
                self._verified[digest] = key_id
        return key

    def describe(self) -> list[dict[str, Any]]:
        """The keys as rows for listing (no hashes)."""
        return [
            {"id": k.id, "user": k.user, "admin": k.admin, "created": k.created, "revoked": k.revoked}
            for k in self.entries()
        ]

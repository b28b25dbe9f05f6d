"""Shared object storage for replicas (``storage.uri``): small objects written with conditional puts.

Several ``huichat serve`` processes on different machines share one store; LanceDB keeps the
index tables there itself (``storage_options``), and this module keeps everything else that
another replica needs: the transcripts' segments (``memory.shared_transcripts``), which session
a conversation continues, the API keys and their revocations. Object stores neither append nor lock,
so every shared object is either immutable (written once with ``If-None-Match: *``) or replaced
by read-modify-write under ``If-Match: <etag>``: of two replicas racing, one wins and the other
reads again and retries with backoff (``update``) — no lost update, no lock to leak.

The client is boto3: it is in huichat's dependency tree already (litellm's Bedrock support),
its ``put_object`` takes ``IfNoneMatch``/``IfMatch`` (S3 honours both since 2024; MinIO, and
moto's server that the tests run, too), and it reads the usual AWS credential chain. It is
imported only when a store is opened, so the single-machine default never loads it (the
``s3`` extra names it for installs that leave litellm's extras out).

Options use LanceDB's ``storage_options`` names (``endpoint``, ``allow_http``, ``region``,
``aws_access_key_id``, ``aws_secret_access_key``, ``aws_session_token``), so one ``options``
mapping configures both. ``round_trips`` counts every request sent, for the benchmarks.
"""

from __future__ import annotations

import random
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from huichat.memory.config import StorageConfig
from huichat.memory.errors import KernelError

_ATTEMPTS = 8
"""Tries of one read-modify-write before a conflict is given up (each after a growing pause)."""
_FIRST_PAUSE = 0.02
"""Seconds before the second try; doubled each time, with jitter so racing replicas part."""


class StoreError(KernelError):
    """The object store cannot be reached or refused a request (one line for the user)."""


class Conflict(StoreError):
    """A conditional put lost a race: the object exists, or changed since it was read."""


@dataclass(frozen=True)
class Stored:
    """An object's bytes and the ETag that a conditional replace of it must name."""

    body: bytes
    etag: str


def split_uri(uri: str) -> tuple[str, str]:
    """``s3://bucket/some/prefix`` -> ("bucket", "some/prefix"); anything else is a StoreError."""
    parts = urlsplit(uri)
    if parts.scheme != "s3" or not parts.netloc:
        raise StoreError(f"storage.uri must look like s3://bucket/prefix, not '{uri[:80]}'")
    return parts.netloc, parts.path.strip("/")


def join(*parts: str) -> str:
    """Object key parts joined with '/', empty parts left out."""
    return "/".join(p.strip("/") for p in parts if p.strip("/"))


class ObjectStore:
    """One bucket and prefix of an S3-compatible store."""

    def __init__(self, uri: str, options: Mapping[str, str]) -> None:
        self.uri = uri.rstrip("/")
        self.options = dict(options)
        self.bucket, self.prefix = split_uri(self.uri)
        self._client: Any = None
        self._client_lock = threading.Lock()
        self._count_lock = threading.Lock()
        self.round_trips = 0
        """Requests sent to the store by this process (every call below is one)."""

    # -------------------------------------------------------------- plumbing

    @property
    def client(self) -> Any:
        """The boto3 client (built on first use: importing boto3 costs ~0.2 s)."""
        with self._client_lock:
            if self._client is None:
                self._client = _boto3_client(self.options)
            return self._client

    def key(self, name: str) -> str:
        """The full object key of ``name`` under this store's prefix."""
        return join(self.prefix, name)

    def uri_of(self, name: str) -> str:
        """The ``s3://`` URI of ``name`` (what LanceDB is given)."""
        return f"s3://{self.bucket}/{self.key(name)}"

    def _call(self, operation: str, **arguments: Any) -> Any:
        from botocore.exceptions import BotoCoreError, ClientError

        with self._count_lock:
            self.round_trips += 1
        try:
            return getattr(self.client, operation)(Bucket=self.bucket, **arguments)
        except ClientError as exc:
            code = str(exc.response.get("Error", {}).get("Code", ""))
            status = exc.response.get("ResponseMetadata", {}).get("HTTPStatusCode")
            if code in ("PreconditionFailed", "ConditionalRequestConflict") or status in (409, 412):
                raise Conflict(f"{arguments.get('Key', '')}: changed by another writer") from exc
            if code in ("NoSuchKey", "404", "NotFound"):
                raise FileNotFoundError(arguments.get("Key", "")) from exc
            raise StoreError(f"object store {self.uri}: {operation} failed: {code or exc}") from exc
        except BotoCoreError as exc:
            raise StoreError(f"object store {self.uri} cannot be reached: {exc}") from exc

    # ----------------------------------------------------------------- reads

    def get(self, name: str) -> Stored | None:
        """The object ``name``, or None when there is none."""
        try:
            answer = self._call("get_object", Key=self.key(name))
        except FileNotFoundError:
            return None
        return Stored(answer["Body"].read(), str(answer["ETag"]))

    def names(self, under: str) -> list[str]:
        """Every object name below the folder ``under`` (relative to the store's prefix), sorted."""
        folder = self.key(under) + "/"
        found: list[str] = []
        token: str | None = None
        while True:
            extra = {"ContinuationToken": token} if token else {}
            answer = self._call("list_objects_v2", Prefix=folder, **extra)
            found.extend(item["Key"][len(self.key("")) :].lstrip("/") for item in answer.get("Contents", []))
            token = answer.get("NextContinuationToken")
            if not answer.get("IsTruncated") or not token:
                return sorted(found)

    def folders(self, under: str) -> list[str]:
        """The names of the folders directly inside ``under`` (one listing page: up to 1,000)."""
        folder = self.key(under) + "/"
        answer = self._call("list_objects_v2", Prefix=folder, Delimiter="/")
        return sorted(p["Prefix"][len(folder) :].strip("/") for p in answer.get("CommonPrefixes", []))

    # ---------------------------------------------------------------- writes

    def create(self, name: str, body: bytes) -> str:
        """Write ``name`` only if no object has that name (``Conflict`` otherwise); its ETag."""
        return str(self._call("put_object", Key=self.key(name), Body=body, IfNoneMatch="*")["ETag"])

    def replace(self, name: str, body: bytes, etag: str) -> str:
        """Overwrite ``name`` only if it is still the version ``etag`` (``Conflict`` otherwise)."""
        return str(self._call("put_object", Key=self.key(name), Body=body, IfMatch=etag)["ETag"])

    def delete(self, name: str) -> None:
        """Remove ``name`` (no error when it is already gone)."""
        self._call("delete_object", Key=self.key(name))

    def update(self, name: str, change: Callable[[bytes | None], bytes]) -> bytes:
        """Read-modify-write ``name``: ``change(current body or None)`` gives the new body, written
        conditionally on the version read; a race lost is read again and retried with backoff."""
        pause = _FIRST_PAUSE
        for attempt in range(_ATTEMPTS):
            current = self.get(name)
            body = change(current.body if current else None)
            try:
                if current is None:
                    self.create(name, body)
                else:
                    self.replace(name, body, current.etag)
            except Conflict:
                if attempt == _ATTEMPTS - 1:
                    raise
                time.sleep(pause * (0.5 + random.random()))
                pause *= 2
                continue
            return body
        raise AssertionError("unreachable")  # pragma: no cover


def _boto3_client(options: Mapping[str, str]) -> Any:
    try:
        import boto3
        from botocore.config import Config
    except ImportError:
        raise StoreError("storage.uri needs boto3: pip install 'huichat[s3]'") from None
    endpoint = options.get("endpoint") or options.get("aws_endpoint") or None
    return boto3.client(
        "s3",
        endpoint_url=endpoint,
        region_name=options.get("region") or options.get("aws_region") or None,
        aws_access_key_id=options.get("aws_access_key_id") or None,
        aws_secret_access_key=options.get("aws_secret_access_key") or None,
        aws_session_token=options.get("aws_session_token") or None,
        config=Config(
            retries={"max_attempts": 3, "mode": "standard"},
            s3={"addressing_style": "path" if endpoint else "auto"},
        ),
    )


def configured_store(storage: StorageConfig) -> ObjectStore | None:
    """The shared store of ``storage.uri``, or None on a single machine (nothing imported then)."""
    return ObjectStore(storage.uri, storage.options) if storage.uri else None

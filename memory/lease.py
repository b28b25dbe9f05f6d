"""A lease in the shared store: one replica at a time runs a memory's upkeep, for a bounded while.

Compaction and old-version cleanup of a user's index on object storage need doing once, not by
every replica that wrote to it (each would rewrite the same fragments, and their commits would
conflict). The lease is one small object, ``{"holder", "expires"}``, created with
``If-None-Match: *``; one that expired (its holder died mid-job) is taken over with ``If-Match``
on the version read, so of two replicas racing for it exactly one wins. A job that may outlast
it (a reindex, a lifecycle run over a large memory) holds it with ``held``, which pushes the
expiry on while the job runs. The holder deletes it when done. Nothing here runs on a
request's path: the server takes it in its background task or a job's thread.
"""

from __future__ import annotations

import contextlib
import json
import secrets
import threading
import time
from collections.abc import Iterator

from huichat.memory.location import MemoryLocation
from huichat.memory.objectstore import Conflict, ObjectStore, StoreError

LEASE_SECONDS = 600.0
"""How long a lease holds without being released: far longer than a compaction takes, short
enough that a replica killed mid-job delays the next one by minutes, not forever."""


def upkeep_lease(location: MemoryLocation) -> Lease | None:
    """The lease a memory's upkeep takes in its shared store — compaction, the lifecycle jobs and a
    reindex, one at a time across the fleet; None on one machine (a local lock does it there)."""
    if not location.shared_root:
        return None
    return Lease(ObjectStore(location.shared_root, location.options), "upkeep.lease")


class LeaseBusy(StoreError):
    """Another holder has the lease: its job runs elsewhere now."""


class Lease:
    """The lease ``name`` in ``store``, as one holder sees it."""

    def __init__(self, store: ObjectStore, name: str, seconds: float = LEASE_SECONDS) -> None:
        self.store = store
        self.name = name
        self.seconds = seconds
        self.holder = secrets.token_hex(6)

    def _body(self) -> bytes:
        return json.dumps({"holder": self.holder, "expires": time.time() + self.seconds}).encode()

    def acquire(self) -> bool:
        """Take the lease: True when this holder has it now, False while another one holds it."""
        body = self._body()
        try:
            self.store.create(self.name, body)
            return True
        except Conflict:
            pass
        current = self.store.get(self.name)
        try:
            if current is None:  # released between the two requests
                self.store.create(self.name, body)
                return True
            if float(json.loads(current.body).get("expires", 0)) > time.time():
                return False
            self.store.replace(self.name, body, current.etag)  # expired: its holder died mid-job
            return True
        except Conflict:
            return False  # another replica took it first

    def release(self) -> None:
        """Give the lease back (only if this holder still has it: an expired one may be another's now)."""
        current = self.store.get(self.name)
        if current is not None and json.loads(current.body).get("holder") == self.holder:
            self.store.delete(self.name)

    def renew(self) -> bool:
        """Push this holder's expiry on; False when the lease is no longer this holder's."""
        current = self.store.get(self.name)
        if current is None or json.loads(current.body).get("holder") != self.holder:
            return False
        try:
            self.store.replace(self.name, self._body(), current.etag)
            return True
        except Conflict:
            return False

    @contextlib.contextmanager
    def held(self) -> Iterator[None]:
        """Hold the lease for a block however long it runs, renewed every quarter of its time
        (``LeaseBusy`` when another holder has it); released at the end."""
        if not self.acquire():
            raise LeaseBusy(f"{self.store.uri_of(self.name)} is held by another process")
        stop = threading.Event()

        def renewing() -> None:
            while not stop.wait(self.seconds / 4):
                with contextlib.suppress(StoreError):  # the next try, or the expiry, settles it
                    if not self.renew():
                        return

        renewer = threading.Thread(target=renewing, name=f"lease {self.name}", daemon=True)
        renewer.start()
        try:
            yield
        finally:
            stop.set()
            renewer.join()
            self.release()

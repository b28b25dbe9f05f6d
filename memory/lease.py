"""A lease in the shared store: one replica at a time runs a memory's upkeep, for a bounded while.

Compaction and old-version cleanup of a user's index on object storage need doing once, not by
every replica that wrote to it (each would rewrite the same fragments, and their commits would
conflict). The lease is one small object, ``{"holder", "expires"}``, created with
``If-None-Match: *``; one that expired (its holder died mid-job) is taken over with ``If-Match``
on the version read, so of two replicas racing for it exactly one wins. The holder deletes it
when done. Nothing here runs on a request's path: the server takes it in its background task.
"""

from __future__ import annotations

import json
import secrets
import time

from huichat.memory.objectstore import Conflict, ObjectStore

LEASE_SECONDS = 600.0
"""How long a lease holds without being released: far longer than a compaction takes, short
enough that a replica killed mid-job delays the next one by minutes, not forever."""


class Lease:
    """The lease ``name`` in ``store``, as one holder sees it."""

    def __init__(self, store: ObjectStore, name: str, seconds: float = LEASE_SECONDS) -> None:
        self.store = store
        self.name = name
        self.seconds = seconds
        self.holder = secrets.token_hex(6)

    def acquire(self) -> bool:
        """Take the lease: True when this holder has it now, False while another one holds it."""
        body = json.dumps({"holder": self.holder, "expires": time.time() + self.seconds}).encode()
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

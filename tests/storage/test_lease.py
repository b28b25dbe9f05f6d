"""The upkeep lease across replicas, against moto's S3 server."""

from __future__ import annotations

from huichat.memory.lease import Lease
from huichat.memory.objectstore import ObjectStore
from tests.storage.conftest import S3


def test_one_holder_at_a_time_and_an_expired_lease_is_taken_over(s3: S3) -> None:
    a, b = (Lease(ObjectStore(s3.uri(), s3.options), "users/alice/upkeep.lease") for _ in range(2))
    assert a.acquire() and not b.acquire()
    a.release()
    b.seconds = 0.0  # b takes it and "dies" holding it: once expired, a takes it over
    assert b.acquire()
    assert a.acquire()
    assert not b.acquire()  # a's now, for a's 600 s
    b.release()  # no longer b's: left alone
    assert ObjectStore(s3.uri(), s3.options).get("users/alice/upkeep.lease") is not None
    a.release()
    assert ObjectStore(s3.uri(), s3.options).get("users/alice/upkeep.lease") is None

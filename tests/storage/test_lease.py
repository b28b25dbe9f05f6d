"""The upkeep lease across replicas, against moto's S3 server."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import pytest

from huichat.app.users.memories import Memory, UpkeepBusy
from huichat.memory.kernel import MemoryKernel
from huichat.memory.lease import Lease, LeaseBusy
from huichat.memory.objectstore import ObjectStore
from tests.conftest import open_kernel
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


def test_a_lifecycle_job_runs_on_one_replica_at_a_time(s3: S3, tmp_path: Path) -> None:
    """Two replicas asked for the same user's job at once: the one without the lease says so and
    runs nothing (it would move the same turns between tiers in the same shared index)."""
    held = Lease(ObjectStore(s3.uri(), s3.options), "users/alice/upkeep.lease")
    memory = Memory(
        "alice",
        lambda: open_kernel(tmp_path),
        lambda reason: pytest.fail(reason),
        Lease(ObjectStore(s3.uri(), s3.options), "users/alice/upkeep.lease"),
    )
    ran: list[int] = []

    def count(kernel: MemoryKernel) -> int:
        ran.append(kernel.count())
        return len(ran)

    async def job() -> int:
        return await memory.upkeep(count, 0.0)

    async def scenario() -> None:
        assert held.acquire()
        with pytest.raises(UpkeepBusy, match="another replica runs the upkeep of alice's memory"):
            await job()
        assert ran == []
        held.release()
        assert await job() == 1
        assert held.acquire()  # released by the job that ran: free again
        await memory.close()

    asyncio.run(scenario())


def test_a_job_longer_than_the_lease_keeps_it_until_it_ends(s3: S3) -> None:
    holder, other = (Lease(ObjectStore(s3.uri(), s3.options), "users/alice/upkeep.lease") for _ in range(2))
    holder.seconds = 0.6  # a reindex outlasting the lease many times over
    with holder.held():
        for _ in range(6):
            time.sleep(0.3)
            assert not other.acquire()  # renewed: never expired under the running job
        with pytest.raises(LeaseBusy), other.held():
            pass
    assert other.acquire()  # released at the end

"""A process the chaos benchmark starts, lets work, and kills (``python -m benchmarks.chaos_worker``).

``CONFIG WORKLOAD TAG SEED COUNT``: open memory the way huichat does (``build_kernel``) and
run one workload, printing ``ack <id>`` for every turn once ``append_turns`` has returned
(the turn is acknowledged: it must survive anything that happens after). ``COUNT`` bounds
the work (0: until killed). It prints ``opening`` once its imports are done, ``ready``
once memory is open. The workloads are in ``WORKLOADS``.
"""

from __future__ import annotations

import random
import sys
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path

from benchmarks.common import build_kernel
from huichat.app.config import load_config
from huichat.memory.errors import KernelError
from huichat.memory.kernel import MemoryKernel, SessionHandle
from huichat.memory.results import SearchRequest
from huichat.memory.store import TurnStore
from huichat.memory.turns import Message, TurnDraft

START = datetime(2026, 11, 25, 7, 0, tzinfo=UTC)
_WORDS = ("记忆", "部署", "VPN", "llama.cpp", "上周三", "WireGuard", "显存", "🎉", "naïve", "\r\n", "```", "<!-- x -->")


def _text(rng: random.Random) -> str:
    size = rng.choice((3, 10, 40, 400, 4000))
    return " ".join(rng.choice(_WORDS) for _ in range(size))


def _session(kernel: MemoryKernel, tag: str) -> SessionHandle:
    try:
        return kernel.resume_session(f"chaos-{tag}")
    except KernelError:
        return kernel.new_session(START, session_id=f"chaos-{tag}")


def _ack(ids: list[str]) -> None:
    sys.stdout.write("".join(f"ack {i}\n" for i in ids))
    sys.stdout.flush()


def write(kernel: MemoryKernel, tag: str, rng: random.Random, count: int) -> None:
    """Live turns one at a time, now and then a batch (as an import writes), maintenance as
    the app runs it after replies, and searches that count accesses."""
    session = _session(kernel, tag)
    done = 0
    while not count or done < count:
        moment = START + timedelta(minutes=session.next_index)
        batch = rng.choice((1, 1, 1, 3))
        drafts = [
            TurnDraft((Message("user", _text(rng)), Message("assistant", _text(rng))), moment + timedelta(seconds=i))
            for i in range(batch)
        ]
        _ack([t.id for t in kernel.append_turns(session, drafts)])
        done += batch
        if rng.random() < 0.3:
            _search(kernel, SearchRequest(rng.choice(_WORDS), moment))
            kernel.flush_access()
        if kernel.needs_maintenance() or rng.random() < 0.05:
            kernel.maintain()


def reindex(kernel: MemoryKernel, tag: str, rng: random.Random, count: int) -> None:
    """Rebuild the whole index from the transcripts, again and again."""
    done = 0
    while not count or done < count:
        report = kernel.reindex()
        print(f"reindexed {report.added}", flush=True)
        done += 1


def read(kernel: MemoryKernel, tag: str, rng: random.Random, count: int) -> None:
    """Searches with filters and access statistics, as another window would run them."""
    done = 0
    while not count or done < count:
        _search(kernel, SearchRequest(rng.choice(_WORDS), START, filter_expr="turn_index >= 0"))
        kernel.flush_access()
        done += 1


def _search(kernel: MemoryKernel, request: SearchRequest) -> None:
    """A search as the app runs one: given up at its deadline with one line (reported), never a crash."""
    try:
        kernel.search(request)
    except KernelError as exc:
        if "took longer than" not in str(exc):
            raise
        print("deadline", flush=True)


Workload = Callable[[MemoryKernel, str, random.Random, int], None]
WORKLOADS: dict[str, Workload] = {"write": write, "reindex": reindex, "read": read}
"""What can be killed at random points. Imports and lifecycle jobs join here when they exist:
a workload that writes through the kernel and prints ``ack <id>`` for what it has stored."""


def main() -> None:
    config, workload, tag, seed, count = sys.argv[1:6]
    print(f"opening ({TurnStore.__name__} loaded)", flush=True)  # the slow imports are done
    kernel = build_kernel(load_config(Path(config)), for_rebuild=workload == "reindex")
    print("ready", flush=True)
    WORKLOADS[workload](kernel, tag, random.Random(int(seed)), int(count))
    kernel.close()
    print(f"conflicts {kernel.store.conflicts_retried}", flush=True)


if __name__ == "__main__":
    main()

"""One hostile client of ``bench chaos``'s serve part, as a process of its own.

The attackers stand in for clients on other machines: each runs in its own process, started
with ``nice -n 19`` by the bench, so that on a small machine they do not compete with the
thread that times the normal user (in the bench's process they shared its GIL, and the
latency measured was the bench's own). Each prints ``sending`` once its first answer came
(the bench times the normal user only when every attacker is under way: starting twenty
interpreters is this machine's work, not the attack's), sends until SIGTERM, then prints
what it saw as one JSON line: ``{"tried", "failed", "notes"}``.

    python -m benchmarks.chaos_attacker big-queries URL KEY
    python -m benchmarks.chaos_attacker wrong-secrets URL KEY_ID
"""

from __future__ import annotations

import json
import signal
import sys
import threading
from types import FrameType

import httpx

HOSTILE_QUERY = "长" * 340_000
"""About 1 MB of UTF-8, under ``serve.max_body_bytes``."""


def main(arguments: list[str]) -> int:
    """Attack until SIGTERM; print the tally."""
    kind, url, who = arguments
    stop = threading.Event()

    def stopping(_signal: int, _frame: FrameType | None) -> None:
        stop.set()

    signal.signal(signal.SIGTERM, stopping)
    tally: dict[str, object] = {"tried": 0, "failed": 0, "notes": []}

    def check(answer: httpx.Response, allowed: tuple[int, ...]) -> None:
        try:
            shaped = "error" in answer.json()
        except ValueError:
            shaped = False
        tally["tried"] = int(str(tally["tried"])) + 1
        if tally["tried"] == 1:
            print("sending", flush=True)
        if answer.status_code not in allowed or not shaped:
            tally["failed"] = int(str(tally["failed"])) + 1
            notes = tally["notes"]
            assert isinstance(notes, list)
            if len(notes) < 3:
                notes.append(f"hostile request answered {answer.status_code} {answer.text[:100]!r}")

    try:
        if kind == "big-queries":
            with httpx.Client(base_url=url, headers={"Authorization": f"Bearer {who}"}, timeout=120) as client:
                while not stop.is_set():
                    # 429 too: the wrong secrets come from the same address, which is then refused for a while
                    check(client.post("/v1/memory/search", json={"query": HOSTILE_QUERY}), (413, 429))
                    check(client.post("/v1/memory/search", content=b"[" * 2_000_000), (413, 429))
        else:
            wrong = f"hc_{who}_{'w' * 43}"
            with httpx.Client(base_url=url, headers={"Authorization": f"Bearer {wrong}"}, timeout=120) as client:
                while not stop.is_set():
                    check(client.get("/v1/memory/status"), (401, 429))
    except httpx.TransportError as exc:
        if not stop.is_set():
            tally["failed"] = int(str(tally["failed"])) + 1
            tally["notes"] = [*tally["notes"], f"transport error: {exc!r}"[:200]]  # type: ignore[misc]
    print(json.dumps(tally), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

"""Run as a separate process by the kernel tests: writes turns into a shared store.

``python -m tests.memory.writer_process ROOT COUNT TAG [options]``

- ``--die-before-index``: the process kills itself right after the transcript write.
- ``--pause-before-index DIR``: after the first transcript write, create ``DIR/ready`` and
  wait for ``DIR/go`` before the index write (another process opens in between).
- ``--maintain-every N``: run maintenance after every N turns (commits that race others).
- ``--search``: search (and count accesses) after every turn.
"""

from __future__ import annotations

import os
import signal
import sys
import time
from datetime import timedelta
from pathlib import Path
from typing import Any

from huichat.memory.results import SearchRequest
from huichat.memory.turns import Message, TurnDraft
from tests.conftest import NOW, open_kernel


def _option(name: str) -> str | None:
    return sys.argv[sys.argv.index(name) + 1] if name in sys.argv else None


def main() -> None:
    root, count, tag = Path(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
    kernel = open_kernel(root)
    add = kernel.store.add
    if "--die-before-index" in sys.argv:

        def killed(*_args: object, **_kwargs: object) -> None:
            os.kill(os.getpid(), signal.SIGKILL)

        kernel.store.add = killed  # type: ignore[method-assign]  # the process dies right after the transcript write
    pause = _option("--pause-before-index")
    if pause is not None:

        def paused(*args: Any, **kwargs: Any) -> None:
            (Path(pause) / "ready").touch()
            while not (Path(pause) / "go").exists():
                time.sleep(0.02)
            kernel.store.add = add  # type: ignore[method-assign]
            add(*args, **kwargs)

        kernel.store.add = paused  # type: ignore[method-assign]
    every = int(_option("--maintain-every") or 0)
    session = kernel.new_session(NOW, session_id=f"proc-{tag}")
    for i in range(count):
        moment = NOW + timedelta(seconds=i)
        kernel.append_turn(
            session,
            TurnDraft((Message("user", f"{tag} message {i} 记忆"), Message("assistant", f"ack {i}")), moment),
        )
        if "--search" in sys.argv:
            kernel.search(SearchRequest(f"{tag} message", moment))
            kernel.flush_access()
        if every and (i + 1) % every == 0:
            kernel.maintain(force=True)
    kernel.close()
    print(f"conflicts retried: {kernel.store.conflicts_retried}")


if __name__ == "__main__":
    main()

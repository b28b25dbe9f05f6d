"""Run as a separate process by the kernel tests: writes turns into a shared store.

``python -m tests.memory.writer_process ROOT COUNT TAG [--die-before-index]``
"""

from __future__ import annotations

import os
import signal
import sys
from datetime import timedelta
from pathlib import Path

from memory.turns import Message, TurnDraft
from tests.conftest import NOW, open_kernel


def main() -> None:
    root, count, tag = Path(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
    die = "--die-before-index" in sys.argv
    # not reconciling at open: a writer racing another's transcript-to-index window is tested on its own
    kernel = open_kernel(root, reconcile=False)
    if die:

        def killed(*_args: object, **_kwargs: object) -> None:
            os.kill(os.getpid(), signal.SIGKILL)

        kernel.store.add = killed  # type: ignore[method-assign]  # the process dies right after the transcript write
    session = kernel.new_session(NOW, session_id=f"proc-{tag}")
    for i in range(count):
        moment = NOW + timedelta(seconds=i)
        kernel.append_turn(
            session,
            TurnDraft(
                (Message("user", f"{tag} message {i} 记忆"), Message("assistant", f"ack {i}")),
                moment,
            ),
        )
    kernel.close()


if __name__ == "__main__":
    main()

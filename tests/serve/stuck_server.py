"""``huichat`` whose embedding model never answers a query holding ``STUCK``: a search in flight
that no deadline ends soon (run as ``python -m tests.serve.stuck_server --config … serve``).

The model is the vendor seam: the server, its routes and its shutdown are the real ones.
When the query arrives, the file named by ``HUICHAT_STUCK_FLAG`` is created.
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

from huichat.app.wiring import main
from huichat.memory.embedding import HashEmbedder, Vector

_answer = HashEmbedder.embed_query


def _stuck(self: HashEmbedder, text: str) -> Vector:
    if "STUCK" in text:
        Path(os.environ["HUICHAT_STUCK_FLAG"]).touch()
        time.sleep(600)
    return _answer(self, text)


if __name__ == "__main__":
    HashEmbedder.embed_query = _stuck  # type: ignore[method-assign]
    sys.exit(main(sys.argv[1:]))

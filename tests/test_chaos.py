"""The reliability suite at its CI budget (issue 16): the same code as ``huichat bench chaos``.

Run alone with ``pytest -m chaos``; the full budget is ``huichat bench chaos --budget full``.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from benchmarks.chaos import Budget, report_table, run_chaos

pytestmark = pytest.mark.chaos


@pytest.mark.parametrize("part", ["kills", "writers", "faults", "fuzz", "serve", "escapes"])
def test_nothing_is_lost_duplicated_leaked_or_left_uncaught(tmp_path: Path, part: str) -> None:
    outcomes = run_chaos(Budget.named("ci"), [part], tmp_path)
    assert outcomes and all(o.tried or any(n.startswith("skipped") for n in o.notes) for o in outcomes)
    found = [f"{o.part}/{o.kind}: {note}" for o in outcomes if not o.clean for note in o.notes]
    assert all(o.clean for o in outcomes), report_table(outcomes) + "\n" + "\n".join(found)

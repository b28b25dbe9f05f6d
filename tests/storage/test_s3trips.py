"""``python -m benchmarks.s3trips`` counts what reaches the store (BENCHMARKS.md's table)."""

from __future__ import annotations

from benchmarks.s3trips import measure


def test_the_round_trip_counts_are_measured_and_a_key_check_costs_none() -> None:
    counts = measure(turns=3)
    assert counts["store a turn (each of 3)"] > 0
    assert counts["search, within the consistency interval (each of 10)"] > 0
    assert counts["API key check of a verified key (each of 100)"] == 0
    assert counts["keys read again (KeyRing.refresh: twice a second per replica)"] == 1
    reached = counts["requests by method and what they reached, whole run"]
    assert {"PUT index", "PUT objects"} <= set(reached)  # the index's commits and the keys' objects
    assert {key.split()[0] for key in reached} <= {"GET", "PUT", "HEAD", "DELETE", "POST"}

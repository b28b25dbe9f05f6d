"""``bench abstain --turns``: stores cut to their first N turns or padded from another folder."""

from __future__ import annotations

from datetime import datetime
from zoneinfo import ZoneInfo

import pytest

from benchmarks.abstain import padding, sized
from huichat.app.errors import CommandError

ZONE = ZoneInfo("Asia/Shanghai")


def _row(session: str, when: str, index: int, turn_at: str | None = None) -> dict[str, object]:
    return {
        "conversation_id": "c",
        "session_id": session,
        "session_datetime": when,
        "turn_id": f"{session}:{index}",
        "turn_index": index,
        "speaker": "A",
        "text": f"turn {index} of {session}",
        "turn_datetime": turn_at,
    }


def test_a_store_cut_to_n_turns_keeps_the_first_n_said() -> None:
    later, earlier = "2023-05-08T13:56:00", "2023-05-01T09:00:00"
    rows = [_row("s2", later, 0), _row("s2", later, 1), _row("s1", earlier, 1), _row("s1", earlier, 0)]
    assert [r["turn_id"] for r in sized(rows, 3)] == ["s1:0", "s1:1", "s2:0"]
    assert sized(rows, None) is rows and sized(rows, 10) is rows  # a larger store is padded, not cut


def test_padding_ends_a_day_before_the_conversation_and_never_runs_short() -> None:
    pad = [_row("p1", "2025-03-03T07:35:00", 0, "2025-03-03T07:35:00"), _row("p2", "2025-03-04T08:00:00", 0)]
    conversation_starts = datetime(2023, 5, 1, 9, 0, tzinfo=ZONE)
    moved = padding(pad, 2, conversation_starts, ZONE)
    assert datetime.fromisoformat(str(moved[1]["session_datetime"])) == datetime(2023, 4, 30, 9, 0, tzinfo=ZONE)
    assert datetime.fromisoformat(str(moved[0]["turn_datetime"])) == datetime(2023, 4, 29, 8, 35, tzinfo=ZONE)
    assert moved[1]["turn_datetime"] is None and moved[0]["text"] == pad[0]["text"]
    assert padding(pad, 0, conversation_starts, ZONE) == []
    with pytest.raises(CommandError, match="holds 2 utterances"):
        padding(pad, 3, conversation_starts, ZONE)

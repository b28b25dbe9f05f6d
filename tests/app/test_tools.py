"""The recall tool's text: the time understood, how many hits it held, and which time each hit matched."""

from __future__ import annotations

from datetime import datetime, timedelta
from pathlib import Path

from app.tools import ToolContext, run_tool
from memory.turns import Message, TurnDraft
from tests.conftest import ZONE, open_kernel

SAID = datetime(2026, 11, 30, 10, 0, tzinfo=ZONE)  # a Monday: 上周三下午 is 2026-11-25 12:00–18:00


def test_the_tool_says_which_time_matched_and_marks_the_nearest_outside(tmp_path: Path) -> None:
    kernel = open_kernel(tmp_path)
    session = kernel.new_session(SAID)
    deployed, vpn = kernel.append_turns(
        session,
        [
            TurnDraft((Message("user", "我上周三下午在杭州部署了 Qwen 模型"), Message("assistant", "好的")), SAID),
            TurnDraft((Message("user", "VPN 又断了"), Message("assistant", "重启试试")), SAID + timedelta(minutes=1)),
        ],
    )
    now = SAID + timedelta(hours=1)
    found = run_tool(kernel, "recall_memory", {"query": "上周三下午 部署"}, ToolContext(now))
    assert found.content.startswith("时间范围 (time range): 2026-11-25 Wed 12:00–18:00 · 1 in 上周三下午 · ")
    assert f"[id:{deployed.id} | " in found.content
    assert "\n🕒 about 11-25 12:00–18:00 (上周三下午)\n" in found.content
    outside = run_tool(kernel, "recall_memory", {"query": "昨天 VPN", "top_k": 1}, ToolContext(now))
    assert outside.content.startswith(
        "时间范围 (time range): 2026-11-29 Sun · 0 in 昨天 · 1 nearest outside (marked 🕒 outside the range)"
    )
    assert f"[id:{vpn.id} | " in outside.content
    assert "\n🕒 outside the range · said 2026-11-30\n" in outside.content
    kernel.close()

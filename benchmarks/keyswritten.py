"""Keys written by a model for a recall benchmark (issue 24's "keys written at ingest"): an experiment.

``python -m benchmarks.keyswritten --data DIR --out KEYS.jsonl --conversations conv-26,conv-30
--url http://127.0.0.1:8080/v1/chat/completions [--kinds]`` asks the server for facts about each
stretch of ``--per`` turns of every session (``app.keys``'s prompt; ``--kinds``: "name, kind:
fact" lines instead), one JSON line per stretch (resumable). ``python -m benchmarks.recallstudy
--keys KEYS.jsonl --variants base,key_weight=0.1`` then measures them. Measured in BENCHMARKS.md
("Keys written at ingest by a small local model"); not kept.
"""

from __future__ import annotations

import argparse
import json
import time
from collections import defaultdict
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import httpx

from benchmarks.recall import read_jsonl
from huichat.app.keys import keys_request, parse_keys
from huichat.memory.turns import Message, Turn

KINDS = (
    "Above is a conversation. List at most {count} facts from it, one a line, for an index that finds them "
    "later. Start each line with the person's name and the kind of fact (hobby, activity, family, friend, pet, "
    "job, study, home, travel, health, food, art, book, music, event, plan, goal, feeling, opinion, belief, "
    "possession), then the fact in a few words, then the numbers of the messages it comes from in brackets. "
    "For example:\n- Anna, pet: adopted a cat named Miso [4]\n- Ben, goal: run a marathon in Berlin [7, 8]\n"
    "- Anna, family: her sister lives in Oslo [12]\nReply with the list only."
)


def _stretches(rows: list[dict[str, Any]], per: int) -> list[list[Turn]]:
    rows.sort(key=lambda r: r["turn_index"])
    start = datetime.fromisoformat(rows[0]["session_datetime"])
    turns = [
        Turn(
            r["turn_id"],
            r["session_id"],
            "",
            r["turn_index"],
            start + timedelta(seconds=r["turn_index"]),
            (Message("user", r["text"], r["speaker"]),),
        )
        for r in rows
    ]
    stretches = [turns[i : i + per] for i in range(0, len(turns), per)]
    if len(stretches) > 1 and len(stretches[-1]) < per // 3:
        tail = stretches.pop()
        stretches[-1] = stretches[-1] + tail
    return stretches


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.keyswritten", description=__doc__)
    parser.add_argument("--data", type=Path, required=True)
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--conversations", required=True)
    parser.add_argument("--url", default="http://127.0.0.1:8080/v1/chat/completions")
    parser.add_argument("--per", type=int, default=20)
    parser.add_argument("--kinds", action="store_true")
    args = parser.parse_args(argv)
    done = {row["window"] for row in read_jsonl(args.out)} if args.out.exists() else set()
    sessions: dict[tuple[str, str], list[dict[str, Any]]] = defaultdict(list)
    for row in read_jsonl(args.data / "conversations.jsonl"):
        if row["conversation_id"] in args.conversations.split(","):
            sessions[(row["conversation_id"], row["session_id"])].append(row)
    for (conversation, session), rows in sorted(sessions.items()):
        for number, stretch in enumerate(_stretches(rows, args.per)):
            window = f"{conversation}/{session}/{number}"
            if window in done:
                continue
            count = max(3, len(stretch) // 2)
            messages, numbered = keys_request(stretch, count)
            if args.kinds:
                said = messages[0]["content"]
                messages = [
                    {"role": "user", "content": said[: said.index("\n\nAbove is")] + "\n\n" + KINDS.format(count=count)}
                ]
            started = time.perf_counter()
            body = httpx.post(
                args.url, json={"model": "x", "messages": messages, "temperature": 0, "max_tokens": 600}, timeout=900
            ).json()
            answer = body["choices"][0]["message"]["content"]
            keys = parse_keys(answer, numbered, count)
            record = {
                "window": window,
                "conversation": conversation,
                "answer": answer,
                "usage": body.get("usage"),
                "seconds": round(time.perf_counter() - started, 1),
                "keys": [{"text": k.text, "turn_ids": list(k.turn_ids)} for k in keys],
            }
            with args.out.open("a", encoding="utf-8") as out:
                out.write(json.dumps(record, ensure_ascii=False) + "\n")
            print(window, len(keys), record["seconds"], flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

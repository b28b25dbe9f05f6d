"""A synthetic ChatGPT export with the real format's traps, deterministic from a seed.

Used by the import benchmark and the streaming tests: conversations with edits and
regenerations (non-current branches), hidden system and context nodes with null times,
empty placeholders, reasoning and tool nodes, images, citation markers, CRLF code, visible
messages without a time and replies timestamped before their question. Written one
conversation at a time (ASCII-escaped, as ChatGPT writes it), so any size fits in memory.
"""

from __future__ import annotations

import argparse
import json
import random
import uuid
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from benchmarks import longgen, longvocab

_ZH = [
    "我们明天去杭州开会",
    "这个函数为什么返回空值",
    "帮我写一封请假邮件",
    "本地模型部署需要多少显存",
    "上周三讨论的方案怎么样了",
]
_EN = [
    "How do I rotate a log file",
    "Summarise this paper on retrieval",
    "Plan a trip to Kyoto 🗾",
    "Why is my test flaky",
    "Explain vector indexes",
]
_START = 1_672_531_200  # 2023-01-01


@dataclass(frozen=True)
class SyntheticExport:
    """What was written, to check a reader against."""

    path: Path
    conversations: int
    messages: int
    """Messages on the visible branches (what a reader must put in ``messages``)."""
    nodes: int
    """Every node that has a message, visible or not."""
    alternatives: int
    """Non-current branches (one per edit or regeneration)."""
    hidden: int
    """Nodes a reader must skip (system, context, hidden, empty)."""


@dataclass
class _Builder:
    rng: random.Random
    mapping: dict[str, Any]
    clock: float
    visible: int = 0
    alternatives: int = 0
    hidden: int = 0
    long_answers: bool = False
    """Answers of real length (``benchmarks.longgen``: 500–3,000 characters, headings, code, zh/en)."""

    def new_id(self) -> str:
        return str(uuid.UUID(int=self.rng.getrandbits(128), version=4))

    def add(self, parent: str, role: str, content: dict[str, Any], *, time: float | None, **fields: Any) -> str:
        node_id = self.new_id()
        message = {
            "id": node_id,
            "author": {"role": role, "name": fields.pop("name", None), "metadata": {}},
            "create_time": time,
            "update_time": None,
            "content": content,
            "status": "finished_successfully",
            "end_turn": role == "assistant" or None,
            "weight": fields.pop("weight", 1.0),
            "metadata": fields.pop("metadata", {}),
            "recipient": fields.pop("recipient", "all"),
            "channel": None,
        }
        self.mapping[node_id] = {"id": node_id, "message": message, "parent": parent, "children": []}
        self.mapping[parent]["children"].append(node_id)
        return node_id

    def tick(self, seconds: float) -> float:
        self.clock += seconds
        return round(self.clock, 6)

    def text(self, role: str) -> dict[str, Any]:
        if role == "assistant" and self.long_answers:
            lang = self.rng.choice(("en", "zh"))
            project = self.rng.choice(longvocab.PROJECTS_EN if lang == "en" else longvocab.PROJECTS_ZH)
            made = longgen.answer(
                self.rng, lang, project, self.rng.choice(list(longvocab.FACTS)), self.rng.choice(longgen.DEPTHS)
            )
            return {"content_type": "text", "parts": [made.text]}
        sentence = self.rng.choice(_ZH if self.rng.random() < 0.5 else _EN)
        if role == "assistant" and self.rng.random() < 0.2:
            sentence += " \ue200cite\ue202turn0search0\ue201"
        if role == "assistant" and self.rng.random() < 0.1:
            sentence += "\n```python\r\nprint('hi')\r\n```"
        return {"content_type": "text", "parts": [sentence]}

    def exchange(self, parent: str, budget: int) -> str:
        """A user message and its reply (with the extras); returns the last visible node."""
        user_time = None if self.rng.random() < 0.05 else round(self.tick(self.rng.uniform(30, 3600)), 3)
        if self.rng.random() < 0.1:  # an edit: the older version stays as a non-current branch
            old = self.add(parent, "user", self.text("user"), time=user_time)
            self.add(old, "assistant", self.text("assistant"), time=self.tick(5))
            self.alternatives += 1
        content = self.text("user")
        if self.rng.random() < 0.08:
            image = {"content_type": "image_asset_pointer", "asset_pointer": f"file-service://file-{self.new_id()}"}
            content = {
                "content_type": "multimodal_text",
                "parts": [image | {"width": 1024, "height": 768}, content["parts"][0]],
            }
        node = self.add(parent, "user", content, time=user_time)
        self.visible += 1
        steps: list[tuple[str, dict[str, Any], dict[str, Any]]] = []
        if self.rng.random() < 0.15:
            steps.append(
                ("assistant", {"content_type": "thoughts", "thoughts": [{"summary": "Planning", "content": "…"}]}, {})
            )
            steps.append(("assistant", {"content_type": "reasoning_recap", "content": "Thought for 4s"}, {}))
        if self.rng.random() < 0.1:
            steps.append(
                ("assistant", {"content_type": "code", "language": "python", "text": "1+1"}, {"recipient": "python"})
            )
            steps.append(("tool", {"content_type": "execution_output", "text": "2"}, {"name": "python"}))
        for role, step, fields in steps[: max(0, budget - 2)]:
            node = self.add(node, role, step, time=self.tick(1), **fields)
            self.visible += 1
        if self.rng.random() < 0.1:
            node = self.add(node, "assistant", {"content_type": "text", "parts": [""]}, time=self.tick(1))
            self.hidden += 1
        # server clock ahead of the client's: a reply dated before its question happens
        reply_time = self.tick(self.rng.uniform(-20, 40))
        if self.rng.random() < 0.05:  # a regeneration: the first answer stays as a non-current branch
            self.add(node, "assistant", self.text("assistant"), time=reply_time)
            self.alternatives += 1
        node = self.add(node, "assistant", self.text("assistant"), time=reply_time)
        self.visible += 1
        return node


def _conversation(rng: random.Random, index: int, budget: int, long_answers: bool) -> tuple[dict[str, Any], _Builder]:
    root = "client-created-root"
    builder = _Builder(
        rng,
        {root: {"id": root, "message": None, "parent": None, "children": []}},
        _START + index * 86_400.0,
        long_answers=long_answers,
    )
    created = round(builder.clock, 6)
    node = builder.add(
        root,
        "system",
        {"content_type": "text", "parts": [""]},
        time=None,
        weight=0.0,
        metadata={"is_visually_hidden_from_conversation": True},
    )
    builder.hidden += 1
    if rng.random() < 0.3:
        context = {
            "content_type": "user_editable_context",
            "user_profile": "I live in Shanghai",
            "user_instructions": "",
        }
        node = builder.add(node, "user", context, time=None, metadata={"is_visually_hidden_from_conversation": True})
        builder.hidden += 1
    while builder.visible < budget:
        node = builder.exchange(node, budget - builder.visible)
    conversation_id = builder.new_id()
    item = {
        "title": f"Conversation {index}",
        "create_time": created,
        "update_time": round(builder.clock, 6),
        "mapping": builder.mapping,
        "moderation_results": [],
        "current_node": node,
        "plugin_ids": None,
        "conversation_id": conversation_id,
        "id": conversation_id,
        "default_model_slug": "gpt-4o",
        "is_archived": False,
    }
    return item, builder


def _write(handle: IO[bytes], count: int, messages: int, seed: int, long_answers: bool) -> tuple[int, int, int, int]:
    rng = random.Random(seed)
    visible = alternatives = hidden = nodes = 0
    handle.write(b"[")
    for index in range(count):
        budget = max(2, (messages - visible) // (count - index))
        item, builder = _conversation(rng, index, budget, long_answers)
        handle.write((b"," if index else b"") + json.dumps(item).encode("ascii"))
        visible += builder.visible
        alternatives += builder.alternatives
        hidden += builder.hidden
        nodes += len(builder.mapping) - 1
    handle.write(b"]")
    return visible, nodes, alternatives, hidden


def _entry(name: str) -> zipfile.ZipInfo:
    # a fixed date: the same arguments write the same bytes
    info = zipfile.ZipInfo(name, date_time=(2024, 1, 1, 0, 0, 0))
    info.compress_type = zipfile.ZIP_DEFLATED
    return info


def write_chatgpt_export(
    path: Path, conversations: int, messages: int, seed: int = 0, *, as_zip: bool = False, long_answers: bool = False
) -> SyntheticExport:
    """Write ``conversations`` conversations holding about ``messages`` visible messages to ``path``.

    With ``as_zip`` the file is a zip holding ``conversations.json`` and a ``user.json``, as
    ChatGPT delivers it. The same arguments always write the same bytes.
    """
    if as_zip:
        with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
            archive.writestr(_entry("user.json"), json.dumps({"id": "user-synthetic", "email": "someone@example.com"}))
            with archive.open(_entry("conversations.json"), "w") as handle:
                counts = _write(handle, conversations, messages, seed, long_answers)
    else:
        with path.open("wb") as handle:
            counts = _write(handle, conversations, messages, seed, long_answers)
    return SyntheticExport(path, conversations, *counts)


def main(argv: list[str] | None = None) -> int:
    """``python -m benchmarks.synthetic --out conversations.json``: an export to try ``huichat import`` on."""
    parser = argparse.ArgumentParser(prog="python -m benchmarks.synthetic", description=main.__doc__)
    parser.add_argument("--out", type=Path, required=True, help="the file to write (.zip: as ChatGPT delivers it)")
    parser.add_argument("--conversations", type=int, default=250)
    parser.add_argument("--messages", type=int, default=2_500)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--long-answers", action="store_true", help="answers of 500–3,000 characters (longgen)")
    args = parser.parse_args(argv)
    written = write_chatgpt_export(
        args.out,
        args.conversations,
        args.messages,
        args.seed,
        as_zip=args.out.suffix == ".zip",
        long_answers=args.long_answers,
    )
    print(f"wrote {written.messages:,} messages in {args.conversations:,} conversations to {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

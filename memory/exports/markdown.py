"""A session as one Markdown file a person can read: who said what, when, and the other branches.

What was said is printed as it was written (it is Markdown already); typed parts (reasoning,
tool calls and results, attachments, raw content) fold into ``<details>``; the branches the
user did not end on (edits, regenerations) follow the conversation, each under the message it
branches from. Hidden nodes are counted, not printed (their raw JSON is in the JSONL export).
"""

from __future__ import annotations

import re
from datetime import tzinfo

from huichat.memory.imports.model import ImportedConversation, ImportedMessage, Part, PartKind
from huichat.memory.imports.stored import StoredSession
from huichat.memory.transcript import format_local_time
from huichat.memory.turns import STATUS_FAILED, STOPPED, Turn

_SERVICES = {
    "chatgpt": "ChatGPT",
    "claude": "Claude",
    "deepseek": "DeepSeek",
    "llm": "llm",
    "elia": "elia",
    "jsonl": "chat JSONL",
    "huichat": "huichat",
}
_FOLDED = {
    PartKind.REASONING: "reasoning",
    PartKind.TOOL_CALL: "tool call",
    PartKind.TOOL_RESULT: "tool result",
    PartKind.CONTEXT: "context",
    PartKind.UNKNOWN: "unsupported content",
}


def _who(message: ImportedMessage, conversation: ImportedConversation) -> str:
    if message.role.value == "assistant":
        return message.model or message.speaker or conversation.model or "assistant"
    return message.speaker or message.role.value


def _part(part: Part) -> str:
    if part.kind is PartKind.TEXT:
        return part.text
    if part.kind is PartKind.ATTACHMENT:
        return f"*{part.text}*" + (
            f"\n\n<details><summary>its text</summary>\n\n{part.content}\n\n</details>" if part.content else ""
        )
    name = f" · {part.name}" if part.name else ""
    return f"<details><summary>{_FOLDED[part.kind]}{name}</summary>\n\n{fenced(part.text)}\n\n</details>"


def fenced(text: str) -> str:
    """``text`` in a code fence longer than any run of backticks inside it."""
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    fence = "`" * max(3, longest + 1)
    return f"{fence}\n{text}\n{fence}"


def _message(message: ImportedMessage, conversation: ImportedConversation, zone: tzinfo) -> str:
    when = format_local_time(message.time.instant, zone) + (" (estimated)" if message.time.estimated else "")
    body = "\n\n".join(_part(p) for p in message.parts if p.text or p.content) or "*(empty)*"
    return f"**{_who(message, conversation)}** · {when}\n\n{body}\n"


def _excerpt(text: str) -> str:
    line = " ".join(text.split())
    return line if len(line) <= 60 else line[:59] + "…"


def _unfinished(turn: Turn) -> str | None:
    """The line that says a reply did not finish (stopped by the user, or failed), as the chat shows it."""
    if turn.status != STATUS_FAILED:
        return None
    error = str(dict(turn.extra).get("error", "") or "")
    if error == STOPPED:
        return "*■ stopped: the reply was cut short here*"
    said = " ".join(error.split()).replace("*", "\\*")  # one line, and a * of the error's own is no emphasis
    return f"*⚠ the reply failed{': ' + said if said else ''}*"


def render(stored: StoredSession, conversation: ImportedConversation, zone: tzinfo) -> str:
    """The Markdown of one session (``conversation`` is ``restore(stored)``)."""
    title = conversation.title or (stored.turns[0].topic if stored.turns else "") or stored.session_id
    service = _SERVICES.get(conversation.service, conversation.service)
    lines = [f"# {title}", ""]
    if conversation.service == "huichat":
        lines.append("- Written in huichat")
    else:
        lines.append(f"- From {service} · conversation `{conversation.conversation_id}`")
    lines += [
        f"- Started {format_local_time(conversation.created.instant, zone)} · {len(stored.turns)} "
        + ("turn" if len(stored.turns) == 1 else "turns"),
        f"- huichat session `{stored.session_id}` (`{stored.session_file}`)",
    ]
    if conversation.skipped:
        lines.append(f"- {len(conversation.skipped)} hidden or empty nodes not shown (kept in the JSONL export)")
    lines.append("")
    by_id = {m.id: m for m in conversation.messages}
    for turn in stored.turns:
        topic = f" · {turn.topic}" if turn.topic and turn.topic != title else ""
        lines += ["---", "", f"## {format_local_time(turn.timestamp, zone)}{topic}", ""]
        speaker = None
        answered_by = dict(turn.extra).get("model", "")  # a reply made in huichat names its model
        for message in turn.messages:
            if message.kind in ("text", "attachment"):
                who = (
                    answered_by if message.role == "assistant" and not message.speaker and answered_by else message.who
                )
                if who != speaker:
                    lines += [f"**{who}**", ""]
                    speaker = who
                body = message.text if message.kind == "text" else f"*{message.text}*"
                lines += [body or "*(empty)*", ""]
            else:  # reasoning, tool calls and results, raw content: folded away
                summary = f"{message.kind.replace('_', ' ')} · {message.who}"
                lines += [f"<details><summary>{summary}</summary>", "", fenced(message.text), "", "</details>", ""]
        if (mark := _unfinished(turn)) is not None:
            lines += [mark, ""]
    stored_ids = {m.id for m, _ in stored.messages()}
    branches = [b for b in conversation.alternatives if not any(m.id in stored_ids for m in b.messages)]
    if branches:
        lines += ["---", "", "## Other branches", ""]
        everything = {**by_id, **{m.id: m for b in conversation.alternatives for m in b.messages}}
        for branch in branches:
            parent = everything.get(branch.parent_id or "")
            where = f"after “{_excerpt(parent.text)}”" if parent is not None else "as another beginning"
            lines += [f"### A branch {where}", ""]
            lines += [_message(m, conversation, zone) for m in branch.messages]
    return "\n".join(lines).rstrip() + "\n"

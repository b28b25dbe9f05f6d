"""Which format a file is, told by its shape — never by its name.

JSON is recognised by the keys of its first value (streamed: at most one conversation is
looked at), SQLite by its tables, transcripts by huichat's markers.
"""

from __future__ import annotations

from collections.abc import Mapping

import ijson

from huichat.memory.imports.model import ImportFormatError, SourceFormat
from huichat.memory.imports.sources import (
    SQLITE_MAGIC,
    ZIP_MAGIC,
    ZSTD_MAGIC,
    Source,
    first_char,
    json_error,
    json_events,
    open_sqlite,
    sqlite_tables,
)

EXPECTED = (
    "a ChatGPT, Claude or DeepSeek export (JSON), an llm logs.db or elia SQLite database, "
    'OpenAI-style chat JSONL ({"messages": [...]} per line), huichat transcripts (Markdown) '
    "or a huichat JSONL export"
)
_DEPTH = 2  # keys are collected down to data.biz_data (DeepSeek's web form)


def _unknown(source: Source, found: str) -> ImportFormatError:
    return ImportFormatError(f"{source.label}: unknown format: expected {EXPECTED}; found {found}")


def json_keys(source: Source) -> tuple[str, dict[str, frozenset[str]], bool]:
    """``("array" | "object", {path: keys})`` for the first value of a JSON file.

    For an array the first item is examined, for objects (one, or JSON Lines) the first
    object; paths are relative to that value (``""``, ``"data"``, ``"data.biz_data"``).
    The flag says whether the array had an item (an array of non-objects has no keys).
    """
    container = "array" if first_char(source.head(4096)) == "[" else "object"
    keys: dict[str, set[str]] = {}
    items = False
    try:
        with json_events(source, multiple=container == "object") as events:
            for prefix, event, value in events:
                if container == "array":
                    items = items or prefix == "item"
                    if (prefix == "" and event == "end_array") or (
                        prefix == "item" and event not in ("start_map", "map_key")
                    ):
                        break  # the end of the first item (or of an empty array)
                    if event != "map_key" or not (prefix == "item" or prefix.startswith("item.")):
                        continue
                    path = prefix[len("item.") :] if prefix != "item" else ""
                else:
                    if prefix == "" and event == "end_map":
                        break
                    if event != "map_key":
                        continue
                    path = prefix
                if (path.count(".") + 1 if path else 0) <= _DEPTH:
                    keys.setdefault(path, set()).add(str(value))
    except ijson.JSONError as exc:
        raise json_error(source, exc, EXPECTED) from exc
    return container, {path: frozenset(found) for path, found in keys.items()}, items


def _from_keys(source: Source, container: str, keys: Mapping[str, frozenset[str]], items: bool) -> SourceFormat:
    top = keys.get("", frozenset())
    if not keys and items:
        raise _unknown(source, f"a JSON {container} whose items are not objects")
    if not keys:
        raise ImportFormatError(f"{source.label}: an empty JSON {container}: no conversations in it")
    if "chat_messages" in keys.get("data.biz_data", frozenset()) or {"chat_session", "chat_messages"} <= top:
        return SourceFormat.DEEPSEEK_WEB
    if {"record", "session_id"} <= top:
        return SourceFormat.HUICHAT_JSONL
    if {"v", "type", "session_id", "source"} <= top:
        raise ImportFormatError(
            f"{source.label}: a huichat import record; it is read with the transcript beside it (import the .md file)"
        )
    if "mapping" in top and "current_node" in top:
        return SourceFormat.CHATGPT
    if "mapping" in top and "inserted_at" in top:
        return SourceFormat.DEEPSEEK
    if "chat_messages" in top:
        return SourceFormat.CLAUDE
    if "messages" in top:
        return SourceFormat.JSONL
    if {"header", "title", "time"} <= top:
        raise ImportFormatError(
            f"{source.label}: Google Takeout activity (Gemini) has no conversations or message ids; "
            "it cannot be imported faithfully"
        )
    if "mapping" in top:
        raise _unknown(
            source, "a mapping without current_node or inserted_at (force one with --format chatgpt|deepseek)"
        )
    shown = ", ".join(sorted(top)[:8]) + (", …" if len(top) > 8 else "")
    what = "a JSON array of objects" if container == "array" else "a JSON object"
    raise _unknown(source, f"{what} with keys {shown or 'none'}")


def _from_tables(source: Source) -> SourceFormat:
    with open_sqlite(source, "SQLite database") as connection:
        tables = sqlite_tables(connection)
        legacy_columns = (
            {str(r[1]) for r in connection.execute("pragma table_info(logs)")} if "logs" in tables else set()
        )
    if {"threads", "turns", "messages", "parts"} <= tables or {"responses", "conversations"} <= tables:
        return SourceFormat.LLM
    if {"chat", "message"} <= tables:
        return SourceFormat.ELIA
    if {"prompt", "response", "datetime_utc"} <= legacy_columns:
        raise ImportFormatError(
            f"{source.label}: an llm logs.db from llm 0.4 or older; run a newer llm once (it migrates the file), "
            "then import it"
        )
    raise _unknown(source, f"a SQLite database with tables {', '.join(sorted(tables)) or 'none'}")


def detect(source: Source) -> SourceFormat:
    """The format of ``source``, or ``ImportFormatError`` naming the file and what was expected."""
    head = source.head()
    if head.startswith(SQLITE_MAGIC):
        return _from_tables(source)
    if head.startswith((ZIP_MAGIC, ZSTD_MAGIC)):  # containers are opened by expand(): this one is nested
        raise ImportFormatError(f"{source.label}: an archive inside an archive; extract it and import it on its own")
    opening = first_char(head)
    if opening in ("[", "{"):
        return _from_keys(source, *json_keys(source))
    text = head.decode("utf-8", errors="ignore")
    if "<!-- huichat:session " in text or "<!-- huichat:turn " in text:
        return SourceFormat.HUICHAT
    if not head.strip():
        raise ImportFormatError(f"{source.label}: an empty file")
    raise _unknown(source, "neither JSON, SQLite nor a huichat transcript")

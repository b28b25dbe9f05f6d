"""Text helpers shared by the readers: citation markers, placeholders, raw JSON.

Citation markers (a decision, tested): ChatGPT writes citations in private-use characters,
``\\ue200cite\\ue202turn0search0\\ue201``. They are invisible or garbage in any other reader,
but the reference ids link the text to ``metadata.content_references``, so each marker
becomes a readable ``[cite: turn0search0]`` (several ids: ``[cite: a, b]``; other kinds keep
their name, ``[entity: …]``). Stray private-use markup characters (U+E200–U+E206 left over,
e.g. the span marks U+E203/U+E204) are removed. The legacy form ``【12†L1-L5】`` becomes
``[cite: 12†L1-L5]``. This is applied to assistant text only: a user may well type 【】.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Mapping
from decimal import Decimal
from typing import Any

_MARKER = re.compile("\ue200([^\ue200-\ue206]*)((?:\ue202[^\ue200-\ue206]*)*)\ue201")
_STRAY = re.compile("[\ue200-\ue206]")
_LEGACY = re.compile(r"【(\d+(?::\d+)?†[^】\n]{0,80})】")


def _marker(match: re.Match[str]) -> str:
    kind = match.group(1).strip() or "cite"
    args = [arg.strip() for arg in match.group(2).split("\ue202") if arg.strip()]
    return f"[{kind}: {', '.join(args)}]" if args else f"[{kind}]"


def readable_citations(text: str) -> str:
    """Assistant text with citation markup turned into ``[cite: …]`` (see the module doc)."""
    if "\ue200" in text or "\ue201" in text or "\ue203" in text or "\ue206" in text:
        text = _STRAY.sub("", _MARKER.sub(_marker, text))
    if "†" in text:
        text = _LEGACY.sub(r"[cite: \1]", text)
    return text


def _plain(value: object) -> object:
    # ijson yields numbers as Decimal: whole ones back to int, others to float
    if isinstance(value, Decimal):
        return int(value) if value == value.to_integral_value() else float(value)
    if isinstance(value, bytes):  # a SQLite blob: its size, not its bytes
        return f"<{len(value)} bytes>"
    raise TypeError(f"not JSON: {type(value).__name__}")


def to_json(value: object) -> str:
    """``value`` as compact JSON, non-ASCII kept (for the ``raw`` of parts and skipped nodes)."""
    return json.dumps(value, ensure_ascii=False, default=_plain, separators=(",", ":"))


def as_text(value: object) -> str:
    """A source value that should be text: strings as they are, anything else as JSON."""
    if value is None:
        return ""
    return value if isinstance(value, str) else to_json(value)


def as_dict(value: object) -> Mapping[str, Any]:
    """``value`` if it is a JSON object, else an empty one (sources omit and null fields freely)."""
    return value if isinstance(value, dict) else {}


def as_list(value: object) -> list[Any]:
    """``value`` if it is a JSON array, else an empty one."""
    return value if isinstance(value, list) else []


def human_size(size: object) -> str:
    """``1.2 MB`` for a byte count; ``""`` when the source gave none."""
    if isinstance(size, bool) or not isinstance(size, int | float | Decimal):
        return ""
    value = float(size)
    for unit in ("B", "KB", "MB", "GB"):
        if value < 1024 or unit == "GB":
            return f"{value:.0f} {unit}" if unit == "B" else f"{value:.1f} {unit}"
        value /= 1024
    return ""


def placeholder(kind: str, *details: object) -> str:
    """A readable stand-in for non-text content: ``[image photo.png, 1024×768]``."""
    shown = ", ".join(str(d) for d in details if d not in (None, ""))
    return f"[{kind} {shown}]" if shown else f"[{kind}]"


def dimensions(width: object, height: object) -> str:
    """``1024×768`` when both sides are known."""
    if isinstance(width, int | Decimal) and isinstance(height, int | Decimal) and width and height:
        return f"{int(width)}×{int(height)}"
    return ""


def stable_id(*pieces: str) -> str:
    """A short id derived from content, for sources without ids (the same input, the same id)."""
    digest = hashlib.blake2b(digest_size=10)
    for piece in pieces:
        digest.update(piece.encode("utf-8", errors="surrogatepass"))
        digest.update(b"\x00")
    return digest.hexdigest()

"""Hiding secrets in text: API keys and tokens that look like secrets, and the ones the caller knows.

Patterns (each replaced by ``[REDACTED]``): bearer tokens, OpenAI (``sk-…``, ``sk-proj-…``)
and Anthropic (``sk-ant-…``) keys, AWS access key ids (``AKIA…``), GitHub tokens
(``ghp_…``, ``gho_…``, ``ghs_…``, ``ghu_…``, ``ghr_…``, ``github_pat_…``) and Slack tokens
(``xoxb-…``, ``xoxp-…`` …). ``secrets`` are exact values to hide wherever they appear (the
configured providers' keys).
"""

from __future__ import annotations

import re
from collections.abc import Iterable

REDACTED = "[REDACTED]"
_PATTERNS = re.compile(
    "|".join(
        (
            r"(?<=[Bb]earer )[A-Za-z0-9._~+/=-]{12,}",
            r"\bsk-(?:ant-|proj-)?[A-Za-z0-9_-]{16,}",
            r"\bAKIA[0-9A-Z]{16}\b",
            r"\bgh[pousr]_[A-Za-z0-9]{30,}\b",
            r"\bgithub_pat_[A-Za-z0-9_]{30,}\b",
            r"\bxox[abposr]-[A-Za-z0-9-]{10,}",
        )
    )
)
_SHORTEST_SECRET = 8
"""Known secrets shorter than this are not looked for (they would match ordinary words)."""


def redact(text: str, secrets: Iterable[str] = ()) -> str:
    """``text`` with every known secret and everything that looks like a key or token replaced."""
    for secret in sorted({s for s in secrets if len(s) >= _SHORTEST_SECRET}, key=len, reverse=True):
        text = text.replace(secret, REDACTED)
    return _PATTERNS.sub(REDACTED, text)

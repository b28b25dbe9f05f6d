"""Keeping API keys and tokens out of what is shown, logged, stored or exported.

Providers echo what they were sent: a 400, 403 or 500 body can hold the key itself, or
the ``Authorization`` header. Every error text is passed through ``redact`` before it is
shown, logged or stored (a failed turn keeps its error in the transcript and the index),
and ``huichat export --redact`` passes every message through it. Shapes replaced: bearer
and basic credentials, OpenAI/DeepSeek/Anthropic/OpenRouter (``sk-…``) and Google
(``AIza…``) keys, AWS access key ids (``AKIA…``), GitHub (``ghp_…``, ``github_pat_…``) and
Slack (``xoxb-…``) tokens, huichat serve's own keys (``hc_…``), ``api_key=…``-style
parameters; ``secrets`` are exact values (the configured providers' keys) hidden wherever
they appear, with truncated echoes.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

REDACTED = "[redacted]"
_MIN_SECRET = 6
"""Shorter configured values are not searched for (they would match ordinary words)."""
_PREFIX = 12
"""A token that starts with this many characters of a secret is a truncated echo of it."""
_SHAPES = (
    re.compile(r"\bsk-[A-Za-z0-9_\-*.]{6,}"),  # OpenAI, DeepSeek, Anthropic (sk-ant-…), OpenRouter
    re.compile(r"\bAIza[0-9A-Za-z_\-]{20,}"),  # Google
    re.compile(r"(?i)\b(bearer|basic)\s+[A-Za-z0-9._~+/=\-]{8,}"),
    re.compile(r"(?i)\b((?:x-)?api[_-]?key|access[_-]?token|secret)([\"']?\s*[:=]\s*[\"']?)[^\s\"',;&}]{6,}"),
    re.compile(r"(?i)([?&](?:api_?)?key=)[^\s&\"']+"),
    re.compile(r"\bAKIA[0-9A-Z]{16}\b"),  # AWS access key ids
    re.compile(r"\bgh[pousr]_[A-Za-z0-9]{30,}\b"),  # GitHub tokens
    re.compile(r"\bgithub_pat_[A-Za-z0-9_]{30,}\b"),
    re.compile(r"\bxox[abposr]-[A-Za-z0-9-]{10,}"),  # Slack tokens
    re.compile(r"\bhc_[0-9a-f]{8}_[A-Za-z0-9_\-]{20,}"),  # huichat serve's own keys
)


def _shape(match: re.Match[str]) -> str:
    groups = [g for g in match.groups() if g is not None]
    if len(groups) == 2:  # name and separator kept: "api_key: [redacted]"
        return f"{groups[0]}{groups[1]}{REDACTED}"
    if len(groups) == 1:
        return f"{groups[0]}{'' if groups[0].endswith('=') else ' '}{REDACTED}"
    return REDACTED


def redact(text: str, secrets: Iterable[str] = ()) -> str:
    """``text`` with every configured secret, and anything shaped like a key or a token, replaced."""
    values = sorted({s.strip() for s in secrets if len(s.strip()) >= _MIN_SECRET}, key=len, reverse=True)
    for value in values:
        text = text.replace(value, REDACTED)
        if len(value) > _PREFIX:
            text = re.sub(re.escape(value[:_PREFIX]) + r"[^\s\"',;]*", REDACTED, text)
    for shape in _SHAPES:
        text = shape.sub(_shape, text)
    return text

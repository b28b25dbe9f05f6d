"""How a count reads in what a person reads (the CLI, the server's lines, the MCP tools' text)."""

from __future__ import annotations


def plural(count: int, noun: str) -> str:
    """``1 turn``, ``2 turns``, ``1,200 turns``, ``2 accesses``: the count with its noun in the right number."""
    return f"{count:,} {noun}{'' if count == 1 else 'es' if noun.endswith(('s', 'sh', 'ch', 'x')) else 's'}"

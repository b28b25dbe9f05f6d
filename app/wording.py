"""How a count reads in what a person reads (the CLI, the server's lines, the MCP tools' text), and
the lines every face says alike."""

from __future__ import annotations

from collections.abc import Callable, Sequence

RECALLERS_SHOWN = 5
"""Later turns named after a forget; the rest are counted."""


def plural(count: int, noun: str) -> str:
    """``1 turn``, ``2 turns``, ``1,200 turns``, ``2 accesses``: the count with its noun in the right number."""
    return f"{count:,} {noun}{'' if count == 1 else 'es' if noun.endswith(('s', 'sh', 'ch', 'x')) else 's'}"


def recalled_later(
    ids: Sequence[str], how: Callable[[Sequence[str]], str], verb: tuple[str, str] = ("forget", "forgetting")
) -> str:
    """After a turn is forgotten (or purged: ``verb``): how many later turns recalled it
    (``MemoryKernel.recalled_by``) and may quote it, the first few by id, and ``how`` the face
    forgets those too; "" when none did.

    Forgetting does not reach them: their replies keep what they quoted until they are forgotten too.
    """
    if not ids:
        return ""
    shown = ids[:RECALLERS_SHOWN]
    rest = len(ids) - len(shown)
    named = ", ".join(shown) + (f" and {rest} more" if rest else "")
    return (
        f"{plural(len(ids), 'later turn')} recalled it and may quote it: {named}. "
        f"To {verb[0]} {'it' if len(ids) == 1 else 'them'} too: {how(shown)}"
        + (f" ({verb[1]} this turn again lists the rest)" if rest else "")
    )

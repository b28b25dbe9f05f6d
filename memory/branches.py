"""The branches of a session: which turn follows which, and which branch is the current one.

A reply asked again (regenerate) or a message edited and sent again starts a new branch
at that point of the conversation; the earlier turns are kept beside it. Transcripts stay
append-only and every turn keeps its id, so the tree is written as two small records:

- a turn that does not follow the turn before it in the file carries ``after`` in its
  ``extra`` — the id of the turn it follows, ``""`` for a new first turn;
- a session marker ``{"branch": "<turn id>"}`` names the current branch's last turn when
  the user switches branches; a turn written after it is the current one again.

A transcript without either (every one written before branches existed) is one branch.
Only the current branch is the session's conversation: the index, search, recall, the
model's context and exports hold its turns; the turns beside it stay in the transcript.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

AFTER = "after"
"""The ``Turn.extra`` key naming the turn a turn follows, when not the one before it in the file."""
BRANCH = "branch"
"""The session-marker key naming the last turn of the branch the user switched to."""


@dataclass(frozen=True)
class BranchTree:
    """The turns of one transcript as a tree: who follows whom, in the order they were written."""

    order: tuple[str, ...]
    """Every turn id, in the file's order."""
    parent: Mapping[str, str | None]
    """The turn each turn follows (None: a first turn)."""
    leaf: str | None
    """The last turn of the current branch (None: no turn)."""

    @classmethod
    def build(cls, order: Sequence[str], after: Mapping[str, str], chosen: str | None) -> BranchTree:
        """The tree of turns written in ``order``; ``after`` holds the recorded ``after`` of the
        turns that have one, ``chosen`` the branch chosen last (when no turn was written after it).

        An ``after`` that names no earlier turn (an edited file) is read as the turn before, so
        the tree never loops.
        """
        parent: dict[str, str | None] = {}
        seen: set[str] = set()
        previous: str | None = None
        for turn_id in order:
            named = after.get(turn_id)
            if named is None or (named and named not in seen):
                parent[turn_id] = previous
            else:
                parent[turn_id] = named or None
            seen.add(turn_id)
            previous = turn_id
        leaf = chosen if chosen in seen else previous
        return cls(tuple(order), parent, leaf)

    def path(self) -> list[str]:
        """The current branch, first turn first."""
        path: list[str] = []
        node = self.leaf
        while node is not None:
            path.append(node)
            node = self.parent.get(node)
        return path[::-1]

    def siblings(self, turn_id: str) -> list[str]:
        """The turns that follow the same turn as ``turn_id`` (itself included), in the order written."""
        parent = self.parent.get(turn_id)
        return [t for t in self.order if t in self.parent and self.parent[t] == parent]

    def leaf_from(self, turn_id: str) -> str:
        """The last turn of the branch through ``turn_id``: from it, the turn written last at each step."""
        node = turn_id
        while children := [t for t in self.order if self.parent.get(t) == node]:
            node = children[-1]
        return node

    @property
    def branched(self) -> bool:
        """Whether any turn has a sibling (there is a branch beside the current one)."""
        parents = list(self.parent.values())
        return len(set(parents)) < len(parents)

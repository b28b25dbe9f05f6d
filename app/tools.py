"""The memory tools offered to the LLM, run: a search or a turn by id, as the model reads it.

Their arguments and schemas are ``app.tool_arguments``; a problem with either becomes the
tool's answer (``ERROR_PREFIX`` and one line), so the model can correct itself.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Any

from huichat.app.tool_arguments import ArgumentError, RecallMemory, read_arguments
from huichat.memory.errors import KernelError
from huichat.memory.kernel import MemoryKernel
from huichat.memory.results import SearchHit, SearchRequest, SearchResults, time_summary
from huichat.memory.turns import Turn

ERROR_PREFIX = "错误 (error): "
"""How a tool's error begins, for the model (and how a copy of one is recognised in an answer)."""


@dataclass(frozen=True)
class ToolContext:
    """What a tool call needs besides its arguments: the time, how much context, what to leave out."""

    now: datetime
    context_window: int = 0
    """Neighbouring turns (±N) shown around each hit."""
    exclude_ids: frozenset[str] = field(default_factory=frozenset)
    """Turns already in the model's context (the conversation so far): never returned as memories."""
    question: str = ""
    """The user's message being answered: searched for when ``recall_by_id`` is given an id that
    does not exist (small models call it with the schema's example id instead of searching)."""
    memory_block: bool = False
    """The prompt holds the ``<memory>`` block, the search of the user's message: an id that does
    not exist gets one line pointing there, not that search again."""


@dataclass(frozen=True)
class ToolOutcome:
    """A tool's answer for the model, what the UI shows, the ids it recalled, and a short trace."""

    content: str
    results: SearchResults | None = None
    recalled_ids: tuple[str, ...] = ()
    error: str = ""
    turn: Turn | None = None
    """recall_by_id's turn."""
    trace: str = ""
    """A line or two for the transcript: the ids found, or the error."""

    @classmethod
    def failure(cls, error: str) -> ToolOutcome:
        """An error the model reads and can correct."""
        return cls(f"{ERROR_PREFIX}{error}", error=error, trace=f"error: {error}")


def search(
    kernel: MemoryKernel, query: str, context: ToolContext, *, top_k: int | None = None, filter_expr: str | None = None
) -> ToolOutcome:
    """Search memory and put the results in the seed's format, as ``recall_memory`` answers
    (auto-recall calls it directly with the user's message). Raises ``KernelError``."""
    return answered(kernel, kernel.search(_request(query, context, top_k, filter_expr)), bool(context.exclude_ids))


def _request(query: str, context: ToolContext, top_k: int | None, filter_expr: str | None) -> SearchRequest:
    """The search a memory tool runs for ``query`` in ``context``."""
    return SearchRequest(
        query, context.now, top_k, filter_expr, context.context_window, exclude_ids=context.exclude_ids
    )


def search_several(
    kernel: MemoryKernel,
    queries: Sequence[str],
    context: ToolContext,
    *,
    top_k: int | None = None,
    filter_expr: str | None = None,
) -> ToolOutcome:
    """``recall_memory`` with ``queries``: each searched in turn (same filter, same ``top_k``), its
    results in a section of their own under the query; a turn an earlier section showed is
    named there by id, not shown again. The panel gets every section's hits, in order.
    Raises ``KernelError``."""
    sections: list[str] = []
    traces: list[str] = []
    hits_shown: set[str] = set()
    shown: set[str] = set()
    merged: list[SearchHit] = []
    found: list[SearchResults] = []
    for number, query in enumerate(queries, start=1):
        results = kernel.search(_request(query, context, top_k, filter_expr))
        found.append(results)
        again = [h.turn.id for h in results.hits if h.turn.id in hits_shown]
        fresh = {h.turn.id for h in results.hits} - hits_shown
        # a turn shown above only as context is shown again as this search's hit; context is shown once
        left = replace(
            results,
            results=tuple(
                r
                for r in results.results
                if (r.turn.id in fresh if r.role == "hit" else r.hit_id in fresh and r.turn.id not in shown | fresh)
            ),
        )
        body = answered(kernel, left, bool(context.exclude_ids)).content if left.results or not again else ""
        if again:
            line = "已在上面的检索结果中 (hits shown above): " + ", ".join(f"[id:{turn_id}]" for turn_id in again)
            body = f"{body}\n{line}" if body else line
        sections.append(f"## 检索 {number}/{len(queries)} (search {number} of {len(queries)}): {query}\n\n{body}")
        offset = len(hits_shown)
        merged = [r for r in merged if r.role == "hit" or r.turn.id not in fresh]
        merged.extend(replace(r, rank=r.rank + offset) for r in left.results)
        hits_shown |= fresh
        shown |= {r.turn.id for r in left.results}
        traces.append(f"{query!r}: {len(results.hits)} hit{'s' if len(results.hits) != 1 else ''}")
    first = found[0]
    results = replace(
        first,
        results=tuple(merged),
        query=" · ".join(queries),
        keywords=" · ".join(r.keywords for r in found),
        below=first.below if not merged else None,
        parts=tuple(found),
    )
    recalled = tuple(h.turn.id for h in merged if h.role == "hit")
    return ToolOutcome("\n\n".join(sections), results, recalled, trace="; ".join(traces))


def answered(kernel: MemoryKernel, results: SearchResults, conversation: bool = False) -> ToolOutcome:
    """A search's results as ``recall_memory`` answers: the seed's format, or one line when nothing
    matched — and, when the conversation so far was left out of the search (``conversation``), a
    line that says so: asked in the session where it was said, a fact is above, not in memory."""
    if not results.results:
        scope = f" in {results.time_range.describe()}" if results.time_range else ""
        content = f"没有找到相关记忆{scope}。(no relevant memory{scope})"
        if conversation:
            content += "\n本次对话中已说过的内容不在检索范围内，见上文。(this conversation is not searched: see above)"
        if results.below is not None:
            near = results.below
            snippet = " ".join(near.turn.text.split())[:80]
            # no id: a model handed one cites it as if it were a memory
            content += (
                f"\n最接近的一条低于阈值，不是命中 (nearest, below the threshold — not a match): "
                f"相似度 {near.similarity or 0.0:.3f} · {snippet}"
            )
        return ToolOutcome(content, results, trace=f"no relevant memory{scope}")
    header = ""
    if results.time_range is not None:
        header = f"时间范围 (time range): {results.time_range.describe()} · {time_summary(results)}"
        if results.outside:
            header += " (marked 🕒 outside the range)"
        if results.rounds:
            header += f" · 分段扫描 {len(results.rounds)} 周 (progressive scan, {len(results.rounds)} weeks)"
        header += "\n\n"
    body = kernel.format_results(results)
    hits = results.hits
    found = ", ".join(f"{h.turn.id} ({h.similarity or 0.0:.3f})" for h in hits)
    trace = f"{len(hits)} hit{'s' if len(hits) != 1 else ''}: {found}"
    return ToolOutcome(header + body, results, tuple(h.turn.id for h in hits), trace=trace)


def _unknown_id(kernel: MemoryKernel, error: str, context: ToolContext) -> ToolOutcome:
    """``recall_by_id`` with an id that does not exist: the error, and what searching the user's
    question finds (a model that reaches for an id it never saw wanted memory; it gets the search
    it should have made, marked as such, instead of a dead end)."""
    if context.memory_block:
        return ToolOutcome.failure(f"{error}; what memory holds for this message is in the <memory> block above")
    failure = ToolOutcome.failure(f"{error} (use an id that a recall_memory result showed)")
    if not context.question.strip():
        return failure
    try:
        searched = search(kernel, context.question, context)
    except KernelError:  # the search failed too: the error alone
        return failure
    content = (
        f"{failure.content}\n\n用户问题的 recall_memory 检索结果 (recall_memory on the user's message instead):\n\n"
        f"{searched.content}"
    )
    return replace(
        searched, content=content, error=failure.error, trace=f"{failure.trace}; searched instead: {searched.trace}"
    )


def run_tool(kernel: MemoryKernel, name: str, arguments: Mapping[str, Any], context: ToolContext) -> ToolOutcome:
    """Read the arguments, then run one memory tool; problems become the tool's answer so the model can correct itself."""
    try:
        call = read_arguments(name, arguments)
    except ArgumentError as exc:
        return ToolOutcome.failure(str(exc))
    try:
        if isinstance(call, RecallMemory) and len(call.searches) > 1:
            return search_several(kernel, call.searches, context, top_k=call.top_k, filter_expr=call.filter_expr)
        if isinstance(call, RecallMemory):
            return search(kernel, call.query, context, top_k=call.top_k, filter_expr=call.filter_expr)
        found = kernel.recall_by_id(call.turn_id)
    except KernelError as exc:
        return ToolOutcome.failure(str(exc))
    if found.turn is None:
        return _unknown_id(kernel, found.error, context)
    first_line = found.turn.text.split("\n", 1)[0][:80]
    return ToolOutcome(
        kernel.format_turn(found.turn),
        recalled_ids=(found.turn.id,),
        turn=found.turn,
        trace=f"{found.turn.id}: {first_line}",
    )

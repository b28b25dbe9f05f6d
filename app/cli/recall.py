"""``huichat recall``: search memory from the shell and print the seed's result format (or JSON)."""

from __future__ import annotations

import argparse
import json
from typing import TYPE_CHECKING

from huichat.app.cli import add_now, add_user, moment
from huichat.app.errors import CommandError

if TYPE_CHECKING:
    from huichat.app.runtime import Runtime

HELP = "search memory from the shell (no TUI)"


def add_parser(parser: argparse.ArgumentParser) -> None:
    """The query and its options."""
    add_user(parser)
    parser.add_argument(
        "query",
        help="what to look for; time words such as 上周三下午 or 'last week' are understood",
    )
    parser.add_argument("--top-k", type=int, default=None, metavar="N", help="number of hits (default from config)")
    parser.add_argument("--filter", dest="filter_expr", metavar="EXPR", help="e.g. \"timestamp >= '2026-04-06'\"")
    parser.add_argument("--context", type=int, default=0, metavar="N", help="add ±N neighbouring turns")
    parser.add_argument("--json", action="store_true", help="print JSON instead of the seed's text format")
    add_now(parser, "resolve time words against this moment")
    parser.add_argument(
        "--include-failed", action="store_true", help="also find failed turns (replies that never came)"
    )


def run(args: argparse.Namespace, runtime: Runtime) -> int:
    """Search memory and print the seed's format (or JSON)."""
    from huichat.memory.config import MAX_CONTEXT_WINDOW, MAX_TOP_K
    from huichat.memory.filters import FilterError
    from huichat.memory.results import SearchHit, SearchRequest, SearchResults, time_summary
    from huichat.memory.turns import asked_turn_id

    if args.top_k is not None and not 1 <= args.top_k <= MAX_TOP_K:
        raise CommandError(f"--top-k must be between 1 and {MAX_TOP_K} (got {args.top_k})")
    if not 0 <= args.context <= MAX_CONTEXT_WINDOW:
        raise CommandError(f"--context must be between 0 and {MAX_CONTEXT_WINDOW} (got {args.context})")
    if not args.query.strip() and not args.filter_expr:
        # the kernel would list recent turns, each marked 相似度 1.000: no search at all
        raise CommandError("the query is empty: give the words to search for (or a time filter with --filter)")
    now = moment(args.now, runtime)
    kernel = runtime.open_kernel()
    try:
        # an id (as results print it) is that turn, as in the search screen; a bare one no turn has is a word
        asked = asked_turn_id(args.query)
        found = kernel.recall_by_id(asked[0]) if asked is not None else None
        if found is not None and found.turn is not None:
            results = SearchResults((SearchHit(found.turn, 1.0),), args.query, "")
        elif found is not None and asked is not None and asked[1]:
            raise CommandError(found.error)
        else:
            request = SearchRequest(
                args.query, now, args.top_k, args.filter_expr, args.context, include_failed=args.include_failed
            )
            results = kernel.search(request)
    except FilterError as exc:
        raise CommandError(f"--filter: {exc}") from None
    finally:
        kernel.close()
    if args.json:
        payload = results.to_record(runtime.zone.tz)
        print(json.dumps(payload, ensure_ascii=False, indent=2))
        return 0
    if results.time_range is not None:
        scan = f" (progressive scan: {len(results.rounds)} weeks)" if results.rounds else ""
        summary = time_summary(results)
        print(f"# time: {results.time_range.phrase} → {results.time_range.describe()}{scan} · {summary}\n")
    if not results.results:
        near = results.below
        below = f" (nearest: {near.turn.id} at {near.similarity or 0.0:.3f}, below the threshold)" if near else ""
        print(f"no relevant memory{below}")
        return 0
    print(kernel.format_results(results))
    return 0

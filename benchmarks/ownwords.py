"""``huichat bench words``: are turns imported without vectors found by their own words at once?

``huichat import --no-embed`` writes turns to the full-text index only; their vectors come
later. Until then search must still find a message by the words in it, above the threshold
(README: "found by their words at once"). Each conversation of a benchmark folder
(``shared/bench/FORMAT.md``) is ingested without vectors; for a fixed sample of its messages
the query is the message's two most distinctive content words (the fewest other messages of
the conversation hold them). Reported: the share of those searches whose message is a hit in
the top 1 / top 10 (ties count: several messages may hold the same rare words), and the
share with no hit at all.
"""

from __future__ import annotations

import argparse
import random
from collections import Counter, defaultdict
from datetime import timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rich.console import Console
from rich.table import Table

from benchmarks.common import bench_embedder, machine, scratch_kernel, write_json
from benchmarks.recall import moment, read_jsonl
from benchmarks.vectorcache import cached
from huichat.app.config import LoadedConfig
from huichat.memory.results import SearchRequest
from huichat.memory.turns import Message, TurnDraft
from huichat.memory.words import content_terms

if TYPE_CHECKING:
    from huichat.app.runtime import Zone

_WORDS = 2


def distinctive_words(text: str, frequency: Counter[str], count: int = _WORDS) -> list[str]:
    """The ``count`` content terms of ``text`` that the fewest messages hold (longer first on ties)."""
    terms = sorted(content_terms(text), key=lambda t: (frequency[t], -len(t), t))
    return [t for t in terms if len(t) > 1 or not t.isascii()][:count]


def _word_in(text: str, term: str) -> str:
    """The word of ``text`` a content term came from (suffixes were cut), as a user would type it."""
    for word in text.split():
        cleaned = word.strip(".,!?;:'\"()[]").lower()
        if cleaned.startswith(term):
            return cleaned
    return term


def run_words_bench(args: argparse.Namespace, loaded: LoadedConfig, zone: Zone) -> int:
    """Ingest without vectors, search each sampled message's own words, print and write the figures."""
    console = Console()
    data: Path = args.data
    rows = read_jsonl(data / "conversations.jsonl")
    by_conversation: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for row in rows:
        by_conversation[row["conversation_id"]].append(row)
    conversation_ids = sorted(by_conversation)[: args.limit] if args.limit else sorted(by_conversation)
    embedder = cached(bench_embedder(loaded, args.embedder), getattr(args, "vectors", None))
    rng = random.Random(args.seed)
    found_first = found_ten = empty = asked = 0
    misses: list[dict[str, Any]] = []
    for conversation_id in conversation_ids:
        conversation = sorted(by_conversation[conversation_id], key=lambda r: (r["session_datetime"], r["turn_index"]))
        frequency: Counter[str] = Counter(t for r in conversation for t in content_terms(r["text"]))
        with scratch_kernel(loaded, embedder, zone.tz) as kernel:
            # without vectors the similarity is the words' own (no cosine to calibrate): the configured
            # threshold holds whatever embedder answers the queries, the hash one included
            threshold = loaded.config.retriever.min_similarity
            kernel.retriever.config = kernel.retriever.config.model_copy(update={"min_similarity": threshold})
            ids: dict[str, str] = {}
            sessions: dict[str, list[dict[str, Any]]] = defaultdict(list)
            for row in conversation:
                sessions[row["session_id"]].append(row)
            for session_rows in sessions.values():
                started = moment(session_rows[0]["session_datetime"], zone.tz)
                handle = kernel.new_session(started)
                drafts = [
                    TurnDraft((Message("user", r["text"], r["speaker"]),), started + timedelta(seconds=i))
                    for i, r in enumerate(session_rows)
                ]
                for turn, row in zip(kernel.append_turns(handle, drafts, embed=False), session_rows, strict=True):
                    ids[row["turn_id"]] = turn.id
            kernel.maintain(force=True)
            latest = max(moment(r["session_datetime"], zone.tz) for r in conversation)
            sample = rng.sample(conversation, min(args.per_conversation, len(conversation)))
            for row in sample:
                terms = distinctive_words(row["text"], frequency)
                if not terms:
                    continue
                query = " ".join(_word_in(row["text"], t) for t in terms)
                results = kernel.search(SearchRequest(query, latest, 10, record_access=False, resolve_time=False))
                hits = [h.turn.id for h in results.hits]
                asked += 1
                found_first += bool(hits) and hits[0] == ids[row["turn_id"]]
                found_ten += ids[row["turn_id"]] in hits
                empty += not hits
                if ids[row["turn_id"]] not in hits and len(misses) < 20:
                    misses.append({"query": query, "text": row["text"][:160], "hits": len(hits)})
        console.log(f"{conversation_id}: {len(sample)} messages searched")
    n = max(asked, 1)
    report = {
        "data": str(data),
        "embedder": embedder.name,
        "searches": asked,
        "top1": round(found_first / n, 4),
        "recall@10": round(found_ten / n, 4),
        "no_hit": round(empty / n, 4),
        "threshold": loaded.config.retriever.min_similarity,
        "misses": misses,
        "machine": machine(),
    }
    table = Table(title=f"own words without vectors · {data} · {asked} searches")
    for column in ("top 1", "recall@10", "no hit at all"):
        table.add_column(column, justify="right")
    table.add_row(f"{report['top1']:.3f}", f"{report['recall@10']:.3f}", f"{report['no_hit']:.3f}")
    console.print(table)
    write_json(args.json, report)
    return 0

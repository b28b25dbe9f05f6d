"""Configuration sections of the memory kernel (``embedding``, ``storage``, ``archive``, ``retriever``)."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

MAX_TOP_K = 100
"""The most hits one search returns (the CLI and the API; the model's tool allows 20)."""


class _Section(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid", use_attribute_docstrings=True)


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
    context_window: int = Field(default=1, ge=0, le=10)
    """Neighbouring turns (±N) added around each hit for the LLM."""
    min_similarity: float = Field(default=0.0, ge=0.0, le=1.0)
    """Hits below this fused similarity are dropped."""
    timezone: str = ""
    """IANA zone used to read and show times; empty means the system's local zone."""
    week_start: Literal["monday", "sunday"] = "monday"
    """First day of a week for phrases like 'last week' / 上周."""
    ann_min_rows: int = Field(default=50_000, ge=1000)
    """Row count from which an ANN vector index is built (below it a flat scan is exact and fast)."""
    search_timeout_seconds: float = Field(default=5.0, gt=0, le=600)
    """A search that takes longer is given up with an error (the model is told and may retry)."""

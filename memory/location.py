"""Where one memory lives (a value type: importing it opens nothing)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path


@dataclass(frozen=True)
class MemoryLocation:
    """Where one memory lives: its data folder, its transcripts, and its index."""

    data_dir: Path
    sessions_dir: Path
    db_uri: str
    options: Mapping[str, str] = field(default_factory=dict)
    """How to reach an index on object storage (``storage.options``: LanceDB's storage_options)."""
    transcripts_uri: str = ""
    """Where the transcripts are kept for every replica (``storage.uri``; ``sessions_dir`` then holds
    this machine's working copy of them), or '' when ``sessions_dir`` is all there is."""

    @classmethod
    def under(cls, root: Path) -> MemoryLocation:
        """Everything in one folder (tests, benchmarks, per-user stores)."""
        return cls(root, root / "sessions", str(root / "index.lancedb"))

    @property
    def catalogue_path(self) -> Path:
        """The summary of the transcripts (``memory.catalogue``), beside the index."""
        return self.data_dir / "catalogue.json"

    @property
    def shared_root(self) -> str:
        """This memory's folder in the shared store (its transcripts' parent), or '' on one machine."""
        return self.transcripts_uri.rpartition("/")[0] if self.transcripts_uri else ""

    @property
    def remote(self) -> bool:
        """True when the index is on object storage (another machine may write it)."""
        return "://" in self.db_uri

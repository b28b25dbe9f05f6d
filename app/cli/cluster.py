"""``--ray ADDRESS``: the vectors of ``import`` and ``reindex`` computed on a Ray cluster.

The option is shared by both commands. Ray is imported only once a command has vectors to
compute and was given the option: the single-machine default never loads it (nor needs it
installed), and a run without waiting vectors starts no cluster.
"""

from __future__ import annotations

import argparse
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING

from huichat.app.errors import CommandError

if TYPE_CHECKING:
    from rich.console import Console

    from huichat.app.runtime import Runtime
    from huichat.memory.embedding import Embedder
    from huichat.memory.kernel import MemoryKernel


def add_option(parser: argparse.ArgumentParser) -> None:
    """The ``--ray`` option of a command that computes vectors."""
    parser.add_argument(
        "--ray",
        metavar="ADDRESS",
        default=None,
        help="compute the vectors on a Ray cluster (ADDRESS as ray.init takes it: auto, ray://host:10001; "
        "'local' starts one here); needs huichat[cluster]",
    )


@dataclass(frozen=True)
class Cluster:
    """Where the vectors are computed, and with which model (the workers load the configured one)."""

    address: str
    runtime: Runtime

    @classmethod
    def from_args(cls, args: argparse.Namespace, runtime: Runtime) -> Cluster | None:
        """The cluster ``--ray`` names, or None; an error now (before any work) when Ray cannot be imported."""
        if args.ray is None:
            return None
        from huichat.memory.errors import KernelError
        from huichat.memory.ray_embedding import require_ray

        try:
            require_ray()
        except KernelError as exc:
            raise CommandError(str(exc)) from None
        return cls(args.ray, runtime)

    @contextmanager
    def embedder(self, kernel: MemoryKernel, console: Console) -> Iterator[Embedder]:
        """The cluster's workers as an embedder for ``kernel``'s index, ended on leaving."""
        from huichat.memory.errors import KernelError
        from huichat.memory.ray_embedding import RayEmbedder

        loaded = self.runtime.loaded
        with console.status(f"starting the Ray workers ({self.address})…"):
            try:
                workers = RayEmbedder(self.address, loaded.config.embedding, loaded.paths.models_dir, kernel.embedder)
            except KernelError as exc:
                raise CommandError(
                    f"{exc}\nhuichat: the turns are searchable by their words; nothing else was lost"
                ) from None
        console.print(f"embedding on Ray ({self.address}): {workers.workers} workers")
        try:
            yield workers
        finally:
            workers.close()

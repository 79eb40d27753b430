"""Embedding on every core: a pool of worker processes for large reindexes.

The default embedder runs numpy on one BLAS thread and a pure-Python tokenizer, so one process
keeps one core busy. When many chunks wait for vectors (a first `pinky reindex`, a model change),
`embed_pending` hands their texts to worker processes, each with its own embedder (loaded from
`pinky.embed.model_cache` in ~0.1 s), while this process keeps writing to the index.

Workers are started with `spawn` (never `fork`: the parent may hold SQLite connections and
threads), their stdout is pointed at stderr (the MCP server's stdout is its protocol), and a
worker produces exactly the vectors this process would.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from collections.abc import Iterator

    import numpy as np

    from pinky.config import Config

MIN_PENDING = 256  # below this, starting the workers (~0.5 s) costs more than it saves
MAX_AUTO_WORKERS = 4

_worker_embedder: Any = None
_worker_runtime: str | None = None


def auto_workers() -> int:
    """One worker per core (at most MAX_AUTO_WORKERS); 0 on a single core."""
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    return min(cores, MAX_AUTO_WORKERS) if cores > 1 else 0


def _init_worker(config: Config) -> None:
    global _worker_embedder, _worker_runtime
    os.dup2(2, 1)  # anything a library prints goes to stderr, never into the parent's protocol stream
    from pinky.embed.embedding import get_embedder

    _worker_embedder = get_embedder(config)
    _worker_runtime = bulk_runtime(_worker_embedder)


def bulk_runtime(embedder: object) -> str | None:
    """Put an embedder on its bulk runtime when it has one (the default model does: `pinky.embed.use_runtime`)."""
    switch = getattr(embedder, "bulk_runtime", None)
    return switch() if switch else None


def _runtime() -> str | None:
    return _worker_runtime


def _embed(texts: list[str]) -> bytes:
    import numpy as np

    return np.asarray(_worker_embedder.embed(texts), dtype=np.float32).tobytes()


class EmbedPool:
    """`embed_batches(batches)` on `workers` processes; a context manager that shuts them down."""

    def __init__(self, config: Config, workers: int) -> None:
        import multiprocessing
        from concurrent.futures import ProcessPoolExecutor

        self.dims = 0
        self._pool = ProcessPoolExecutor(max_workers=workers, mp_context=multiprocessing.get_context("spawn"),
                                         initializer=_init_worker, initargs=(config,))

    def embed_batches(self, batches: list[list[str]], dims: int) -> list[np.ndarray]:
        """One float32 matrix per batch, in order."""
        return list(self.iter_batches(batches, dims))

    def iter_batches(self, batches: list[list[str]], dims: int) -> Iterator[np.ndarray]:
        """One float32 matrix per batch, in order, each as soon as it and those before it are done."""
        import numpy as np

        for batch, raw in zip(batches, self._pool.map(_embed, batches), strict=True):
            yield np.frombuffer(raw, dtype=np.float32).reshape(len(batch), dims)

    def runtime(self) -> str | None:
        """What a worker embeds on (`pinky.embed.use_runtime`); None for an embedder without a bulk runtime."""
        return self._pool.submit(_runtime).result()

    def __enter__(self) -> EmbedPool:
        return self

    def __exit__(self, *exc: object) -> None:
        self._pool.shutdown(wait=True, cancel_futures=True)

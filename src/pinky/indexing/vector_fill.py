"""Filling the vectors: every chunk without one gets one, reusing a vector made before for the same
text when there is one, on worker processes when many are waiting (`pinky.embed.embed_pool`).

Runs after the text is indexed and outside write transactions: full-text search works meanwhile,
and each batch of vectors is committed as it comes.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

from pinky.embed.embed_pool import MIN_PENDING, EmbedPool, auto_workers, bulk_runtime
from pinky.store import vectors as store_vectors
from pinky.store.connect import write_transaction

if TYPE_CHECKING:
    from pinky.indexing.index import Index

log = logging.getLogger(__name__)

Progress = Callable[[str, int, int], None]  # (phase, done, total)

EMBED_BATCH = 64
# Texts per model call, and so per progress step: 16 chunks of ~150 words take 0.2-0.9 s with the
# default embedder on one core (0.9 s on a 2-core machine at load 6), so the bar moves at least every
# second; bigger batches are no faster (64: 4.2 s a batch, 15 chunks/s; 16: 17 chunks/s, same machine).
EMBED_BATCH = 16
PENDING_BATCH = 2048  # chunks per commit: fewer commits rewrite the vector table's shared pages less often


def embed_pending(index: Index, progress: Progress | None = None) -> int:
    """Give every chunk lacking a vector one, from the cache when its text was seen before; on all
    cores when many are pending (`pinky.embed.embed_pool`).

    Returns how many chunks the model actually embedded (cache hits are free)."""
    if not index.prepare_vectors():
        return 0
    total = store_vectors.count_pending(index.conn)
    workers = _workers_for(index, total)
    if workers < 2:
        if total >= MIN_PENDING:
            bulk_runtime(index.embedder)
        return _embed_pending(index, total, progress, None)

    try:
        with EmbedPool(index.config, workers) as pool:
            return _embed_pending(index, total, progress, pool)
    except (OSError, RuntimeError) as exc:  # BrokenProcessPool is a RuntimeError: a worker died or never started
        # What the workers finished is committed; this process embeds the rest (and, if the model itself
        # is the problem, raises the same error where it can be reported plainly).
        log.warning("embedding workers failed (%s); embedding in this process", exc)
        return _embed_pending(index, store_vectors.count_pending(index.conn), progress, None)


def _workers_for(index: Index, pending: int) -> int:
    if index.config.embedder == "hash" or pending < MIN_PENDING:
        return 0  # hashing is cheaper than starting a process
    chosen = index.config.embed_workers
    return auto_workers() if chosen is None else chosen


def _embed_pending(index: Index, total: int, progress: Progress | None, pool: Any) -> int:
    conn = index.conn
    fingerprint = index.fingerprint()
    embedded = done = 0
    if progress and total:
        progress("embed", 0, total)  # the bar is there while the model loads
    while rows := store_vectors.pending_chunks(conn, PENDING_BATCH):
        cached = store_vectors.cached_vectors(conn, (r[1] for r in rows), fingerprint)
        step = _stepper(progress, done, len(rows), total)
        new = _embed_missing(index, rows, cached, pool, step)
        embedded += len(new)
        with write_transaction(conn):
            stored = store_vectors.store_vectors(conn, [(r[0], new.get(r[1]) or cached[r[1]]) for r in rows])
        done += len(rows)
        if progress:
            progress("embed", min(done, total), max(total, done))
        if stored == 0:
            break  # another process is filling the same chunks; it will finish them
    if embedded or done:
        with write_transaction(conn):
            store_vectors.trim_stash(conn)
    return embedded


def _stepper(progress: Progress | None, done: int, rows: int, total: int) -> Callable[[int, int], None] | None:
    """`step(made, wanted)` while a batch of `rows` chunks is embedded: the bar moves in proportion."""
    if progress is None:
        return None

    def step(made: int, wanted: int) -> None:
        at = done + rows * made // max(wanted, 1)
        progress("embed", min(at, total), max(total, at))

    return step


def _embed_missing(index: Index, rows: list[tuple[int, str, str, str, str]],
                   cached: dict[str, bytes], pool: Any = None,
                   step: Callable[[int, int], None] | None = None) -> dict[str, bytes]:
    """Vectors (float32 bytes) for the chunk texts the cache lacks, keyed by chunk hash; `step(made,
    wanted)` after each model call (EMBED_BATCH texts)."""
    import numpy as np

    from pinky.text.model_input import embed_input

    missing: dict[str, str] = {}
    for _cid, chash, title, heading, text in rows:
        if chash not in cached and chash not in missing:
            missing[chash] = embed_input(title, heading, text)
    keys = list(missing)
    parts = [keys[i : i + EMBED_BATCH] for i in range(0, len(keys), EMBED_BATCH)]
    texts = [[missing[k] for k in part] for part in parts]
    if pool is not None:
        matrices: Iterator[Any] = pool.iter_batches(texts, index.embedder.dims)
    else:
        matrices = (np.asarray(index.embedder.embed(batch), dtype=np.float32) for batch in texts)
    vectors: dict[str, bytes] = {}
    for part, matrix in zip(parts, matrices, strict=True):
        vectors.update((key, vector.tobytes()) for key, vector in zip(part, matrix, strict=True))
        if step:
            step(len(vectors), len(keys))
    return vectors

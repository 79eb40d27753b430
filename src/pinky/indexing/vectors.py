"""An in-memory copy of the vectors for long-running processes (the MCP server, benchmarks).

sqlite-vec scans every vector on disk for each query; a process that answers many searches keeps
them in one numpy matrix instead and scores them with a single matrix product. The copy is reloaded
whenever the index's vector generation counter moves (any process that changes vectors bumps it),
so it never serves stale vectors.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from pinky.store import retrieval
from pinky.store import vectors as store_vectors
from pinky.store.connect import read_snapshot

WHOLE_BELOW = 10  # filter every chunk when the head of rows is more than a tenth of them (10k: 21 -> 17 ms)


class VectorCache:
    """`generation(conn)` and `load(conn)` say which vectors: the default embedder's (vec0) by default, or
    the second stage's (`pinky.store.quality`)."""

    def __init__(self, generation: Callable[[Any], str] = store_vectors.vector_generation,
                 load: Callable[[Any], list[tuple[int, bytes]]] = store_vectors.all_vectors,
                 unpack: Callable[[list[bytes]], np.ndarray] | None = None) -> None:
        """`unpack(blobs)`: the stored vectors as unit-length float32 rows (None: they are stored so)."""
        self._generation_of, self._load, self._unpack = generation, load, unpack
        self.generation: str | None = None
        self.ids = np.zeros(0, dtype=np.int64)
        self.matrix = np.zeros((0, 0), dtype=np.float32)

    def _refresh(self, conn: Any) -> None:
        generation = self._generation_of(conn)
        if generation == self.generation:
            return
        with read_snapshot(conn):  # the counter and the vectors agree
            generation = self._generation_of(conn)
            rows = self._load(conn)
        self.ids = np.fromiter((r[0] for r in rows), dtype=np.int64, count=len(rows))
        if not rows:
            self.matrix = np.zeros((0, 0), dtype=np.float32)
        elif self._unpack is not None:
            self.matrix = self._unpack([r[1] for r in rows])
        else:
            self.matrix = np.frombuffer(b"".join(r[1] for r in rows), dtype=np.float32).reshape(len(rows), -1)
        self.generation = generation

    def _filtered(self, conn: Any, scores: np.ndarray, filters: retrieval.Filters, wanted: int) -> np.ndarray:
        """`scores` with the chunks that fail `filters` at -inf, exactly where it matters: first among the
        best `wanted * OVERFETCH` (one small query), and over every chunk only when too few of those pass."""
        head = min(wanted * retrieval.OVERFETCH, len(scores))
        if head * WHOLE_BELOW <= len(scores):  # else a small brain: filtering every chunk costs no more
            top = np.argpartition(-scores, head - 1)[:head]
            passing = retrieval.chunk_ids_matching(conn, filters, among=[int(i) for i in self.ids[top]])
            if len(passing) >= wanted:
                top = top[np.isin(self.ids[top], np.asarray(passing, dtype=np.int64))]
                narrowed = np.full_like(scores, -np.inf)
                narrowed[top] = scores[top]
                return narrowed
        allowed = np.isin(self.ids, np.asarray(retrieval.chunk_ids_matching(conn, filters), dtype=np.int64))
        return np.where(allowed, scores, -np.inf)

    def hits(self, conn: Any, query: np.ndarray, filters: retrieval.Filters, depth: int) -> list[tuple[str, float,
                                                                                                       int]]:
        """Same contract as store.retrieval.vector_hits: (entry id, cosine similarity, chunk id), best first."""
        self._refresh(conn)
        if not len(self.ids):
            return []
        scores = self.matrix @ query.astype(np.float32)  # vectors are L2-normalised: dot = cosine
        if filters.active:
            scores = self._filtered(conn, scores, filters, depth * 2)
        k = min(depth * 2, len(scores))
        top = np.argpartition(-scores, k - 1)[:k]
        top = top[np.argsort(-scores[top], kind="stable")]
        top = top[np.isfinite(scores[top])]
        chunk_ids = [int(i) for i in self.ids[top]]
        owners = retrieval.chunk_entries(conn, chunk_ids)
        best: dict[str, tuple[str, float, int]] = {}
        for chunk_id, score in zip(chunk_ids, scores[top].tolist(), strict=True):
            entry = owners.get(chunk_id)
            if entry is not None and entry not in best:
                best[entry] = (entry, float(score), chunk_id)
        return list(best.values())[:depth]

"""Exact or approximate vector search? Recall@10 against exact search and latency (a script, not a test).

    python benchmarks/bench_ann.py --keep DIR [--queries 200] [--candidates 50,100,200,400]

Reads the vectors of the brain that bench_core.py / bench_mcp.py built in DIR (the embedder it was
built with: USE at 10,000 notes, hash vectors at 100,000) and compares, per query, the chunks each
method returns with the exact top 10 (cosine over float32):
- exact, in memory (numpy matrix product: what `pinky-mcp` does);
- exact, sqlite-vec's vec0 KNN scan on disk (what a one-shot `pinky search` does);
- binary quantisation in memory: one sign bit per dimension, Hamming distance (popcount) to keep
  the best C candidates, then exact cosine over those C (a 32x smaller scan, then a tiny rescoring);
- int8 scalar quantisation in memory (per-dimension scale), candidates rescored exactly.
Queries are embedded from generated texts with the brain's own embedder.
"""

from __future__ import annotations

import argparse
import importlib
import os
import random
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))
importlib.import_module("pinky")  # before numpy: it keeps BLAS on one thread, as in the product
import numpy as np  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_core import percentile, vocabulary  # noqa: E402


def load(base: Path) -> tuple[object, np.ndarray, np.ndarray, str]:
    os.environ["PINKY_HOME"] = str(base / "home")
    from pinky.config import load_config
    from pinky.kb import KnowledgeBase
    from pinky.store import vectors as store_vectors
    project = base / "project"
    probe = load_config(db=project / "brain.db", save_dir=project / "documentation")
    import sqlite3

    with sqlite3.connect(f"file:{probe.db_path}?mode=ro", uri=True) as conn:
        embedder = conn.execute("SELECT value FROM meta WHERE key = 'embedder'").fetchone()[0]
    if embedder.startswith("hash"):
        os.environ["PINKY_HASH_EMBED"] = "1"
    else:
        os.environ.pop("PINKY_HASH_EMBED", None)
    kb = KnowledgeBase(load_config(db=project / "brain.db", save_dir=project / "documentation"))
    rows = store_vectors.all_vectors(kb.index.conn)
    ids = np.fromiter((r[0] for r in rows), dtype=np.int64, count=len(rows))
    matrix = np.frombuffer(b"".join(r[1] for r in rows), dtype=np.float32).reshape(len(rows), -1)
    return kb, ids, matrix, embedder


def timed(method: Callable[[np.ndarray], np.ndarray], queries: np.ndarray) -> tuple[list[np.ndarray], list[float]]:
    method(queries[0])
    results, timings = [], []
    for query in queries:
        started = time.perf_counter()
        results.append(method(query))
        timings.append((time.perf_counter() - started) * 1000)
    return results, timings


def top(scores: np.ndarray, k: int) -> np.ndarray:
    part = np.argpartition(-scores, k - 1)[:k]
    return part[np.argsort(-scores[part], kind="stable")]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--keep", type=Path, required=True, help="a brain built by bench_core.py or bench_mcp.py")
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--candidates", default="50,100,200,400")
    args = parser.parse_args()
    kb, ids, matrix, embedder = load(args.keep)
    rng = random.Random(5)
    words, weights = vocabulary()
    texts = [" ".join(rng.choices(words, weights, k=rng.randint(2, 8))) for _ in range(args.queries)]
    queries = np.asarray(kb.embedder.embed(texts), dtype=np.float32)  # type: ignore[attr-defined]
    print(f"{len(ids):,} vectors of {matrix.shape[1]} dimensions ({embedder}), {len(queries)} queries, "
          f"{matrix.nbytes / 1e6:,.0f} MB as float32")

    exact, exact_ms = timed(lambda q: top(matrix @ q, 10), queries)
    truth = [set(r.tolist()) for r in exact]

    def report(name: str, results: list[np.ndarray], timings: list[float], memory_mb: float) -> None:
        recall = statistics.mean(len(truth[i] & set(r[:10].tolist())) / 10 for i, r in enumerate(results))
        print(f"{name:44s} recall@10 {recall:5.3f}   p50 {statistics.median(timings):7.2f} ms   "
              f"p95 {percentile(timings, 0.95):7.2f} ms   {memory_mb:7.1f} MB")

    report("exact, numpy in memory (pinky-mcp)", exact, exact_ms, matrix.nbytes / 1e6)
    position = {int(chunk_id): i for i, chunk_id in enumerate(ids)}
    conn = kb.index.conn  # type: ignore[attr-defined]

    def vec0(query: np.ndarray) -> np.ndarray:
        rows = conn.execute("SELECT chunk_id FROM chunk_vec WHERE embedding MATCH ? AND k = 10",
                            (query.tobytes(),)).fetchall()
        return np.array([position[r[0]] for r in rows])

    report("exact, sqlite-vec vec0 scan (one-shot CLI)", *timed(vec0, queries[:50]), 0.0)

    bits = np.packbits(matrix > 0, axis=1)
    scale = np.abs(matrix).max(axis=0) / 127
    int8 = np.round(matrix / scale).astype(np.int8)
    for candidates in (int(c) for c in args.candidates.split(",")):
        def binary(query: np.ndarray, c: int = candidates) -> np.ndarray:
            distance = np.bitwise_count(np.bitwise_xor(bits, np.packbits(query > 0))).sum(axis=1, dtype=np.int32)
            pool = np.argpartition(distance, c - 1)[:c]
            return pool[top(matrix[pool] @ query, 10)]

        def scalar(query: np.ndarray, c: int = candidates) -> np.ndarray:
            pool = top(int8 @ (query / scale).astype(np.float32), c)
            return pool[top(matrix[pool] @ query, 10)]

        report(f"binary + exact rescoring of {candidates}", *timed(binary, queries), bits.nbytes / 1e6)
        report(f"int8 + exact rescoring of {candidates}", *timed(scalar, queries), int8.nbytes / 1e6)
    kb.close()  # type: ignore[attr-defined]


if __name__ == "__main__":
    main()

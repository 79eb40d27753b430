"""Core speed and memory figures (a script, not a test): prints them, asserts nothing.

    python benchmarks/bench_core.py [--notes 10000] [--embedder use|hash] [--queries 200]

Generates N notes of ~150 words in a temporary brain, then measures a full reindex, a no-op
reindex, warm search latency (query embedding included) and peak RSS.
"""

from __future__ import annotations

import argparse
import os
import random
import resource
import statistics
import sys
import tempfile
import time
from pathlib import Path

WORDS = (
    "pool connection timeout shutdown postgres cache memory leak retry backoff deploy release version "
    "docker container kubernetes ingress service worker queue task scheduler cron token auth session "
    "cookie header request response latency throughput index query search vector embedding chunk "
    "markdown note gotcha pattern decision guide diary bug fix test build pipeline lint format type "
    "error exception trace log metric alert dashboard config environment variable secret key file "
    "path directory module package import function class method argument return value list dict "
    "string number date time zone locale encoding unicode byte stream socket thread process lock"
).split()


def vocabulary(size: int = 20_000, seed: int = 3) -> tuple[list[str], list[float]]:
    """Common technical words plus synthetic rare ones, with Zipf-like frequencies as in real text."""
    rng = random.Random(seed)
    letters = "abcdefghijklmnopqrstuvwxyz"
    rare = ["".join(rng.choices(letters, k=rng.randint(4, 10))) for _ in range(size)]
    words = WORDS + rare
    weights = [1.0 / (rank + 1) for rank in range(len(words))]
    return words, weights


def make_notes(root: Path, count: int, seed: int = 7) -> None:
    rng = random.Random(seed)
    words, weights = vocabulary()
    kinds = ["gotcha", "pattern", "decision", "guide", "note", "bug"]
    for i in range(count):
        kind = kinds[i % len(kinds)]
        title = " ".join(rng.choices(words, weights, k=5)).capitalize()
        paragraphs = [" ".join(rng.choices(words, weights, k=50)).capitalize() + "." for _ in range(3)]
        folder = root / kind
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"note-{i:05d}.md").write_text(
            f"---\ntitle: {title}\ntype: {kind}\ntags: [{rng.choice(WORDS)}, {rng.choice(WORDS)}]\n---\n"
            f"# {title}\n\n" + "\n\n".join(paragraphs) + "\n",
            encoding="utf-8",
        )


def peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def time_searches(kb, queries: list[str], label: str, **filters: str) -> None:  # type: ignore[no-untyped-def]
    kb.search(queries[0], **filters)  # warm: model loaded, pages cached, vectors in memory
    timings = []
    for query in queries:
        started = time.perf_counter()
        kb.search(query, limit=10, **filters)
        timings.append((time.perf_counter() - started) * 1000)
    print(f"warm search:    p50 {statistics.median(timings):6.2f} ms   p95 {percentile(timings, 0.95):6.2f} ms"
          f"   ({len(timings)} queries, hybrid, limit 10, query embedding included; {label})")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--notes", type=int, default=10_000)
    parser.add_argument("--embedder", choices=["use", "hash"], default="use")
    parser.add_argument("--queries", type=int, default=200)
    args = parser.parse_args()

    with tempfile.TemporaryDirectory(prefix="pinky-bench-") as tmp:
        base = Path(tmp)
        os.environ["PINKY_HOME"] = str(base / "home")
        os.environ.pop("PINKY_HASH_EMBED", None)
        if args.embedder == "hash":
            os.environ["PINKY_HASH_EMBED"] = "1"
        sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))
        from pinky.config import load_config
        from pinky.kb import KnowledgeBase

        make_notes(base / "project/documentation", args.notes)
        config = load_config(db=base / "project/brain.db", save_dir=base / "project/documentation")
        print(f"notes: {args.notes:,}  embedder: {args.embedder}  python: {sys.version.split()[0]}")

        with KnowledgeBase(config) as kb:
            started = time.perf_counter()
            report = kb.reindex()
            full = time.perf_counter() - started
            print(f"full reindex:   {full:8.2f} s  ({args.notes / full:,.0f} notes/s, "
                  f"{report.chunks_embedded:,} chunks embedded)")
            started = time.perf_counter()
            noop = kb.reindex()
            print(f"no-op reindex:  {time.perf_counter() - started:8.3f} s  (embedded {noop.chunks_embedded})")

            rng = random.Random(11)
            words, weights = vocabulary()
            queries = [" ".join(rng.choices(words, weights, k=rng.randint(2, 6))) for _ in range(args.queries)]
            time_searches(kb, queries, "sqlite-vec scan, as a one-shot CLI")
        with KnowledgeBase(config, cache_vectors=True) as kb:
            time_searches(kb, queries, "in-memory vectors, as pinky-mcp")
            time_searches(kb, queries[:50], "in-memory vectors, type=gotcha filter", type="gotcha")
            stats = kb.stats()
            print(f"index:          {stats['entries']:,} entries, {stats['chunks']:,} chunks, "
                  f"{stats['db_bytes'] / 1e6:.1f} MB")
        print(f"peak RSS:       {peak_rss_mb():8.1f} MB")


if __name__ == "__main__":
    main()

"""Core speed and memory figures (a script, not a test): prints them, asserts nothing.

    python benchmarks/bench_core.py [--notes 10000] [--embedder use|hash] [--queries 200] [--keep DIR]
                                    [--cli-runs 10]

Generates N notes of ~150 words in a temporary brain (or in --keep DIR, reused by the next run),
then measures a full reindex (time, notes/s, bytes written per byte of index), a no-op reindex,
warm search latency (query embedding included), one-shot CLI search and save (a fresh
`pinky-brain` process each, start to exit), the index size and peak RSS.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import random
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from figures import record, write  # noqa: E402

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


def time_searches(kb, queries: list[str], label: str, name: str = "",  # type: ignore[no-untyped-def]
                  **filters: str) -> None:
    kb.search(queries[0], **filters)  # warm: model loaded, pages cached, vectors in memory
    timings = []
    for query in queries:
        started = time.perf_counter()
        kb.search(query, limit=10, **filters)
        timings.append((time.perf_counter() - started) * 1000)
    if name:
        record(f"{name}_p50_ms", statistics.median(timings))
        record(f"{name}_p95_ms", percentile(timings, 0.95))
    print(f"warm search:    p50 {statistics.median(timings):6.2f} ms   p95 {percentile(timings, 0.95):6.2f} ms"
          f"   ({len(timings)} queries, hybrid, limit 10, query embedding included; {label})")


def written_bytes() -> int:
    """Bytes this process has caused to be written to storage so far (Linux; 0 elsewhere)."""
    try:
        with open("/proc/self/io", encoding="ascii") as handle:
            return next(int(line.split()[1]) for line in handle if line.startswith("write_bytes"))
    except (OSError, StopIteration):
        return 0


def one_shot(args: list[str], cwd: Path, runs: int, stdin: str | None = None) -> float:
    """Median wall milliseconds of a fresh `pinky-brain` process, start to exit."""
    exe = Path(sys.executable).parent / "pinky-brain"
    timings = []
    for run in range(runs + 1):
        started = time.perf_counter()
        subprocess.run([str(exe), *args], cwd=cwd, input=(stdin or "").replace("{n}", str(run)), text=True,
                       capture_output=True, check=True)
        if run:  # the first run warms the page cache and writes the model cache
            timings.append((time.perf_counter() - started) * 1000)
    return statistics.median(timings)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--notes", type=int, default=10_000)
    parser.add_argument("--embedder", choices=["use", "hash"], default="use")
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--keep", type=Path, help="build (or reuse) the brain in this folder")
    parser.add_argument("--cli-runs", type=int, default=10)
    parser.add_argument("--json", type=Path, help="also write the figures to this file (bench_all.py)")
    args = parser.parse_args()
    with contextlib.ExitStack() as stack:
        base = args.keep or Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="pinky-bench-")))
        run(args, base)
    write(args.json)


def run(args: argparse.Namespace, base: Path) -> None:
    os.environ["PINKY_HOME"] = str(base / "home")
    os.environ.pop("PINKY_HASH_EMBED", None)
    if args.embedder == "hash":
        os.environ["PINKY_HASH_EMBED"] = "1"
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))
    from pinky.config import load_config
    from pinky.kb import KnowledgeBase

    project = base / "project"
    if not (project / "documentation").is_dir():
        make_notes(project / "documentation", args.notes)
        (project / "pinky.toml").write_text("# the benchmark's project\n", encoding="utf-8")
    config = load_config(db=project / "brain.db", save_dir=project / "documentation")
    print(f"notes: {args.notes:,}  embedder: {args.embedder}  python: {sys.version.split()[0]}")

    with KnowledgeBase(config) as kb:
        started = time.perf_counter()
        kb.embedder.embed(["warm"])  # a first run writes the model cache ($PINKY_HOME/cache): not the index's writes
        print(f"model load:     {time.perf_counter() - started:8.2f} s  (from the cache in $PINKY_HOME/cache when "
              f"it exists; the first run builds it)")
        before = written_bytes()
        started = time.perf_counter()
        report = kb.reindex(full=True)
        full = record("full_reindex_s", time.perf_counter() - started)
        record("notes_per_s", args.notes / full)
        wrote = written_bytes() - before
        print(f"full reindex:   {full:8.2f} s  ({args.notes / full:,.0f} notes/s, "
              f"{report.chunks_embedded:,} chunks embedded)")
        started = time.perf_counter()
        noop = kb.reindex()
        print(f"no-op reindex:  {record('noop_reindex_s', time.perf_counter() - started):8.3f} s  "
              f"(embedded {noop.chunks_embedded})")

        rng = random.Random(11)
        words, weights = vocabulary()
        queries = [" ".join(rng.choices(words, weights, k=rng.randint(2, 6))) for _ in range(args.queries)]
        time_searches(kb, queries, "sqlite-vec scan, as a one-shot CLI", "warm_scan_search")
    with KnowledgeBase(config, cache_vectors=True) as kb:
        time_searches(kb, queries, "in-memory vectors, as pinky-mcp", "warm_memory_search")
        time_searches(kb, queries[:50], "in-memory vectors, type=gotcha filter", type="gotcha")
        stats = kb.stats()
    size = stats["db_bytes"]
    record("index_mb", size / 1e6)
    import sqlite3

    with contextlib.closing(sqlite3.connect(f"file:{config.db_path}?mode=ro", uri=True)) as conn:
        free = conn.execute("PRAGMA freelist_count").fetchone()[0] * conn.execute("PRAGMA page_size").fetchone()[0]
    record("free_mb", free / 1e6)  # left by the in-place --full: a fresh index has none; later writes reuse them
    record("written_x", wrote / max(size, 1))
    print(f"index:          {stats['entries']:,} entries, {stats['chunks']:,} chunks, {size / 1e6:.1f} MB "
          f"({free / 1e6:.1f} MB of it free pages); "
          f"the full reindex wrote {wrote / 1e6:,.0f} MB ({wrote / max(size, 1):.1f}x the index)")
    if args.cli_runs:
        search = one_shot(["search", queries[0]], project, args.cli_runs)
        save = one_shot(["save", "-t", "bench save {n}", "--type", "note"], project, args.cli_runs,
                        stdin="A note saved by the benchmark, number {n}, about pool timeouts.")
        record("cli_search_p50_ms", search)
        record("cli_save_p50_ms", save)
        print(f"one-shot CLI:   search p50 {search:6.0f} ms   save p50 {save:6.0f} ms   "
              f"({args.cli_runs} fresh processes each, start to exit)")
    print(f"peak RSS:       {record('peak_rss_mb', peak_rss_mb()):8.1f} MB")


if __name__ == "__main__":
    main()

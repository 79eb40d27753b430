"""Every speed and size figure of the performance issue in one run, as one table (a script, not a test).

    python benchmarks/bench_all.py [--notes 10000] [--large 100000] [--keep DIR] [--skip-large]

Runs, each in its own process, on generated brains kept in DIR (reused by the next run):
1. bench_core.py on N notes with the default embedder: full reindex, no-op reindex, warm searches,
   index size and bytes written, one-shot CLI search and save, peak RSS; bench_one_shot.py on it: the
   one-shot search and save beside a bare interpreter start, pair by pair;
2. bench_mcp.py on the same brain: cold start and warm `brain_search` over stdio, server RSS;
3. the same two on a large brain (hash vectors: the default model would take most of an hour to embed
   100,000 notes, and search cost does not depend on which model made the vectors);
4. bench_hooks.py: the hooks' budgets; bench_ann.py: exact against approximate vector search.
Then prints each figure next to the issue's starting figure and its target. About 15 minutes on 2
cores the first time (building the large brain), less when DIR is reused.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent

# (label, source, figure name, the figure, target); the figures the issue measured before it
ROWS = [
    ("full reindex, default embedder (notes/s)", "core", "notes_per_s", "51", ">= 170"),
    ("full reindex (s)", "core", "full_reindex_s", "196", "<= 60"),
    ("one-shot CLI hybrid search p50 (ms)", "core", "cli_search_p50_ms", "~1,400", "<= 300"),
    ("one-shot CLI save p50 (ms)", "core", "cli_save_p50_ms", "2,500-6,600", "<= 300"),
    ("one-shot CLI search (x bare interpreter start)", "one-shot", "one_shot_search_x_bare", "27", "<= 8"),
    ("one-shot CLI save (x bare interpreter start)", "one-shot", "one_shot_save_x_bare", "30", "<= 8"),
    ("warm MCP brain_search p50 (ms)", "mcp", "mcp_search_p50_ms", "13.7", "-"),
    ("warm MCP brain_search p95 (ms)", "mcp", "mcp_search_p95_ms", "-", "-"),
    ("no-op reindex (s)", "core", "noop_reindex_s", "0.2", "-"),
    ("index size (MB)", "core", "index_mb", "158.5", "<= 90"),
    ("  of which pages left free by the in-place --full (MB)", "core", "free_mb", "-", "-"),
    ("bytes written by a full index (x size)", "core", "written_x", "4.1", "<= 2"),
    ("peak RSS, reindex and searches (MB)", "core", "peak_rss_mb", "-", "recorded"),
    ("MCP server RSS (MB)", "mcp", "server_rss_mb", "-", "recorded"),
    ("MCP cold start to tools/list (ms)", "mcp", "brain_cold_start_ms", "500", "<= 500"),
    ("large: warm MCP brain_search p50 (ms)", "mcp-large", "mcp_search_p50_ms", "28.6 at 50k", "<= 50"),
    ("large: warm MCP brain_search p95 (ms)", "mcp-large", "mcp_search_p95_ms", "-", "-"),
    ("large: one-shot CLI search p50 (ms)", "core-large", "cli_search_p50_ms", "-", "<= 500"),
    ("large: no-op reindex (s)", "core-large", "noop_reindex_s", "3.0 at 50k", "<= 2"),
    ("large: index size (MB)", "core-large", "index_mb", "707 at 50k", "recorded"),
    ("large: MCP server RSS (MB)", "mcp-large", "server_rss_mb", "-", "recorded"),
    ("hook pre-read (x bare interpreter start)", "hooks", "hook pre-read (linked file) x bare start", "1.37",
     "<= 1.5"),
    ("hook SessionStart p50 (ms)", "hooks", "hook session-start p50 ms", "-", "<= 300"),
    ("hook Stop on a 2 MB transcript p50 (ms)", "hooks", "hook stop (2 MB transcript) p50 ms", "-", "<= 500"),
]


def run(script: str, args: list[str], out: Path) -> dict[str, float]:
    print(f"\n$ {script} {' '.join(args)}", flush=True)
    subprocess.run([sys.executable, str(HERE / script), *args, "--json", str(out)], check=True)
    return json.loads(out.read_text(encoding="utf-8"))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--notes", type=int, default=10_000)
    parser.add_argument("--large", type=int, default=100_000)
    parser.add_argument("--keep", type=Path, help="build (or reuse) the brains in this folder")
    parser.add_argument("--skip-large", action="store_true")
    args = parser.parse_args()
    base = args.keep or Path(tempfile.mkdtemp(prefix="pinky-bench-all-"))
    small, large = base / f"use-{args.notes}", base / f"hash-{args.large}"
    figures: dict[str, dict[str, float]] = {}
    figures["core"] = run("bench_core.py", ["--notes", str(args.notes), "--keep", str(small)], base / "core.json")
    figures["one-shot"] = run("bench_one_shot.py", ["--keep", str(small)], base / "one-shot.json")
    figures["mcp"] = run("bench_mcp.py", ["--entries", str(args.notes), "--embedder", "use", "--keep", str(small)],
                         base / "mcp.json")
    if not args.skip_large:
        figures["core-large"] = run("bench_core.py", ["--notes", str(args.large), "--embedder", "hash", "--keep",
                                                      str(large), "--cli-runs", "5", "--queries", "100"],
                                    base / "core-large.json")
        figures["mcp-large"] = run("bench_mcp.py", ["--entries", str(args.large), "--keep", str(large),
                                                    "--starts", "2", "--queries", "100"], base / "mcp-large.json")
    figures["hooks"] = run("bench_hooks.py", ["--keep", str(base / "hooks")], base / "hooks.json")
    for brain in (small, large) if not args.skip_large else (small,):  # exact vs approximate vector search
        print(f"\n$ bench_ann.py --keep {brain}", flush=True)
        subprocess.run([sys.executable, str(HERE / "bench_ann.py"), "--keep", str(brain), "--queries", "100"],
                       check=True)

    print(f"\n{args.notes:,} notes with the default embedder; large = {args.large:,} notes with hash vectors\n")
    print(f"| {'figure':<54} | {'issue (before)':>14} | {'target':>9} | {'now':>9} |")
    print(f"|{'-' * 56}|{'-' * 15}:|{'-' * 10}:|{'-' * 10}:|")
    for label, source, name, before, target in ROWS:
        value = figures.get(source, {}).get(name)
        now = "-" if value is None else f"{value:,.2f}" if value < 10 else f"{value:,.1f}" if value < 1000 \
            else f"{value:,.0f}"
        print(f"| {label:<54} | {before:>14} | {target:>9} | {now:>9} |")
    print(f"\nraw figures: {base}/*.json")


if __name__ == "__main__":
    main()

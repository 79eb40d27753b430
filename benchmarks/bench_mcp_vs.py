"""pinky-mcp of this checkout beside another install's, in one run (a script, not a test): prints, asserts nothing.

    python benchmarks/bench_mcp_vs.py --before BIN [--entries 2000] [--queries 200] [--starts 10] [--keep DIR]

`BIN` is the bin folder of the install to compare with (e.g. the main branch's .venv/bin). On one brain (the
hashing embedder), both servers are:
1. started in turn, A B A B …: spawn until the first `tools/list` is answered;
2. kept running side by side, warm, and sent the same brain_search in turn: round trip p50 / p95.
Each figure is given for both and as the median of the paired ratios (after / before): what "within 5 % of
today's" is read from on a machine whose speed drifts.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import bench_mcp  # noqa: E402
from bench_core import make_notes, percentile, vocabulary  # noqa: E402

HERE = Path(sys.executable).parent


def line(label: str, after: list[float], before: list[float]) -> None:
    ratio = statistics.median(a / b for a, b in zip(after, before, strict=True))
    print(f"{label:<26} after p50 {statistics.median(after):8.2f} ms  p95 {percentile(after, 0.95):8.2f}   "
          f"before p50 {statistics.median(before):8.2f} ms  p95 {percentile(before, 0.95):8.2f}   "
          f"after/before {ratio:.3f}")


def cold_starts(commands: dict[str, list[str]], env: dict[str, str], cwd: Path, runs: int) -> None:
    took: dict[str, list[float]] = {"after": [], "before": []}
    for _ in range(runs):
        for side, command in commands.items():
            started = time.perf_counter()
            server = bench_mcp.Server(env, cwd, command)
            server.initialize()
            server.request("tools/list")
            took[side].append((time.perf_counter() - started) * 1000)
            server.close()
    line("spawn -> tools/list", took["after"], took["before"])


def searches(commands: dict[str, list[str]], env: dict[str, str], cwd: Path, queries: list[str]) -> None:
    with contextlib.ExitStack() as stack:
        servers = {side: bench_mcp.Server(env, cwd, command) for side, command in commands.items()}
        for server in servers.values():
            stack.callback(server.close)
            server.initialize()
        for server in servers.values():
            server.wait_warm()
        took: dict[str, list[float]] = {"after": [], "before": []}
        for query in queries:
            for side, server in servers.items():
                started = time.perf_counter()
                reply = server.request("tools/call", {"name": "brain_search", "arguments": {"query": query}})
                took[side].append((time.perf_counter() - started) * 1000)
                assert not reply["result"]["isError"], reply
    line("brain_search round trip", took["after"], took["before"])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--before", type=Path, required=True, help="the bin folder of the install to compare with")
    parser.add_argument("--entries", type=int, default=2000)
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--starts", type=int, default=10)
    parser.add_argument("--keep", type=Path, help="build (or reuse) the brain in this folder")
    args = parser.parse_args()
    with contextlib.ExitStack() as stack:
        base = args.keep or Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="pinky-bench-mcp-vs-")))
        project = base / "project"
        env = {k: v for k, v in os.environ.items() if not k.startswith("PINKY_")}
        env.update(PINKY_HOME=str(base / "home"), PINKY_DB=str(project / "brain.db"), PINKY_HASH_EMBED="1",
                   PINKY_SAVE_DIR=str(project / "documentation"), PINKY_QUALITY="off")
        if not (project / "documentation").is_dir():
            make_notes(project / "documentation", args.entries)
            subprocess.run([str(HERE / "pinky-brain"), "reindex"], env=env, cwd=base, check=True, capture_output=True)
        for folder in (HERE, args.before):  # both as installed: bytecode compiled
            subprocess.run([str(folder / "python"), "-c", "import compileall, pathlib, pinky; "
                            "compileall.compile_dir(pathlib.Path(pinky.__file__).parent, quiet=1)"], check=True)
        commands = {"after": [str(HERE / "pinky-mcp")], "before": [str(args.before / "pinky-mcp")]}
        print(f"{args.entries:,} notes, hashing embedder, second stage off; {args.starts} starts and "
              f"{args.queries} searches each, in turn")
        cold_starts(commands, env, base, args.starts)
        rng = random.Random(11)
        words, weights = vocabulary()
        queries = [" ".join(rng.choices(words, weights, k=rng.randint(2, 6))) for _ in range(args.queries)]
        searches(commands, env, base, queries)


if __name__ == "__main__":
    main()

"""pinky-mcp figures (a script, not a test): prints them, asserts nothing.

    python benchmarks/bench_mcp.py [--entries 10000] [--embedder hash|use] [--queries 200] [--starts 5]
                                   [--keep DIR] [--quality e5|off]

1. Cold start: spawn `pinky-mcp`, time until `initialize` and the first `tools/list` are answered.
2. brain_search round trip over stdio (JSON line out, JSON line back) on a brain of N notes of
   ~150 words, after the server's background catch-up and warm-up finished: p50 / p95.
3. The server's peak resident memory after those searches.
The brain is built once in-process before the server starts, with the chosen embedder; with --keep
it is built in (or reused from) DIR, which bench_core.py --keep DIR also uses.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_core import make_notes, percentile, vocabulary  # noqa: E402
from figures import record, write  # noqa: E402


def server_command() -> list[str]:
    script = Path(sys.executable).parent / "pinky-mcp"
    return [str(script)] if script.exists() else [sys.executable, "-m", "pinky.mcp.server"]


class Server:
    """A pinky-mcp process spoken to in JSON lines (`command`: another install's, else this one's)."""

    def __init__(self, env: dict[str, str], cwd: Path, command: list[str] | None = None) -> None:
        self.proc = subprocess.Popen(command or server_command(), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.DEVNULL, env=env, cwd=cwd)
        self.next_id = 0

    def request(self, method: str, params: dict | None = None) -> dict:
        self.next_id += 1
        message = {"jsonrpc": "2.0", "id": self.next_id, "method": method, **({"params": params} if params else {})}
        assert self.proc.stdin and self.proc.stdout
        self.proc.stdin.write(json.dumps(message).encode() + b"\n")
        self.proc.stdin.flush()
        while True:
            reply = json.loads(self.proc.stdout.readline())
            if reply.get("id") == self.next_id:
                return reply

    def initialize(self) -> None:
        self.request("initialize", {"protocolVersion": "2025-11-25", "capabilities": {},
                                    "clientInfo": {"name": "bench", "version": "1"}})
        assert self.proc.stdin
        self.proc.stdin.write(b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n')
        self.proc.stdin.flush()

    def wait_warm(self) -> dict:
        """Wait for the background catch-up, embedder warm-up and vector fill; brain_stats' answer then."""
        while True:
            stats = self.request("tools/call", {"name": "brain_stats", "arguments": {}})["result"]["structuredContent"]
            background = stats["background"]
            if background.get("catch_up") == "done" and background.get("embedder") != "loading" \
                    and stats["pending_vectors"] == 0:
                return stats
            time.sleep(0.2)

    def close(self) -> None:
        assert self.proc.stdin
        self.proc.stdin.close()
        self.proc.wait(30)


def cold_starts(env: dict[str, str], cwd: Path, runs: int, label: str) -> None:
    init, listed = [], []
    for _ in range(runs):
        started = time.perf_counter()
        server = Server(env, cwd)
        server.initialize()
        init.append(time.perf_counter() - started)
        server.request("tools/list")
        listed.append(time.perf_counter() - started)
        server.close()
    record(f"{label}_cold_start_ms", statistics.median(listed) * 1000)
    print(f"cold start:     initialize answered after {statistics.median(init) * 1000:6.0f} ms, "
          f"first tools/list after {statistics.median(listed) * 1000:6.0f} ms (median of {runs})")


def peak_rss_mb(pid: int) -> float:
    """The process's peak resident set (VmHWM, Linux); 0 where /proc is missing."""
    try:
        with open(f"/proc/{pid}/status", encoding="ascii") as handle:
            return next(int(line.split()[1]) for line in handle if line.startswith("VmHWM")) / 1024
    except (OSError, StopIteration):
        return 0.0


def search_round_trips(env: dict[str, str], cwd: Path, queries: list[str], entries: int) -> None:
    server = Server(env, cwd)
    server.initialize()
    started = time.perf_counter()
    stats = server.wait_warm()
    print(f"warm-up:        {time.perf_counter() - started:6.1f} s until catch-up, embedder and vectors were ready "
          f"({stats['entries']:,} entries, {stats['chunks']:,} chunks)")
    assert stats["entries"] >= entries, stats
    timings = []
    for query in queries:
        t0 = time.perf_counter()
        reply = server.request("tools/call", {"name": "brain_search", "arguments": {"query": query}})
        timings.append((time.perf_counter() - t0) * 1000)
        assert not reply["result"]["isError"], reply
    peak = peak_rss_mb(server.proc.pid)
    server.close()
    print(f"server peak RSS: {record('server_rss_mb', peak):6.0f} MB")
    record("mcp_search_p50_ms", statistics.median(timings))
    record("mcp_search_p95_ms", percentile(timings, 0.95))
    print(f"brain_search:   p50 {statistics.median(timings):6.2f} ms   p95 {percentile(timings, 0.95):6.2f} ms   "
          f"({len(timings)} round trips over stdio, limit 10, compact, usage telemetry on)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--entries", type=int, default=10_000)
    parser.add_argument("--embedder", choices=["hash", "use"], default="hash")
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--starts", type=int, default=5)
    parser.add_argument("--keep", type=Path, help="build (or reuse) the brain in this folder")
    parser.add_argument("--quality", choices=["e5", "off"], default=None,
                        help="PINKY_QUALITY for the server: the second stage on (the default with use) or off")
    parser.add_argument("--json", type=Path, help="also write the figures to this file (bench_all.py)")
    args = parser.parse_args()

    with contextlib.ExitStack() as stack:
        base = args.keep or Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="pinky-bench-mcp-")))
        run(args, base)
    write(args.json)


def run(args: argparse.Namespace, base: Path) -> None:
    project = base / "project"
    env = {k: v for k, v in os.environ.items() if not k.startswith("PINKY_")}
    env.update(PINKY_HOME=str(base / "home"), PINKY_DB=str(project / "brain.db"),
               PINKY_SAVE_DIR=str(project / "documentation"))
    if args.embedder == "hash":
        env["PINKY_HASH_EMBED"] = "1"
    if args.quality:
        env["PINKY_QUALITY"] = args.quality
    os.environ.update(env)
    os.environ.pop("PINKY_HASH_EMBED", None) if args.embedder == "use" else None
    print(f"entries: {args.entries:,}  embedder: {args.embedder}  python: {sys.version.split()[0]}  "
          f"cpus: {os.cpu_count()}")
    empty = base / "empty"
    empty.mkdir(exist_ok=True)
    cold_starts({**env, "PINKY_DB": str(empty / "brain.db"), "PINKY_SAVE_DIR": str(empty / "documentation")},
                base, args.starts, "empty")  # empty brain: start-up cost alone

    from pinky.config import load_config
    from pinky.kb import KnowledgeBase

    if not (project / "documentation").is_dir():
        make_notes(project / "documentation", args.entries)
    started = time.perf_counter()
    with KnowledgeBase(load_config()) as kb:
        kb.reindex()
    print(f"index build:    {time.perf_counter() - started:6.1f} s (in-process, before the server starts)")

    cold_starts(env, base, args.starts, "brain")  # the same with the brain: start-up must not depend on it
    rng = random.Random(11)
    words, weights = vocabulary()
    queries = [" ".join(rng.choices(words, weights, k=rng.randint(2, 6))) for _ in range(args.queries)]
    search_round_trips(env, base, queries, args.entries)

if __name__ == "__main__":
    main()

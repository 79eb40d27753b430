"""What pinky-mcp's front (pinky.mcp.front) costs, side by side in one run (a script, not a test).

    python benchmarks/bench_front.py [--notes 400] [--queries 200] [--starts 10] [--hogs 0 2]

1. A warm brain_search round trip (20 hits) through `pinky-mcp`, the front relaying to the real server, against
   the real server alone (`python -m pinky.mcp.server`), on the same brain of N notes: both servers run at once
   and take the queries in turn, so the machine's load falls on both alike. p50 and p90 in ms.
2. From the spawn to the answer to `tools/list` (sent as soon as `initialize` is answered; the front's cache
   warmed by one start first) against a bare `python -c pass` start, each start of one alternating with one of
   the other; quiet, and with two CPU hogs (`while 1: pass` processes this script starts and kills). Medians.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_core import make_notes, percentile, vocabulary  # noqa: E402
from bench_mcp_first_answer import first_answers  # noqa: E402
from bench_plugin_first_start import Hogs  # noqa: E402
from figures import record, write  # noqa: E402

FRONT = [str(Path(sys.executable).parent / "pinky-mcp")]
DIRECT = [sys.executable, "-m", "pinky.mcp.server"]


class Server:
    def __init__(self, command: list[str], env: dict[str, str], cwd: Path) -> None:
        self.proc = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.DEVNULL, env=env, cwd=cwd)
        self.next_id = 0
        self.request("initialize", {"protocolVersion": "2025-11-25", "capabilities": {},
                                    "clientInfo": {"name": "bench", "version": "1"}})
        self.write(b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n')

    def write(self, data: bytes) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(data)
        self.proc.stdin.flush()

    def request(self, method: str, params: dict) -> dict:
        self.next_id += 1
        self.write(json.dumps({"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params}).encode()
                   + b"\n")
        assert self.proc.stdout is not None
        while True:
            reply = json.loads(self.proc.stdout.readline())
            if reply.get("id") == self.next_id:
                return reply

    def call(self, tool: str, **arguments: object) -> dict:
        return self.request("tools/call", {"name": tool, "arguments": arguments})["result"]

    def wait_ready(self) -> None:
        """Until the background catch-up, the embedder and the vectors are done (searches are then warm)."""
        while True:
            stats = self.call("brain_stats")["structuredContent"]
            if stats["background"].get("catch_up") == "done" and stats["background"].get("embedder") != "loading" \
                    and stats["pending_vectors"] == 0:
                return
            time.sleep(0.2)

    def close(self) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        self.proc.wait(60)


def round_trips(env: dict[str, str], root: Path, queries: list[str]) -> None:
    servers = {"pinky-mcp (front)": Server(FRONT, env, root), "real server alone": Server(DIRECT, env, root)}
    for server in servers.values():
        server.wait_ready()
    timings: dict[str, list[float]] = {name: [] for name in servers}
    for query in queries:
        for name, server in servers.items():
            started = time.perf_counter()
            result = server.call("brain_search", query=query, limit=20)
            timings[name].append((time.perf_counter() - started) * 1000)
            assert not result.get("isError"), result
    for server in servers.values():
        server.close()
    print(f"1. warm brain_search round trip, limit 20, {len(queries)} queries each, in turn (ms)")
    for name, values in timings.items():
        p50, p90 = statistics.median(values), percentile(values, 0.9)
        label = "front" if "front" in name else "direct"
        record(f"front_search_p50_ms_{label}", p50)
        record(f"front_search_p90_ms_{label}", p90)
        print(f"   {name:20s} p50 {p50:6.2f}   p90 {p90:6.2f}")
    extra = statistics.median(timings["pinky-mcp (front)"]) - statistics.median(timings["real server alone"])
    print(f"   the relay adds {record('front_relay_extra_p50_ms', extra):+.2f} ms at p50")


def bare_start() -> float:
    started = time.monotonic()
    subprocess.run([sys.executable, "-c", "pass"], check=True)
    return time.monotonic() - started


def first_answer_starts(env: dict[str, str], root: Path, runs: int, hog_counts: list[int]) -> None:
    first_answers(FRONT, env, root)  # writes the front's cache, warms the page cache
    print(f"2. spawn -> tools/list answered by pinky-mcp vs a bare `python -c pass`, median of {runs} (ms)")
    for hogs in hog_counts:
        front, bare = [], []
        with Hogs(hogs):
            for _ in range(runs):
                front.append(first_answers(FRONT, env, root)[1] * 1000)
                bare.append(bare_start() * 1000)
        ratio = statistics.median(front) / statistics.median(bare)
        record(f"front_tools_listed_ms_{hogs}_hogs", statistics.median(front))
        record(f"front_tools_listed_ratio_{hogs}_hogs", ratio)
        print(f"   {hogs} CPU hogs: pinky-mcp {statistics.median(front):6.0f} (max {max(front):5.0f})   "
              f"bare python {statistics.median(bare):5.0f} (max {max(bare):5.0f})   ratio {ratio:5.2f}x")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--notes", type=int, default=400)
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--starts", type=int, default=10)
    parser.add_argument("--hogs", type=int, nargs="+", default=[0, 2])
    parser.add_argument("--json", type=Path, help="also write the figures to this file")
    args = parser.parse_args()
    root = Path(tempfile.mkdtemp(prefix="pinky-bench-front-"))
    try:
        env = {k: v for k, v in os.environ.items() if not k.startswith(("PINKY_", "CLAUDE"))}
        env |= {"PINKY_HOME": str(root / "home"), "PINKY_HASH_EMBED": "1", "PINKY_DB": str(root / "brain.db"),
                "PINKY_SAVE_DIR": str(root / "documentation")}
        make_notes(root / "documentation", args.notes)
        rng = random.Random(5)
        words, weights = vocabulary()
        queries = [" ".join(rng.choices(words[:300], weights[:300], k=rng.randint(2, 4))) for _ in range(args.queries)]
        print(f"{os.cpu_count()} cores, load average {os.getloadavg()[0]:.1f}, {args.notes} notes, "
              f"python {sys.version.split()[0]}")
        round_trips(env, root, queries)
        first_answer_starts(env, root, args.starts, args.hogs)
    finally:
        shutil.rmtree(root, ignore_errors=True)
    write(args.json)


if __name__ == "__main__":
    main()

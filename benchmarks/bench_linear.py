"""Large pathological texts through the real front ends (a script, not a test): prints seconds.

    python benchmarks/bench_linear.py [--src DIR] [--vocabulary 4] [--skip-save] [--skip-check]

1. `pinky save` of a body of 30,000 and of 100,000 newlines (no type or tags: the save classifies
   it), and the same through `pinky-mcp` with a `brain_stats` sent right behind each save: when
   each answered.
2. Two near-duplicate notes of 115 KB (one port differs, one sentence is reworded; sentences of
   common words and of --vocabulary others): `pinky check`, then `brain_check` through `pinky-mcp`
   with a `brain_search` sent right after it, against the best of three searches on the idle server.

`--src DIR` runs another checkout's code (its `src/`, e.g. ../main/src) for before-and-after
figures: the commands are this environment's, with DIR first on PYTHONPATH. Each reply is awaited
for at most --patience seconds (a quadratic scan can take minutes). Uses the hashing embedder.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "support"))
from helpers import console_script, near_duplicates, write_note  # noqa: E402
from mcp_helpers import RawServer, server_env  # noqa: E402

NEWLINES = (30_000, 100_000)


def pinky(root: Path, *args: str, body: str | None = None, patience: float) -> float:
    started = time.perf_counter()
    try:
        subprocess.run([*console_script("pinky"), *args], cwd=root, env=server_env(root), input=body, text=True,
                       capture_output=True, timeout=patience)
    except subprocess.TimeoutExpired:
        return float("inf")
    return time.perf_counter() - started


def send(server: RawServer, request_id: int, tool: str, **arguments: Any) -> float:
    server.send(json.dumps({"jsonrpc": "2.0", "id": request_id, "method": "tools/call",
                            "params": {"name": tool, "arguments": arguments}}))
    return time.perf_counter()


def arrivals(server: RawServer, ids: set[int], patience: float) -> dict[int, float]:
    """request id -> when its reply arrived (inf for none within `patience`)."""
    got: dict[int, float] = {}
    deadline = time.perf_counter() + patience
    while set(got) != ids and time.perf_counter() < deadline:
        try:
            message = server.receive(max(0.1, deadline - time.perf_counter()))
        except Exception:  # noqa: BLE001 - queue.Empty: nothing came in time
            break
        if message.get("id") in ids:
            got[message["id"]] = time.perf_counter()
    return {n: got.get(n, float("inf")) for n in ids}


def seconds(value: float) -> str:
    return "   gave up" if value == float("inf") else f"{value:8.2f} s"


def newline_saves(base: Path, patience: float) -> None:
    root = base / "newlines"
    (root / "documentation").mkdir(parents=True)
    print("| body of newlines | `pinky save` | `brain_save` answered | `brain_stats` sent behind it answered |")
    print("|---:|---:|---:|---:|")
    with RawServer(root) as server:
        server.initialize()
        server.call("brain_save", title="Warm up", body="The first save loads what every save needs.")
        for n, size in enumerate(NEWLINES):
            body = "Blank lines follow." + "\n" * (size - 28) + "The end."
            cli = pinky(root, "save", "-t", f"CLI blank lines {size}", body=body, patience=patience)
            saving = send(server, 10 + n, "brain_save", title=f"Blank lines {size}", body=body)
            asking = send(server, 20 + n, "brain_stats")
            got = arrivals(server, {10 + n, 20 + n}, patience)
            print(f"| {size:,} | {seconds(cli)} | {seconds(got[10 + n] - saving)} | {seconds(got[20 + n] - asking)} |",
                  flush=True)
            if float("inf") in got.values():
                server.proc.kill()
                break


def near_duplicate_check(base: Path, vocabulary: int, patience: float) -> None:
    root = base / "check"
    first, second = near_duplicates(115_000, vocabulary=vocabulary)
    write_note(root / "documentation", "note/service.md", f"---\ntitle: Service notes\n---\n{first}\n")
    write_note(root / "documentation", "note/service-copy.md", f"---\ntitle: Service notes, copied\n---\n{second}\n")
    pinky(root, "reindex", patience=patience)
    cli = pinky(root, "check", patience=patience)
    with RawServer(root) as server:
        server.initialize()
        idle = float("inf")
        for n in range(3):
            sent = send(server, 30 + n, "brain_search", query="balancer port")
            idle = min(idle, arrivals(server, {30 + n}, patience)[30 + n] - sent)
        checking = send(server, 1, "brain_check")
        searching = send(server, 2, "brain_search", query="balancer port")
        got = arrivals(server, {1, 2}, patience)
        if float("inf") in got.values():
            server.proc.kill()
    print(f"\ntwo near-duplicate notes of {len(first):,} and {len(second):,} characters ({vocabulary} words besides "
          f"the common ones):")
    print(f"  pinky check                                  {seconds(cli)}")
    print(f"  brain_check answered                         {seconds(got[1] - checking)}")
    print(f"  brain_search sent right after it answered    {seconds(got[2] - searching)}")
    print(f"  brain_search on the idle server (best of 3)  {seconds(idle)}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--src", type=Path, help="Run the code of this src/ folder (another checkout's).")
    parser.add_argument("--vocabulary", type=int, default=4, help="Words besides the common ones (default 4).")
    parser.add_argument("--patience", type=float, default=600.0, help="Seconds to wait for one answer.")
    parser.add_argument("--skip-save", action="store_true")
    parser.add_argument("--skip-check", action="store_true")
    args = parser.parse_args()
    if args.src:
        os.environ["PYTHONPATH"] = str(args.src.resolve())
    print(f"code: {args.src.resolve() if args.src else 'this checkout'}\n")
    with tempfile.TemporaryDirectory(prefix="pinky-linear-") as tmp:
        if not args.skip_save:
            newline_saves(Path(tmp), args.patience)
        if not args.skip_check:
            near_duplicate_check(Path(tmp), args.vocabulary, args.patience)


if __name__ == "__main__":
    main()

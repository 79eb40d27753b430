"""What an admin `brain_import` of something that is not an export file costs the server (a script,
not a test): prints figures, asserts nothing.

    python benchmarks/bench_import_refusals.py [--wait 60]

Starts the real `pinky-mcp` (PINKY_TIER=admin, hashing embedder) on an empty project and, one at a
time, asks it to import /dev/zero, a FIFO nobody writes to, and a regular file over the import limit.
For each: the seconds until the reply (or `no reply` after --wait), what the reply said, how much the
server's resident memory grew meanwhile (peak VmRSS minus the value before the call, Linux /proc), and
whether a brain_search sent during the import was answered (and after how long).
"""

from __future__ import annotations

import argparse
import json
import os
import queue
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path


def server_command() -> list[str]:
    script = Path(sys.executable).parent / "pinky-mcp"
    return [str(script)] if script.exists() else [sys.executable, "-m", "pinky.mcp.server"]


def rss_mb(pid: int) -> float:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return 0.0


class Server:
    def __init__(self, root: Path, **env: str) -> None:
        base = {k: v for k, v in os.environ.items() if not k.startswith(("PINKY_", "CLAUDE"))}
        base.update(PINKY_HOME=str(root / "home"), PINKY_DB=str(root / "brain.db"), PINKY_TIER="admin",
                    PINKY_SAVE_DIR=str(root / "documentation"), PINKY_HASH_EMBED="1", **env)
        self.proc = subprocess.Popen(server_command(), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.DEVNULL, env=base, cwd=root)
        self.replies: queue.Queue[dict] = queue.Queue()
        self.next_id = 0
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.proc.stdout
        for line in self.proc.stdout:
            self.replies.put(json.loads(line))

    def send(self, method: str, params: dict | None = None) -> int:
        self.next_id += 1
        message = {"jsonrpc": "2.0", "id": self.next_id, "method": method, **({"params": params} if params else {})}
        assert self.proc.stdin
        self.proc.stdin.write(json.dumps(message).encode() + b"\n")
        self.proc.stdin.flush()
        return self.next_id

    def initialize(self) -> None:
        self.wait_for(self.send("initialize", {"protocolVersion": "2025-11-25", "capabilities": {},
                                               "clientInfo": {"name": "bench", "version": "1"}}), 30)
        assert self.proc.stdin
        self.proc.stdin.write(b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n')
        self.proc.stdin.flush()

    def wait_for(self, request_id: int, seconds: float,
                 seen: dict[int, tuple[float, dict]] | None = None) -> dict | None:
        seen = {} if seen is None else seen
        deadline = time.monotonic() + seconds
        while request_id not in seen:
            try:
                reply = self.replies.get(timeout=max(0.0, min(0.2, deadline - time.monotonic())))
                seen[reply.get("id")] = (time.monotonic(), reply)
            except queue.Empty:
                if time.monotonic() >= deadline:
                    return None
        return seen[request_id][1]

    def close(self) -> None:
        self.proc.kill()
        self.proc.wait()


def trial(name: str, target: Path | str, wait: float) -> None:
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        (root / "documentation").mkdir()
        (root / "pinky.toml").write_text("")
        server = Server(root, PINKY_MAX_IMPORT_BYTES=str(1 << 20))
        try:
            server.initialize()
            server.wait_for(server.send("tools/call", {"name": "brain_stats", "arguments": {}}), 30)
            before, peak = rss_mb(server.proc.pid), 0.0
            start = time.monotonic()
            seen: dict[int, tuple[float, dict]] = {}
            call = server.send("tools/call", {"name": "brain_import", "arguments": {"file": str(target)}})
            server.wait_for(-1, 0.5, seen)  # keeps the arrival time of an early reply
            search = server.send("tools/call", {"name": "brain_search", "arguments": {"query": "pool"}})
            deadline = start + wait
            while time.monotonic() < deadline and not (call in seen and search in seen):
                peak = max(peak, rss_mb(server.proc.pid))
                server.wait_for(-1, 0.2, seen)
            peak = max(peak, rss_mb(server.proc.pid))
            reply = seen.get(call)
            if reply is None:
                answer = f"no reply in {wait:.0f} s"
            else:
                result = reply[1].get("result", {})
                text = result.get("content", [{}])[0].get("text", "") if result else json.dumps(reply[1])[:120]
                answer = f"{reply[0] - start:.2f} s, isError={result.get('isError', False)}: {text[:110]!r}"
            searched = f"{seen[search][0] - start - 0.5:.2f} s after it was sent" if search in seen else "no reply"
            print(f"{name:<22} reply {answer}")
            print(f"{'':<22} memory +{peak - before:,.0f} MB (peak {peak:,.0f} MB); brain_search meanwhile: {searched}")
        finally:
            server.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--wait", type=float, default=60.0, help="seconds to wait for each reply")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        fifo = Path(folder) / "pipe.jsonl"
        os.mkfifo(fifo)
        big = Path(folder) / "big.jsonl"
        with open(big, "wb") as handle:
            handle.truncate((1 << 20) + 1)  # one byte over PINKY_MAX_IMPORT_BYTES as set above (sparse)
        trial("/dev/zero", "/dev/zero", args.wait)
        trial("a FIFO", fifo, args.wait)
        trial("a file over the limit", big, args.wait)


if __name__ == "__main__":
    main()

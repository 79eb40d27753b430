"""`pinky view`'s memory under an oversized request body (a script, not a test): prints figures.

    python benchmarks/bench_view_body.py [--mb 300]

Starts the real `pinky view --no-open` on a small brain, signs in with its one-time link, then sends a
change (POST /api/verify) whose body is MB megabytes, twice: declared by Content-Length, then chunked
(no length). Prints the answer and the server's peak resident memory (VmHWM) after each. A server that
reads a body whole before checking its size (as before the 64 KB limit was enforced while reading)
holds it all in memory.
"""

from __future__ import annotations

import argparse
import socket
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests" / "support"))

from view_helpers import make_brain, running_view, sign_in  # noqa: E402

BLOCK = 1 << 20


def peak_mb(pid: int) -> int:
    with open(f"/proc/{pid}/status") as status:
        return int(next(line for line in status if line.startswith("VmHWM")).split()[1]) // 1024


def send(port: int, owner: dict[str, str], megabytes: int, chunked: bool) -> str:
    head = (f"POST /api/verify HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nAuthorization: {owner['Authorization']}\r\n"
            "Content-Type: application/json\r\n")
    head += "Transfer-Encoding: chunked\r\n\r\n" if chunked else f"Content-Length: {megabytes * BLOCK}\r\n\r\n"
    block = (b"%x\r\n" % BLOCK + b"x" * BLOCK + b"\r\n") if chunked else b"x" * BLOCK
    with socket.create_connection(("127.0.0.1", port), timeout=60) as sock:
        try:
            sock.sendall(head.encode())
            for _ in range(megabytes):
                sock.sendall(block)
        except OSError:
            pass  # the server stopped reading: what is wanted
        try:
            return sock.recv(200).split(b"\r\n")[0].decode()
        except OSError as exc:
            return f"no answer ({type(exc).__name__})"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--mb", type=int, default=300)
    args = parser.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="bench-view-body-"))
    make_brain(tmp / "proj")
    with running_view(tmp / "proj", tmp / "home") as view:
        owner = sign_in(view)
        print(f"pinky view, peak memory after start: {peak_mb(view.process.pid)} MB")
        for chunked in (False, True):
            answer = send(view.port, owner, args.mb, chunked)
            time.sleep(0.5)
            how = "chunked" if chunked else "Content-Length"
            print(f"{args.mb} MB body, {how}: {answer}; peak memory {peak_mb(view.process.pid)} MB")


if __name__ == "__main__":
    main()

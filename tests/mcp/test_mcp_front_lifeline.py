"""Issue 29 item 5: `kill -9` of `pinky-mcp` (the front the client started) stops every write. The real server in
its child process dies with it and carries out nothing the front relayed and could not answer: a client that
retries the saves it got no answer for would otherwise get each of them twice."""

from __future__ import annotations

import json
import os
import signal
import time
from pathlib import Path

from mcp_helpers import RawServer, alive, children_of, wait_for

MARK = "lifeline-streamed-save"


def saved_notes(root: Path) -> list[float]:
    """When each streamed note was written (its mtime)."""
    return sorted(path.stat().st_mtime for path in root.rglob("*.md") if MARK in path.read_text(errors="replace"))


def test_kill_9_of_the_front_stops_its_writes_and_its_child(tmp_path: Path) -> None:
    server = RawServer(tmp_path)
    server.initialize()
    server.call("brain_stats")  # the real server is up and answering
    [child] = children_of(server.proc.pid)
    requests = b"".join(json.dumps({"jsonrpc": "2.0", "id": n, "method": "tools/call", "params": {
        "name": "brain_save", "arguments": {"title": f"Streamed note number {n}", "type": "note",
                                            "body": f"{MARK} {n}: the client streams saves without waiting."}}}
                                  ).encode() + b"\n" for n in range(1, 301))
    assert server.proc.stdin is not None
    server.proc.stdin.write(requests)  # queued in the pipes, as a client streaming saves leaves them
    server.proc.stdin.flush()
    acknowledged = 0
    while acknowledged < 4:
        acknowledged += "result" in server.receive() and 1
    killed = time.time()
    os.kill(server.proc.pid, signal.SIGKILL)
    server.proc.wait(10)
    assert wait_for(lambda: not alive(child), 10), "the real server outlived the front"
    written = saved_notes(tmp_path)
    time.sleep(2)  # anything still running would go on writing meanwhile
    assert saved_notes(tmp_path) == written
    # The real server runs the calls it has read concurrently: a few notes are written before the kill whose
    # answers were still on their way (as with a server killed without a front). After the kill, at most the
    # one save already past its check may end; before the fix, about 40 were written.
    after = [when for when in written if when > killed]
    assert len(after) <= 1, f"{len(after)} notes written after the kill ({len(written)} in all)"
    assert len(written) < 300
    server.close()

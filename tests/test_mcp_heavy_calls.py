"""The real `pinky-mcp` process keeps answering while one call works on a large text (issue 22).

A body of 100,000 newlines froze the server for 150 s (a quadratic classification rule). Timed as a
ratio, never against the clock: the save of twice the newlines costs at most ~2.5 times as much,
and a request sent right behind it is answered too.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

from mcp_helpers import RawServer

LONG = 60.0  # seconds a reply may take before the test gives up on it: a guard against a hang, not a limit


def send(server: RawServer, request_id: int, tool: str, **arguments: Any) -> float:
    server.send(json.dumps({"jsonrpc": "2.0", "id": request_id, "method": "tools/call",
                            "params": {"name": tool, "arguments": arguments}}))
    return time.perf_counter()


def replies(server: RawServer, ids: set[int]) -> dict[int, tuple[float, dict[str, Any]]]:
    """request id -> (when its reply arrived, its result), for each of `ids`, in whatever order they come."""
    got: dict[int, tuple[float, dict[str, Any]]] = {}
    while set(got) != ids:
        message = server.receive(LONG)
        if message.get("id") in ids:
            assert "result" in message, message
            got[message["id"]] = (time.perf_counter(), message["result"])
    return got


def test_a_body_of_newlines_is_saved_in_linear_time_and_the_server_answers_meanwhile(tmp_path: Path) -> None:
    with RawServer(tmp_path) as server:
        server.initialize()
        server.call("brain_save", title="Warm up", body="The first save loads what every save needs.")
        took = {}
        for n, size in enumerate((50_000, 100_000)):
            body = "Blank lines follow." + "\n" * (size - 28) + "The end."  # no type or tags: classified
            sent = send(server, 10 + n, "brain_save", title=f"Blank lines {size}", body=body)
            asked = send(server, 20 + n, "brain_stats")  # a second request, right behind it
            got = replies(server, {10 + n, 20 + n})
            saved, stats = got[10 + n][1], got[20 + n][1]
            assert not saved.get("isError") and saved["structuredContent"]["slug"] == f"note/blank-lines-{size}"
            assert not stats.get("isError") and got[20 + n][0] > asked
            took[size] = got[10 + n][0] - sent
    assert took[100_000] <= 2.5 * took[50_000], took


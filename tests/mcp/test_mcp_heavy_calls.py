"""The real `pinky-mcp` process keeps answering while one call works on a large text (issue 22).

A body of 100,000 newlines froze the server for 150 s (a quadratic classification rule); a
contradiction check of two 115 KB near-duplicates held the knowledge base for 43 s, and a search
sent meanwhile waited all that time. Each is timed here as a ratio, never against the clock: the
save of twice the newlines costs at most ~2.5 times as much, and a search sent right after a check
answers before the check does, or within ten times what it takes on an idle server.
"""

from __future__ import annotations

import json
import subprocess
import time
from pathlib import Path
from typing import Any

from helpers import console_script, near_duplicates, write_note
from mcp_helpers import RawServer, server_env

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


def idle_search(server: RawServer, query: str) -> float:
    """The best of three searches on a server doing nothing else."""
    best = float("inf")
    for n in range(3):
        sent = send(server, 900 + n, "brain_search", query=query)
        best = min(best, replies(server, {900 + n})[900 + n][0] - sent)
    return best


def test_a_body_of_newlines_is_saved_in_linear_time_and_the_server_answers_meanwhile(tmp_path: Path) -> None:
    with RawServer(tmp_path) as server:
        server.initialize()
        server.call("brain_save", title="Warm up", body="The first save loads what every save needs.")
        took: dict[int, float] = {}
        for n, (round_, size) in enumerate((r, s) for r in range(5) for s in (50_000, 100_000)):
            body = "Blank lines follow." + "\n" * (size - 28) + "The end."  # no type or tags: classified
            sent = send(server, 10 + n, "brain_save", title=f"Blank lines {size} {round_}", body=body)
            asked = send(server, 100 + n, "brain_stats")  # a second request, right behind it
            got = replies(server, {10 + n, 100 + n})
            saved, stats = got[10 + n][1], got[100 + n][1]
            assert not saved.get("isError")
            assert saved["structuredContent"]["slug"] == f"note/blank-lines-{size}-{round_}"
            assert not stats.get("isError") and got[100 + n][0] > asked
            took[size] = min(took.get(size, float("inf")), got[10 + n][0] - sent)  # the best of five: noise only adds
    assert took[100_000] <= 2.5 * took[50_000], took


PAIRS = 4  # of 115 KB near-duplicates, each like the others (the hashing embedder): a check that compares
#           up to its 5 MB bound, seconds long enough to see a search pass it


def test_a_search_answers_while_a_check_compares_large_near_duplicates(tmp_path: Path) -> None:
    docs = tmp_path / "documentation"
    for n in range(PAIRS):
        first, second = near_duplicates(115_000, seed=n)
        suffix = f"-{n}" if n else ""
        write_note(docs, f"note/service{suffix}.md", f"---\ntitle: Service notes {n}\n---\n{first}\n")
        write_note(docs, f"note/service{suffix}-copy.md", f"---\ntitle: Service notes {n}, copied\n---\n{second}\n")
    subprocess.run([*console_script("pinky"), "reindex"], cwd=tmp_path, env=server_env(tmp_path), check=True,
                   capture_output=True)  # indexed and embedded before the server starts: it has nothing to catch up
    with RawServer(tmp_path) as server:
        server.initialize()
        idle = idle_search(server, "balancer port")
        checking = send(server, 1, "brain_check")
        searching = send(server, 2, "brain_search", query="balancer port")
        got = replies(server, {1, 2})
    check, search = got[1][1]["structuredContent"], got[2][1]["structuredContent"]
    assert search["hits"]
    pair = next(p for p in check["pairs"] if p["a"] == "note/service")
    assert pair["b"] == "note/service-copy"
    assert [(d["kind"], d["a"], d["b"]) for d in pair["differences"]] == [("port", "8080", "9090")]
    assert check["checked"] == 2 * PAIRS and check["skipped"] > 0  # it went as far as its bound
    waited, took = got[2][0] - searching, got[1][0] - checking
    assert got[2][0] < got[1][0], f"the search waited {waited:.2f} s for a check of {took:.2f} s (idle: {idle:.3f} s)"

"""Several servers on one brain.db (one per Claude Code session): concurrent saves lose nothing."""

from __future__ import annotations

import json
import random
import threading
from pathlib import Path

from mcp_helpers import RawServer

SAVES = 200


def _save_many(server: RawServer, tag: str, results: list[dict]) -> None:
    for n in range(SAVES):  # pipelined: all requests go out at once, the server runs them concurrently
        arguments = {"title": f"shared title {n}", "body": f"word{tag}{n} about connection pools, take {n}",
                     "type": random.choice(["note", "gotcha", "pattern"]), "tags": [tag]}
        server.send(json.dumps({"jsonrpc": "2.0", "id": n, "method": "tools/call",
                                "params": {"name": "brain_save", "arguments": arguments}}))
    results.extend(server.answer(n, timeout=120) for n in range(SAVES))


def test_two_servers_save_200_entries_each_at_the_same_time(tmp_path: Path) -> None:
    servers = {tag: RawServer(tmp_path, PINKY_PROJECT="demo") for tag in ("a", "b")}
    try:
        for server in servers.values():
            server.initialize()
        results: dict[str, list[dict]] = {tag: [] for tag in servers}
        threads = [threading.Thread(target=_save_many, args=(s, tag, results[tag])) for tag, s in servers.items()]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(180)
        for tag, replies in results.items():
            assert len(replies) == SAVES, tag
            errors = [r for r in replies if "error" in r or r["result"]["isError"]]
            assert not errors, errors[:3]
        files = list((tmp_path / "documentation").rglob("*.md"))
        assert len(files) == 2 * SAVES  # same titles from both sides: the loser gets -2, nothing is overwritten
        one = servers["a"]
        assert one.call("brain_stats")["structuredContent"]["entries"] == 2 * SAVES
        for tag in servers:
            for n in random.sample(range(SAVES), 15):
                hits = one.call("brain_search", query=f"word{tag}{n}")["structuredContent"]["hits"]
                assert any(f"word{tag}{n}" in hit["snippet"] for hit in hits), (tag, n)
    finally:
        for server in servers.values():
            server.close()
    for server in servers.values():
        # "database is locked", not any "locked": a watchdog warning prints a thread lock as `<locked _thread.lock>`
        assert "database is locked" not in server.stderr().lower(), server.stderr()[-2000:]

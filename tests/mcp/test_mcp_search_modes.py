"""brain_search's `mode` and `hypothetical` arguments, through the real pinky-mcp process."""

from __future__ import annotations

import subprocess
from pathlib import Path

import numpy as np
import pytest
from helpers import console_script, write_note
from mcp_helpers import RawServer, server_env

from pinky.base.validate import MAX_HYPOTHETICAL_CHARS
from pinky.search.hybrid import canonical_mode, combined_vector

REDIS = ("---\ntitle: Redis eviction surprise\ntype: gotcha\ntags: [redis]\n---\n"
         "allkeys-lru evicts keys under maxmemory.\n")
PLAIN = "---\ntitle: Lunch menu\ntype: note\n---\nSoup on Mondays, fish on Fridays.\n"


@pytest.fixture
def server(tmp_path: Path):  # type: ignore[no-untyped-def]
    write_note(tmp_path / "documentation", "gotcha/redis.md", REDIS)
    write_note(tmp_path / "documentation", "note/lunch.md", PLAIN)
    subprocess.run([*console_script("pinky"), "reindex"], cwd=tmp_path, env=server_env(tmp_path), check=True,
                   capture_output=True)
    with RawServer(tmp_path) as raw:
        raw.initialize()
        yield raw


def search(server: RawServer, **arguments: object) -> dict[str, object]:
    result = server.call("brain_search", **arguments)
    assert not result.get("isError"), result
    return result["structuredContent"]


def test_every_mode_name_runs_the_core_mode_it_stands_for(server: RawServer) -> None:
    for name, ran in [("keyword", "bm25"), ("bm25", "bm25"), ("semantic", "vector"), ("vector", "vector"),
                      ("hybrid", "hybrid")]:
        out = search(server, query="allkeys-lru evicts", mode=name)
        assert out["mode"] == ran, name
        assert [hit["slug"] for hit in out["hits"]][:1] == ["gotcha/redis"], name
    assert search(server, query="allkeys-lru evicts")["mode"] == "hybrid"  # the default is unchanged


def test_the_hypothetical_answer_finds_what_the_query_words_cannot(server: RawServer) -> None:
    question = "why do entries vanish from our cache"  # no word in common with the note
    assert search(server, query=question, mode="semantic")["hits"] == []
    drafted = search(server, query=question, mode="semantic",
                     hypothetical="Redis: allkeys-lru evicts keys under maxmemory.")
    assert [hit["slug"] for hit in drafted["hits"]] == ["gotcha/redis"]
    keyword = search(server, query=question, mode="keyword", hypothetical="Redis evicts keys with allkeys-lru.")
    assert keyword["hits"] == [] and "hypothetical is used by the vector side only" in keyword["notice"]


@pytest.mark.parametrize(("arguments", "message"), [
    ({"mode": "fuzzy"}, "mode"),
    ({"hypothetical": ""}, "hypothetical"),
    ({"hypothetical": "x" * (MAX_HYPOTHETICAL_CHARS + 1)}, "hypothetical"),
    ({"hypothetical": "a\x00b"}, "NUL"),
])
def test_bad_mode_or_hypothetical_is_a_tool_error(server: RawServer, arguments: dict[str, object],
                                                  message: str) -> None:
    result = server.call("brain_search", query="redis", **arguments)
    assert result.get("isError") is True
    assert message in result["content"][0]["text"]


def test_the_schema_offers_both_as_optional(server: RawServer) -> None:
    tools = {tool["name"]: tool for tool in server.request("tools/list")["result"]["tools"]}
    schema = tools["brain_search"]["inputSchema"]
    assert schema["required"] == ["query"]
    assert set(schema["properties"]["mode"]["enum"]) == {"hybrid", "keyword", "semantic", "bm25", "vector"}
    assert schema["properties"]["mode"]["default"] == "hybrid"
    assert schema["properties"]["hypothetical"]["maxLength"] == MAX_HYPOTHETICAL_CHARS


def test_combined_vector_is_the_unit_sum_of_unit_rows() -> None:
    vectors = np.array([[3.0, 0.0], [0.0, 0.5], [0.0, 0.0]], dtype="float32")
    assert np.allclose(combined_vector(vectors), [2 ** -0.5, 2 ** -0.5])
    assert np.allclose(combined_vector(vectors[:1]), [1.0, 0.0])
    assert not combined_vector(np.zeros((2, 3), dtype="float32")).any()
    assert canonical_mode("semantic") == "vector" and canonical_mode("keyword") == "bm25"

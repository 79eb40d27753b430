"""Contradictions without an LLM: the span detector on its labelled fixture and on each kind, and `check` over a
real index (near-duplicates, same key or subject), the CLI and the MCP server."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import anyio
import pytest
from click.testing import CliRunner
from mcp_helpers import in_process

from pinky.cli.main import cli
from pinky.config import load_config
from pinky.hygiene.differences import contradicts, differences, overlap
from pinky.kb import KnowledgeBase
from pinky.services.doctor import run_checks

PAIRS = Path(__file__).resolve().parents[2] / "benchmarks" / "contradiction_pairs.jsonl"


@pytest.fixture
def kb(project: Path) -> Iterator[KnowledgeBase]:
    base = KnowledgeBase(load_config())
    yield base
    base.close()


@pytest.mark.parametrize(("a", "b", "kind", "spans"), [
    ("CI uses Node 18 in the image.", "CI uses Node 20 in the image.", "version", ("18", "20")),
    ("It listens on port 8080.", "It listens on port 9090.", "port", ("8080", "9090")),
    ("Redis at localhost:6379 in dev.", "Redis at localhost:6380 in dev.", "port", ("6379", "6380")),
    ("Retry 3 times, then give up.", "Retry 5 times, then give up.", "number", ("3", "5")),
    ("Caching is enabled by default.", "Caching is disabled by default.", "flag", ("enabled", "disabled")),
    ("The client is thread-safe.", "The client is not thread-safe.", "negation", ("", "not")),
    ("You can delete it.", "You can't delete it.", "negation", ("can", "can't")),
])
def test_each_kind_of_difference_and_its_spans(a: str, b: str, kind: str, spans: tuple[str, str]) -> None:
    (found,) = differences(a, b)
    assert (found.kind, found.a, found.b) == (kind, *spans) and spans[1] in found.context_b


def test_wording_and_added_details_are_not_contradictions() -> None:
    assert differences("Retry 3 times with backoff.", "Retry three times, with exponential backoff.") == []
    assert differences("Keeps 14 snapshots.", "Keeps 14 snapshots, encrypted with the backup key.") == []
    assert differences("Use 8080 for the API and 9090 for metrics.", "Use 9090 for metrics and 8080 for the API.") == []


def test_code_blocks_long_rewordings_and_mere_topics_are_left_alone() -> None:
    fenced = "Call the health check.\n```python\nreturn {status}\n```\n"
    assert differences(fenced.format(status=403), fenced.format(status=401)) == []
    assert differences("Creates a folder.", "Create folders if they do not exist, otherwise do nothing.") == []
    first = "The web pool holds 10 connections."
    topical = ("For reporting we keep a separate setup: the batch pool holds 25 connections, sized for nightly "
               "exports and long queries.")
    assert differences(first, topical) and contradicts(first, topical) == []  # a topic, not the same statement
    assert overlap(first, first) == 1.0 and contradicts(first, first.replace("10", "12"))[0].kind == "number"


def test_the_labelled_fixture_is_large_enough_and_mostly_right() -> None:
    """The figures themselves are printed by benchmarks/bench_contradictions.py; this keeps them from rotting."""
    pairs = [json.loads(line) for line in PAIRS.read_text(encoding="utf-8").splitlines()]
    assert len(pairs) >= 60 and {p["contradiction"] for p in pairs} == {True, False}
    predicted = [bool(differences(p["a"], p["b"])) for p in pairs]
    hits = sum(p["contradiction"] and guess for p, guess in zip(pairs, predicted, strict=True))
    precision, recall = hits / sum(predicted), hits / sum(p["contradiction"] for p in pairs)
    assert precision >= 0.9 and recall >= 0.85, (precision, recall)


def test_check_finds_near_duplicates_and_same_key_pairs(kb: KnowledgeBase) -> None:
    port = kb.save("API port", "The API listens on port 8080 inside the container, behind the load balancer.")
    other = kb.save("API port in prod", "The API listens on port 9090 inside the container, behind the load balancer.")
    kb.save("Unrelated", "Celery workers run with a concurrency of four on staging.")
    kb.save("Node version", "We use node 18 everywhere.", key="ci.node")
    kb.save("Node version", "We use node 20 everywhere.", key="ci.node", scope="global")  # another scope: both current
    kb.save("Pool size", "The pool holds 10.", key="db.pool")
    kb.save("Pool size", "The pool holds 25.", key="db.pool")  # supersedes: not a contradiction any more
    done = kb.hygiene.check()
    pairs = {(p["a"], p["b"]): p for p in done["pairs"]}
    similar = pairs[(port.slug, other.slug)]
    assert similar["reason"].startswith("similar") and similar["differences"][0]["kind"] == "port"
    key_pair = pairs[("global/note/node-version", "note/node-version")]
    assert key_pair["reason"] == "same key 'ci.node'" and key_pair["differences"][0]["a"] == "20"
    assert done["count"] == 2 and done["notice"] is None
    assert [(p["a"], p["b"]) for p in kb.hygiene.check(other.slug)["pairs"]] == [(port.slug, other.slug)]
    assert kb.hygiene.check("unrelated")["pairs"] == []
    review = next(c for c in run_checks(kb) if c.name == "knowledge review")
    assert "2 possible contradictions" in review.detail and review.status == "warn"


def test_cli_check(kb: KnowledgeBase) -> None:
    kb.save("Flag", "Set CHECKOUT_V2 to true in production before the release.")
    kb.save("Flag", "Set CHECKOUT_V2 to false in production before the release.")
    done = CliRunner().invoke(cli, ["check"])
    assert done.exit_code == 1 and "flag: 'true' vs 'false'" in done.output
    assert CliRunner().invoke(cli, ["check", "--json"]).output.count('"kind": "flag"') == 1


@pytest.mark.anyio
async def test_mcp_brain_check(tmp_path: Path) -> None:
    async with in_process(tmp_path, "read") as (client, runtime):
        assert (await client.call_tool("brain_check", {})).structured_content["count"] == 0
    async with in_process(tmp_path, "write") as (client, runtime):
        first = await client.call_tool("brain_save", {"title": "Uploads", "body": "Uploads are scanned for malware."})
        await client.call_tool("brain_save", {"title": "Uploads", "body": "Uploads are not scanned for malware."})
        for _ in range(300):  # the server embeds new notes in the background; check compares stored vectors
            found = await client.call_tool("brain_check", {"slug": first.structured_content["slug"]})
            if found.structured_content["count"]:
                break
            await anyio.sleep(0.05)
        pair = found.structured_content["pairs"][0]
        assert pair["differences"][0]["kind"] == "negation" and "not" in found.content[0].text


def test_one_check_compares_a_bounded_amount_of_text() -> None:
    """The first pair always; then pairs while their text fits the budget; the rest are counted and named."""
    from pinky.hygiene.contradictions import Comparison

    def side(slug: str, body: str) -> dict[str, str]:
        return {"slug": slug, "path": f"{slug}.md", "title": "Port", "body": body}

    pairs = [(side(f"a{n}", "It listens on port 8080."), side(f"b{n}", "It listens on port 9090."), "similar (0.99)")
             for n in range(3)]
    done = Comparison(6, pairs, None).compare(budget=120)  # 58 characters a pair
    assert (done["count"], done["skipped"]) == (2, 1) and [p["a"] for p in done["pairs"]] == ["a0", "a1"]
    assert done["notice"].startswith("1 of 3 pairs were not compared")
    alone = Comparison(2, pairs[:1], None).compare(budget=1)
    assert (alone["count"], alone["skipped"], alone["notice"]) == (1, 0, None)

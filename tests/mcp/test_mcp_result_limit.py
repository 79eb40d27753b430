"""Every pinky-mcp tool result fits PINKY_MAX_RESULT_CHARS, text and structuredContent together, on a
brain big enough to exceed it everywhere (issue 22: brain_briefing answered 200,756 characters and
brain_related 228,767): a cut result says what it left out, and its page.next_offset brings the rest."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import pytest
from helpers import write_note
from mcp_helpers import RawServer, hermetic_config

from pinky.kb import KnowledgeBase

LIMIT = 40_000  # the default PINKY_MAX_RESULT_CHARS
NOTES = 700
ENTRIES = NOTES + 2  # and the hub, and the diary's day
HUB_BODY = 150_000  # a hand-written note may be far over what brain_save accepts


def size(result: dict[str, Any]) -> int:
    text = "".join(part["text"] for part in result["content"])
    return len(text) + len(json.dumps(result.get("structuredContent", {}), ensure_ascii=False,
                                      separators=(",", ":")))


def big_brain(root: Path) -> None:
    """NOTES notes of ~50 words, each with three tags of its own and a link to the hub (whose body is
    HUB_BODY characters), and a diary of 1,500 lines today: indexed before the server starts."""
    docs = root / "documentation"
    rng = random.Random(3)
    words = "pool timeout retry cache memory leak deploy docker token auth session search vector".split()
    for n in range(NOTES):
        body = " ".join(rng.choice(words) for _ in range(50))
        write_note(docs, f"gotcha/note-{n:04d}.md", f"---\ntitle: Sharedword note {n} about {rng.choice(words)}\n"
                   f"tags: [t{n}a, t{n}b, t{n}c]\n---\nsharedword {body}\n\nSee [[gotcha/hub]].\n")
    write_note(docs, "gotcha/hub.md", "---\ntitle: Hub\n---\n" + "".join(
        f"Line {n:06d} of the hub, the note every other one links to.\n" for n in range(HUB_BODY // 56)))
    today = __import__("datetime").date.today().isoformat()
    write_note(docs, f"diary/{today}.md", "---\ntype: diary\n---\n" + "".join(
        f"- 00:{n % 60:02d} [abcd1234] prompt: sharedword question number {n} about the pool and its timeout\n"
        for n in range(1500)))
    with KnowledgeBase(hermetic_config(root)) as kb:
        kb.reindex(embed=False)


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Any:
    root = tmp_path_factory.mktemp("big")
    big_brain(root)
    with RawServer(root, PINKY_TIER="admin", PINKY_HASH_EMBED="1") as running:
        running.initialize()
        yield running


def pages(server: RawServer, tool: str, field: str, **arguments: Any) -> tuple[list[Any], list[dict[str, Any]]]:
    """Every item of `field` (a dotted path), following page.next_offset; and each page's result."""
    items: list[Any] = []
    results = []
    offset = 0
    while True:
        result = server.call(tool, **arguments, offset=offset)
        assert not result.get("isError"), result
        results.append(result)
        value: Any = result["structuredContent"]
        for key in field.split("."):
            value = value[key]
        items += value if isinstance(value, list) else [value]
        page = result["structuredContent"].get("page")
        if page is None or page["next_offset"] is None:
            return items, results
        assert page["next_offset"] > offset
        offset = page["next_offset"]


@pytest.mark.parametrize(("tool", "arguments", "field", "expected"), [
    ("brain_related", {"slug": "gotcha/hub"}, "backlinks", NOTES),
    ("brain_briefing", {"since": "7d", "format": "full"}, "updated", NOTES + 1),  # the diary is not an update
    ("brain_briefing", {"since": "7d", "format": "full"}, "diary", 1500),
    ("brain_list", {"limit": 500}, "entries", ENTRIES),
    ("brain_search", {"query": "sharedword pool", "limit": 100, "format": "full"}, "hits", 100),
    ("brain_tags", {}, "tags", 3 * NOTES),
])
def test_a_list_too_long_for_one_result_comes_in_pages_that_fit(server: RawServer, tool: str,
                                                                arguments: dict[str, Any], field: str,
                                                                expected: int) -> None:
    items, results = pages(server, tool, field, **arguments)
    assert len(results) > 1, f"{tool} fitted in one page: the brain is too small for this test"
    for result in results:
        assert size(result) <= LIMIT, (tool, size(result))
    first = results[0]
    text, page = first["content"][0]["text"], first["structuredContent"]["page"]
    assert "result limit (PINKY_MAX_RESULT_CHARS)" in text and f"offset={page['next_offset']}" in text
    assert page["limit_chars"] == LIMIT and page["offset"] == 0
    keys = [json.dumps(item, sort_keys=True) for item in items]
    assert len(keys) == expected and len(set(keys)) == expected  # every item once, none twice


def test_a_body_too_long_for_one_result_comes_in_pieces_that_join_up(server: RawServer) -> None:
    pieces, results = pages(server, "brain_get", "body", slug="gotcha/hub")
    assert len(results) > 3 and all(size(result) <= LIMIT for result in results)
    assert "".join(pieces).count("Line ") == HUB_BODY // 56
    assert "characters of body" in results[0]["content"][0]["text"]


@pytest.mark.parametrize(("tool", "arguments"), [
    ("brain_related", {"slug": "gotcha/hub", "depth": 3}),
    ("brain_research", {"topic": "sharedword pool timeout", "max_tokens": 20_000}),
    ("brain_briefing", {"since": "7d"}),
    ("brain_search", {"query": "sharedword", "limit": 100}),
    ("brain_check", {}),
    ("brain_gaps", {"limit": 1000}),
    ("brain_stats", {}),
    ("brain_get", {"slug": "gotcha/note-0001", "timeline": True}),
    ("brain_reindex", {}),
])
def test_every_other_tool_fits_the_limit(server: RawServer, tool: str, arguments: dict[str, Any]) -> None:
    result = server.call(tool, **arguments)
    assert not result.get("isError"), result
    assert size(result) <= LIMIT, (tool, size(result))


def test_an_inline_export_over_the_limit_asks_for_a_file(server: RawServer, tmp_path: Path) -> None:
    refused = server.call("brain_export")
    assert refused["isError"] and "pass `file`" in refused["content"][0]["text"]
    written = server.call("brain_export", file=str(tmp_path / "all.jsonl"))
    assert written["structuredContent"]["count"] == ENTRIES and size(written) <= LIMIT


def test_the_limit_is_the_environment_variable(tmp_path: Path) -> None:
    (tmp_path / "documentation").mkdir()
    with RawServer(tmp_path, PINKY_MAX_RESULT_CHARS="3000") as small:
        small.initialize()
        for n in range(12):
            small.call("brain_save", title=f"Pool note {n}", body="pool timeout " * 40, type="gotcha")
        found = small.call("brain_search", query="pool timeout", limit=12, format="full")
        assert size(found) <= 3000 and found["structuredContent"]["page"]["limit_chars"] == 3000
        saved = small.call("brain_save", title="Huge", body="word " * 10_000, type="note")
        assert not saved.get("isError") and size(saved) <= 3000  # written whole; only the answer is short
        assert small.call("brain_get", slug="note/huge")["structuredContent"]["page"]["next_offset"] > 0


# --- the mechanism itself, on plain data --------------------------------------------------------------


def test_fit_pages_every_list_alike_and_says_where_the_next_page_starts() -> None:
    from pinky.mcp.budget import Pages, fit

    data = {"title": "t", "links": [f"link-{n:04d}" * 5 for n in range(300)], "backlinks": ["b" * 10] * 20}
    text, cut = fit(lambda d: f"{len(d['links'])} links", data, 5_000, Pages(("links", "backlinks"), 40, tool="x"))
    kept = len(cut["links"])
    assert 1 < kept < 300 and cut["backlinks"] == data["backlinks"][:kept]
    assert cut["page"] == {"offset": 40, "next_offset": 40 + kept, "left_out": {"links": 300 - kept},
                           "shortened": [], "limit_chars": 5_000}
    assert text.startswith(f"{kept} links") and f"offset={40 + kept}" in text
    assert len(text) + len(json.dumps(cut, ensure_ascii=False, separators=(",", ":"))) <= 5_000


def test_fit_shortens_what_no_page_can_bring_back_and_names_it() -> None:
    from pinky.mcp.budget import Pages, fit

    data = {"slug": "a", "errors": [f"line {n}: bad" for n in range(5000)], "meta": {"note": "x" * 50_000}}
    text, cut = fit(lambda d: "y" * 30_000, data, 8_000, Pages((), narrower="Ask for less."))
    assert len(text) + len(json.dumps(cut, ensure_ascii=False, separators=(",", ":"))) <= 8_000
    assert set(cut["page"]["shortened"]) == {"errors", "meta.note"} and cut["page"]["next_offset"] is None
    assert cut["slug"] == "a" and cut["errors"][0] == "line 0: bad" and text.endswith("Ask for less.]")
    small = {"slug": "a"}
    assert fit(lambda d: "fine", small, 8_000) == ("fine", small)  # what fits is left exactly as it is

"""Staleness that explains itself: age and `stale` on every hit, per-type thresholds, the fresher of two equal
texts first, `pinky verify` / brain_update verified=true, and the review list of the briefing and doctor."""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner
from helpers import write_note
from mcp_helpers import in_process

from pinky.base.staleness import DEFAULT_STALE_DAYS, age_days, is_stale, parse_stale_days
from pinky.cli.main import cli
from pinky.config import load_config
from pinky.errors import InvalidInput
from pinky.kb import KnowledgeBase
from pinky.services.doctor import run_checks

TODAY = dt.datetime.now(dt.UTC).date()


def days_ago(n: int) -> str:
    return (TODAY - dt.timedelta(days=n)).isoformat()


@pytest.fixture
def kb(project: Path) -> Iterator[KnowledgeBase]:
    base = KnowledgeBase(load_config())
    yield base
    base.close()


def test_thresholds_parse_over_the_defaults() -> None:
    assert parse_stale_days(None) == DEFAULT_STALE_DAYS
    assert DEFAULT_STALE_DAYS["guide"] > DEFAULT_STALE_DAYS["gotcha"] > DEFAULT_STALE_DAYS["status"]
    custom = parse_stale_days("gotcha=30, guide=off")
    assert custom["gotcha"] == 30 and custom["guide"] is None and custom["note"] == DEFAULT_STALE_DAYS["note"]
    assert set(parse_stale_days("off").values()) == {None}
    for bad in ("gotcha", "nope=3", "gotcha=-1", "gotcha=soon"):
        with pytest.raises(InvalidInput, match="PINKY_STALE_DAYS"):
            parse_stale_days(bad)


def test_age_counts_from_last_verified_else_created() -> None:
    assert age_days(days_ago(10), days_ago(400), TODAY) == 10
    assert age_days(None, days_ago(400) + "T10:00:00+00:00", TODAY) == 400
    assert age_days(None, None, TODAY) is None
    thresholds = parse_stale_days(None)
    assert is_stale("gotcha", 181, thresholds) and not is_stale("guide", 181, thresholds)
    assert not is_stale("diary", 5000, thresholds) and not is_stale("gotcha", None, thresholds)


def test_hits_carry_age_and_stale_by_type(kb: KnowledgeBase, project: Path) -> None:
    docs = project / "documentation"
    old = f"last_verified: {days_ago(200)}"
    write_note(docs, "gotcha/old-trap.md", f"---\ntitle: Old trap\n{old}\n---\nkafka offsets\n")
    write_note(docs, "guide/old-guide.md", f"---\ntitle: Old guide\n{old}\n---\nkafka setup\n")
    kb.reindex()
    hits = {h.slug: h for h in kb.search("kafka").hits}
    assert hits["gotcha/old-trap"].stale and hits["gotcha/old-trap"].age_days == 200
    assert not hits["guide/old-guide"].stale and hits["guide/old-guide"].age_days == 200
    listed = {e["slug"]: e["stale"] for e in kb.list_entries()}
    assert listed == {"gotcha/old-trap": True, "guide/old-guide": False}
    review = kb.hygiene.needs_review()
    assert review["stale_count"] == 1 and [i["slug"] for i in review["stale"]] == ["gotcha/old-trap"]
    assert kb.briefing("1d")["needs_review"]["stale"][0]["slug"] == "gotcha/old-trap"
    assert "1 stale" in next(c.detail for c in run_checks(kb) if c.name == "knowledge review")
    verified = kb.hygiene.verify_entry("old-trap")
    assert verified.last_verified == TODAY.isoformat()
    assert not next(h for h in kb.search("kafka").hits if h.slug == "gotcha/old-trap").stale
    assert kb.hygiene.needs_review()["stale_count"] == 0


def test_staleness_turns_off(project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    write_note(project / "documentation", "gotcha/old.md", f"---\nlast_verified: {days_ago(999)}\n---\nredis\n")
    monkeypatch.setenv("PINKY_STALE_DAYS", "off")
    with KnowledgeBase(load_config()) as kb:
        kb.reindex()
        assert [h.stale for h in kb.search("redis").hits] == [False]


def test_of_equal_texts_the_fresher_ranks_first(kb: KnowledgeBase, project: Path) -> None:
    """The age fixture: pairs of identical notes that differ only in last_verified. Scores tie exactly,
    so without the tie-break the order is the entry ids' (a hash): half the pairs would put the older first."""
    docs = project / "documentation"
    topics = ["kafka offsets", "redis eviction", "nginx buffering", "postgres vacuum", "celery retries",
              "docker layers", "terraform state", "grpc deadlines", "s3 consistency", "jwt expiry"]
    for n, topic in enumerate(topics):
        body = f"How {topic} behaves in production and what to do about it.\n"
        write_note(docs, f"note/{n}-a.md", f"---\ntitle: {topic}\nlast_verified: {days_ago(300 if n % 2 else 3)}\n"
                   f"---\n{body}")
        write_note(docs, f"note/{n}-b.md", f"---\ntitle: {topic}\nlast_verified: {days_ago(3 if n % 2 else 300)}\n"
                   f"---\n{body}")
    kb.reindex()
    for topic in topics:
        top, second = kb.search(topic, limit=2).hits
        assert top.score == second.score and top.age_days == 3 and second.age_days == 300, topic


def test_cli_verify(kb: KnowledgeBase, project: Path) -> None:
    write_note(project / "documentation", "gotcha/old.md", f"---\nlast_verified: {days_ago(400)}\n---\nredis\n")
    kb.reindex()
    assert "stale: unverified for 400 days" in CliRunner().invoke(cli, ["search", "redis"]).output
    assert "(stale: 400 days)" in CliRunner().invoke(cli, ["list"]).output
    done = CliRunner().invoke(cli, ["verify", "old"])
    assert done.exit_code == 0 and f"last_verified {TODAY.isoformat()}" in done.output
    assert "stale" not in CliRunner().invoke(cli, ["search", "redis"]).output


@pytest.mark.anyio
async def test_mcp_stale_hit_verified_by_brain_update(tmp_path: Path) -> None:
    write_note(tmp_path / "documentation", "gotcha/old.md", f"---\nlast_verified: {days_ago(400)}\n---\nredis pool\n")
    async with in_process(tmp_path, "write") as (client, runtime):
        runtime.caught_up.wait(30)
        hit = (await client.call_tool("brain_search", {"query": "redis pool"})).structured_content["hits"][0]
        assert hit["stale"] is True and hit["age_days"] == 400
        briefing = await client.call_tool("brain_briefing", {"since": "1d"})
        assert briefing.structured_content["needs_review"]["stale"][0]["slug"] == "gotcha/old"
        assert "Needs re-verification" in briefing.content[0].text
        version = (await client.call_tool("brain_get", {"slug": "gotcha/old"})).structured_content["version"]
        updated = await client.call_tool("brain_update", {"slug": "gotcha/old", "expected_version": version,
                                                          "verified": True})
        assert updated.structured_content["last_verified"] == TODAY.isoformat()
        hit = (await client.call_tool("brain_search", {"query": "redis pool"})).structured_content["hits"][0]
        assert hit["stale"] is False

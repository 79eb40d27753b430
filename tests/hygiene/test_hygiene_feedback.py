"""Feedback and pruning: verdicts recorded against the search that returned the hit, flags for review in the
briefing and doctor until the note is fixed, prune listing and archiving what nobody uses, restore bringing it back,
PINKY_TELEMETRY=0 recording nothing."""

from __future__ import annotations

import datetime as dt
import os
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner
from helpers import usage_watched_since, write_note
from mcp_helpers import in_process

from pinky.cli.main import cli
from pinky.config import load_config
from pinky.errors import InvalidInput
from pinky.kb import KnowledgeBase
from pinky.services.doctor import run_checks
from pinky.store import readonly

OLD = "2025-01-10"


@pytest.fixture
def kb(project: Path) -> Iterator[KnowledgeBase]:
    base = KnowledgeBase(load_config())
    yield base
    base.close()


def old_note(project: Path, rel: str, text: str) -> Path:
    """A note created, verified and last changed long ago."""
    path = write_note(project / "documentation", rel, f"---\ncreated: {OLD}\nlast_verified: {OLD}\n---\n{text}\n")
    stamp = time.mktime((2025, 1, 10, 12, 0, 0, 0, 0, -1))
    os.utime(path, (stamp, stamp))
    return path


def test_feedback_is_recorded_against_the_search_and_flags_until_fixed(kb: KnowledgeBase, project: Path) -> None:
    old_note(project, "gotcha/trap.md", "kafka consumer offsets reset")
    kb.reindex()
    kb.search("kafka offsets", record_usage=True)
    done = kb.hygiene.feedback("trap", "outdated")
    assert done["recorded"] and done["flagged"] and done["query"] == "kafka offsets"
    assert kb.hygiene.feedback("trap", "useful", query="consumer reset")["query"] == "consumer reset"
    flagged = kb.hygiene.needs_review()["flagged"]
    assert [(i["slug"], i["verdict"], i["query"]) for i in flagged] == [("gotcha/trap", "outdated", "kafka offsets")]
    assert kb.briefing("1d")["needs_review"]["flagged"][0]["slug"] == "gotcha/trap"
    conn = readonly.connect_ro(str(kb.config.db_path))  # what the hooks' session-start digest can read
    assert conn is not None
    today = dt.datetime.now(dt.UTC).date().isoformat()
    assert readonly.flagged_entries(conn, 5) == [("gotcha/trap", "outdated", today)]
    conn.close()
    review = next(c for c in run_checks(kb) if c.name == "knowledge review")
    assert review.status == "warn" and "gotcha/trap (outdated)" in review.detail
    kb.hygiene.verify_entry("trap")  # checked: the flag is settled
    assert kb.hygiene.needs_review()["flagged"] == []
    with pytest.raises(InvalidInput, match="verdict must be one of"):
        kb.hygiene.feedback("trap", "meh")


def test_prune_lists_archives_and_restore_brings_back(kb: KnowledgeBase, project: Path) -> None:
    old_note(project, "gotcha/unused.md", "nobody reads this")
    old_note(project, "gotcha/used.md", "redis eviction policy")
    old_note(project, "gotcha/liked.md", "liked but never searched")
    old_note(project, "diary/2025-01-10.md", "- 09:00 history is kept")
    usage_watched_since(project / "documentation")
    kb.save("Fresh", "just written")
    kb.reindex()
    kb.search("redis eviction", record_usage=True)
    kb.hygiene.feedback("liked", "useful")
    listed = kb.hygiene.prune(6)
    assert [c["slug"] for c in listed["candidates"]] == ["gotcha/unused"] and listed["archived"] == []
    assert (project / "documentation/gotcha/unused.md").exists()  # a dry run touches nothing
    done = kb.hygiene.prune(6, apply=True)
    assert [a["slug"] for a in done["archived"]] == ["gotcha/unused"]
    assert [a["restore"] for a in done["archived"]] == ["pinky-brain restore gotcha/unused"]
    assert Path(done["archived"][0]["archived_to"]).parent == project / "documentation/.archive/gotcha"
    assert kb.search("nobody reads").hits == []
    kb.restore("gotcha/unused")
    assert [h.slug for h in kb.search("nobody reads").hits] == ["gotcha/unused"]
    with pytest.raises(InvalidInput, match="months"):
        kb.hygiene.prune(0)


def test_telemetry_off_records_nothing_and_prune_refuses_to_apply(project: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PINKY_TELEMETRY", "0")
    old_note(project, "gotcha/trap.md", "kafka offsets")
    with KnowledgeBase(load_config()) as kb:
        kb.reindex()
        kb.search("kafka", record_usage=True)
        assert kb.stats()["usage_events"] == 0
        assert kb.hygiene.feedback("trap", "wrong")["recorded"] is False
        assert kb.hygiene.needs_review()["flagged"] == []
        assert kb.hygiene.prune(6)["telemetry"] is False
        with pytest.raises(InvalidInput, match="PINKY_TELEMETRY=0"):
            kb.hygiene.prune(6, apply=True)


def test_cli_feedback_and_prune(kb: KnowledgeBase, project: Path) -> None:
    old_note(project, "gotcha/trap.md", "kafka offsets")
    usage_watched_since(project / "documentation")
    kb.reindex()
    runner = CliRunner()
    said = runner.invoke(cli, ["feedback", "trap", "wrong", "--query", "kafka"])
    assert said.exit_code == 0 and "flagged for review" in said.output
    assert runner.invoke(cli, ["feedback", "trap", "meh"]).exit_code == 2
    listed = runner.invoke(cli, ["prune", "--months", "3"])
    assert listed.exit_code == 0 and "would archive 1 entries" in listed.output and "gotcha/trap" in listed.output
    applied = runner.invoke(cli, ["prune", "--months", "3", "--apply"])
    assert "archived 1 entries" in applied.output and not (project / "documentation/gotcha/trap.md").exists()


@pytest.mark.anyio
async def test_mcp_feedback_after_a_search(tmp_path: Path) -> None:
    async with in_process(tmp_path, "write") as (client, _):
        saved = (await client.call_tool("brain_save", {"title": "Pool", "body": "pool size is 10"})).structured_content
        await client.call_tool("brain_search", {"query": "pool size"})
        said = await client.call_tool("brain_feedback", {"slug": saved["slug"], "verdict": "outdated"})
        assert said.structured_content == {"slug": saved["slug"], "verdict": "outdated", "recorded": True,
                                           "flagged": True, "query": "pool size"}
        briefing = await client.call_tool("brain_briefing", {"since": "1d"})
        assert "Flagged wrong or outdated" in briefing.content[0].text
        bad = await client.call_tool("brain_feedback", {"slug": saved["slug"], "verdict": "meh"})
        assert bad.is_error

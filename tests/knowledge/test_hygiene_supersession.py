"""Supersession (key / subject) and validity in time (valid_from / valid_until, `at`): real files, a real index,
the CLI and the MCP server."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner
from helpers import write_note
from mcp_helpers import in_process

from pinky.base.dates import now_utc
from pinky.cli.main import cli
from pinky.config import load_config
from pinky.errors import InvalidInput
from pinky.kb import KnowledgeBase
from pinky.text.markdown import split_frontmatter


@pytest.fixture
def kb(project: Path) -> Iterator[KnowledgeBase]:
    base = KnowledgeBase(load_config())
    yield base
    base.close()


def front(kb: KnowledgeBase, slug: str) -> dict:
    return split_frontmatter(kb.file_of(slug).read_text(encoding="utf-8"))[0]


def test_a_newer_entry_with_the_same_key_supersedes_the_older(kb: KnowledgeBase) -> None:
    old = kb.save("CI runs Node 18", "The CI pipeline uses node 18.", key="ci.node-version")
    new = kb.save("CI runs Node 20", "The CI pipeline uses node 20.", key=" ci.node-version ")
    assert kb.similar(new.slug, threshold=0.0) == []  # the entry it replaced is not a duplicate to merge
    today = now_utc().date().isoformat()
    assert front(kb, new.slug)["supersedes"] == old.slug and front(kb, new.slug)["valid_from"] == today
    assert front(kb, old.slug)["superseded_by"] == new.slug and front(kb, old.slug)["valid_until"] == today
    assert [h.slug for h in kb.search("CI pipeline node").hits] == [new.slug]
    every = kb.search("CI pipeline node", include_superseded=True).hits
    assert {h.slug: h.superseded_by for h in every} == {new.slug: None, old.slug: new.slug}
    assert [e["slug"] for e in kb.list_entries()] == [new.slug]
    assert {e["slug"] for e in kb.list_entries(include_superseded=True)} == {old.slug, new.slug}
    third = kb.save("CI runs Node 22", "The CI pipeline uses node 22.", key="ci.node-version")
    chain = kb.hygiene.chain(old.slug)
    assert [v["slug"] for v in chain] == [old.slug, new.slug, third.slug]
    assert [v["current"] for v in chain] == [False, False, True]
    assert [v["slug"] for v in kb.hygiene.chain(third.slug)] == [old.slug, new.slug, third.slug]


def test_a_subject_makes_a_status_and_scopes_do_not_supersede_each_other(kb: KnowledgeBase) -> None:
    project_status = kb.save("Deploys are green", "All deploys pass.", subject="deploy pipeline")
    assert project_status.type == "status" and project_status.meta["subject"] == "deploy pipeline"
    global_status = kb.save("Deploys are red", "Deploys fail at the smoke test.", subject="Deploy  pipeline",
                            scope="global")
    assert "supersedes" not in global_status.meta  # another scope: another fact
    newer = kb.save("Deploys are green again", "Fixed the smoke test.", subject="deploy pipeline")
    assert newer.meta["supersedes"] == project_status.slug
    with pytest.raises(InvalidInput, match="key must be one line"):
        kb.save("Bad", "body", key="two\nlines")


def test_validity_in_time_answers_what_we_believed_on_a_day(kb: KnowledgeBase, project: Path) -> None:
    docs = project / "documentation"
    write_note(docs, "note/port-old.md", "---\ntitle: API port 8080\nkey: api.port\ncreated: 2026-01-10\n"
               "valid_until: 2026-03-15\nsuperseded_by: note/port-new\n---\nThe API listens on port 8080.\n")
    write_note(docs, "note/port-new.md", "---\ntitle: API port 9090\nkey: api.port\ncreated: 2026-03-15\n"
               "valid_from: 2026-03-15\nsupersedes: note/port-old\n---\nThe API listens on port 9090.\n")
    write_note(docs, "note/expired.md",
               "---\ntitle: API freeze\nvalid_until: 2026-02-01\n---\nThe API port is frozen.\n")
    kb.reindex()
    assert [h.slug for h in kb.search("API port", at="2026-03-01").hits] == ["note/port-old"]
    assert {h.slug for h in kb.search("API port", at="2026-01-20").hits} == {"note/port-old", "note/expired"}
    assert [h.slug for h in kb.search("API port", at="2026-04-01").hits] == ["note/port-new"]
    assert [h.slug for h in kb.search("API port").hits] == ["note/port-new"]  # expired and superseded left out
    assert {e["slug"] for e in kb.list_entries(at="2026-03-01")} == {"note/port-old"}
    assert [v["slug"] for v in kb.hygiene.chain("port-new")] == ["note/port-old", "note/port-new"]
    with pytest.raises(InvalidInput, match="at="):
        kb.search("API port", at="yesterday-ish")


def test_cli_save_key_search_all_and_history(project: Path) -> None:
    runner = CliRunner()
    first = runner.invoke(cli, ["save", "-t", "Node 18 in CI", "--key", "ci.node"], input="node 18 in ci\n")
    assert first.exit_code == 0, first.output
    second = runner.invoke(cli, ["save", "-t", "Node 20 in CI", "--key", "ci.node"], input="node 20 in ci\n")
    assert "supersedes: note/node-18-in-ci" in second.output
    assert "node-18" not in runner.invoke(cli, ["search", "node ci"]).output
    assert "superseded by note/node-20-in-ci" in runner.invoke(cli, ["search", "node ci", "--all"]).output
    history = runner.invoke(cli, ["history", "node-20-in-ci"]).output.splitlines()
    assert "note/node-18-in-ci" in history[0] and history[1].startswith("current") and "node-20" in history[1]
    assert "superseded by: note/node-20-in-ci" in runner.invoke(cli, ["get", "node-18-in-ci"]).output


@pytest.mark.anyio
async def test_mcp_save_with_key_and_search_at(tmp_path: Path) -> None:
    async with in_process(tmp_path, "write") as (client, _):
        old = (await client.call_tool("brain_save", {"title": "Pool size 10", "body": "db pool size is 10",
                                                     "key": "db.pool-size"})).structured_content
        new = await client.call_tool("brain_save", {"title": "Pool size 20", "body": "db pool size is 20",
                                                    "key": "db.pool-size"})
        assert new.structured_content["supersedes"] == [old["slug"]] and "Supersedes" in new.content[0].text
        found = await client.call_tool("brain_search", {"query": "db pool size"})
        assert [h["slug"] for h in found.structured_content["hits"]] == [new.structured_content["slug"]]
        every = await client.call_tool("brain_search", {"query": "db pool size", "include_superseded": True})
        assert {h.get("superseded_by") for h in every.structured_content["hits"]} == {
            None, new.structured_content["slug"]}
        listed = await client.call_tool("brain_list", {"include_superseded": True})
        assert listed.structured_content["count"] == 2
        before = await client.call_tool("brain_search", {"query": "db pool size", "at": "2000-01-01"})
        assert before.structured_content["count"] == 0  # neither existed then
        today = now_utc().date().isoformat()
        now = await client.call_tool("brain_list", {"at": today})
        assert [e["slug"] for e in now.structured_content["entries"]] == [new.structured_content["slug"]]


def test_the_prompt_recall_hook_leaves_superseded_entries_out(kb: KnowledgeBase) -> None:
    from pinky.search.recall import candidates
    from pinky.store.readonly import connect_ro

    old = kb.save("Grafana retention", "Grafana keeps dashboards history for 30 days.", key="grafana.retention")
    new = kb.save("Grafana retention", "Grafana keeps dashboards history for 90 days.", key="grafana.retention")
    conn = connect_ro(str(kb.config.db_path))
    assert conn is not None
    ids = {r.entry_id for r in candidates(conn, "grafana dashboards history retention")}
    conn.close()
    assert ids == {kb.db.conn.execute("SELECT id FROM entry WHERE slug = ?", (new.slug,)).fetchone()[0]}
    assert old.slug != new.slug


def test_deleting_the_current_version_makes_the_one_before_current_again(kb: KnowledgeBase) -> None:
    old = kb.save("CI runs Node 18", "The CI pipeline uses node 18.", key="ci.node-version")
    before = kb.file_of(old.slug).read_bytes()
    new = kb.save("CI runs Node 20", "The CI pipeline uses node 20.", key="ci.node-version")
    superseded = kb.file_of(old.slug).read_bytes()
    kb.delete(new.slug, "wrong: CI still runs node 18")
    assert kb.file_of(old.slug).read_bytes() == before  # superseded_by and valid_until gone, nothing else
    for _ in range(2):  # the markdown says so: a full rebuild of the index agrees
        assert [h.slug for h in kb.search("CI pipeline node").hits] == [old.slug]
        assert [e["slug"] for e in kb.list_entries()] == [old.slug]
        assert [v["current"] for v in kb.hygiene.chain(old.slug)] == [True]
        kb.reindex(full=True)
    kb.restore(new.slug)  # the deleted version comes back as the current one
    assert kb.file_of(old.slug).read_bytes() == superseded
    assert [h.slug for h in kb.search("CI pipeline node").hits] == [new.slug]
    assert [(v["slug"], v["current"]) for v in kb.hygiene.chain(old.slug)] == [(old.slug, False), (new.slug, True)]


def test_only_the_current_version_hands_its_place_back(kb: KnowledgeBase) -> None:
    first = kb.save("Deploys are red", "Smoke test fails.", subject="deploy pipeline")
    second = kb.save("Deploys are amber", "Smoke test flaky.", subject="deploy pipeline")
    third = kb.save("Deploys are green", "Smoke test fixed.", subject="deploy pipeline")
    kb.delete(third.slug, "too early")
    assert [e["slug"] for e in kb.list_entries()] == [second.slug]  # the first stays superseded by the second
    assert front(kb, first.slug)["superseded_by"] == second.slug
    kb.delete(second.slug, "never true")
    assert [e["slug"] for e in kb.list_entries()] == [first.slug]
    fourth = kb.save("Deploys are green", "Smoke test fixed for real.", subject="deploy pipeline")
    assert fourth.meta["supersedes"] == first.slug
    kb.restore(second.slug)  # superseded meanwhile by the fourth: the restored one does not take it back
    assert front(kb, first.slug)["superseded_by"] == fourth.slug

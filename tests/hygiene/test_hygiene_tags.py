"""Tags as a vocabulary: counted without case or surrounding space, normalised on save, renamed in every file."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner
from helpers import write_note
from mcp_helpers import in_process

from pinky.cli.main import cli
from pinky.config import load_config
from pinky.errors import InvalidInput
from pinky.hygiene.tags import renamed_tags
from pinky.kb import KnowledgeBase
from pinky.text.markdown import split_frontmatter


@pytest.fixture
def kb(project: Path) -> Iterator[KnowledgeBase]:
    base = KnowledgeBase(load_config())
    yield base
    base.close()


def test_renamed_tags_replaces_only_the_tag_matched_without_case() -> None:
    assert renamed_tags(["CI", "deploy"], "ci", "build") == ["build", "deploy"]
    assert renamed_tags("ci, Build", "ci", "build") == ["build", "Build"]  # a list as text; hand-written case kept
    assert renamed_tags(["deploy"], "ci", "build") is None
    assert renamed_tags(None, "ci", "build") is None


def test_tags_are_normalised_on_save_and_update_and_counted_together(kb: KnowledgeBase, project: Path) -> None:
    first = kb.save("One", "body", tags=["  Postgres ", "CI   Cache"])
    assert first.tags == ["postgres", "ci cache"]
    write_note(project / "documentation", "note/hand.md", "---\ntitle: Hand\ntags: [POSTGRES, deploy]\n---\nbody\n")
    kb.reindex()
    assert kb.hygiene.tags() == [{"tag": "postgres", "count": 2}, {"tag": "ci cache", "count": 1},
                                 {"tag": "deploy", "count": 1}]
    assert kb.update(first.slug, first.version, tags=["DEPLOY"]).tags == ["deploy"]
    assert {h["slug"] for h in kb.list_entries(tags=["Postgres"])} == {"note/hand"}  # filters ignore case


def test_rename_rewrites_every_note_and_skips_a_malformed_one(kb: KnowledgeBase, project: Path) -> None:
    docs = project / "documentation"
    saved = kb.save("Saved", "body", tags=["postgresql", "db"])
    hand = write_note(docs, "note/hand.md", "---\ntitle: Hand\ntags: PostgreSQL, postgres\n---\nHand body\n")
    kb.reindex()
    done = kb.hygiene.rename_tag("PostgreSQL", "postgres")
    assert done["renamed"] == ["note/hand", saved.slug] and done["skipped"] == []
    meta, body, _, _ = split_frontmatter(hand.read_text(encoding="utf-8"))
    assert meta["tags"] == ["postgres"] and body == "Hand body\n"
    assert kb.get(saved.slug).tags == ["postgres", "db"]
    assert {t["tag"]: t["count"] for t in kb.hygiene.tags()} == {"postgres": 2, "db": 1}
    with pytest.raises(InvalidInput):
        kb.hygiene.rename_tag("postgres", " Postgres ")


def test_cli_lists_and_renames(kb: KnowledgeBase, project: Path) -> None:
    kb.save("One", "body", tags=["old-name"])
    runner = CliRunner()
    listed = runner.invoke(cli, ["tags"])
    assert listed.exit_code == 0 and "old-name" in listed.output
    renamed = runner.invoke(cli, ["tags", "rename", "old-name", "new-name"])
    assert renamed.exit_code == 0, renamed.output
    assert "in 1 notes" in renamed.output
    assert "new-name" in runner.invoke(cli, ["tags", "--json"]).output


@pytest.mark.anyio
async def test_mcp_brain_tags(tmp_path: Path) -> None:
    async with in_process(tmp_path, "write") as (client, _):
        await client.call_tool("brain_save", {"title": "A", "body": "a", "tags": ["Redis", "cache"]})
        await client.call_tool("brain_save", {"title": "B", "body": "b", "tags": ["redis"]})
        found = await client.call_tool("brain_tags", {})
        assert found.structured_content["tags"][0] == {"tag": "redis", "count": 2}
        assert "redis" in found.content[0].text

"""Every operation that rewrites a note's frontmatter changes the lines of the fields it changes and not one
other byte: comments, quoting, list style, key order, blank lines, CRLF, a BOM and the body stay as written.
Real files, a real index, the library and the CLI."""

from __future__ import annotations

import difflib
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner
from helpers import console_script, write_note

from pinky.cli.main import cli
from pinky.config import load_config
from pinky.kb import KnowledgeBase

# A note kept by hand: comments, a quoted title with a trailing comment, a block list indented by two,
# a plain date, a flow list, blank lines, and a body with trailing spaces.
STYLED = """---
# Kept by hand: the team's pool gotcha
title:   "Pool hangs on exit"   # as the runbook says
type: gotcha
tags:
  - Postgres   # the engine
  - pool

key: db.pool-exit
last_verified: 2026-01-02
links: [{to: note/runbook, rel: relates, since: 2026-01-01}]
---

Call `pool.close(timeout=5)` before exit.  
"""


@pytest.fixture
def kb(project: Path) -> Iterator[KnowledgeBase]:
    docs = project / "documentation"
    write_note(docs, "note/runbook.md", "---\ntitle: Runbook\n---\nHow we run things.\n")
    write_note(docs, "note/deploy.md", "---\ntitle: Deploy\n---\nHow we deploy.\n")
    base = KnowledgeBase(load_config())
    base.reindex()
    yield base
    base.close()


def changes(before: str, after: str) -> tuple[list[str], list[str]]:
    """The lines removed from `before` and added in `after` (line ends kept)."""
    old, new = before.splitlines(keepends=True), after.splitlines(keepends=True)
    removed: list[str] = []
    added: list[str] = []
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(a=old, b=new, autojunk=False).get_opcodes():
        if tag != "equal":
            removed += old[i1:i2]
            added += new[j1:j2]
    return removed, added


def styled(project: Path, kb: KnowledgeBase, text: str = STYLED) -> Path:
    path = write_note(project / "documentation", "gotcha/pool.md", "")
    path.write_bytes(text.encode("utf-8"))
    kb.reindex()
    return path


def test_verify_rewrites_only_last_verified(project: Path, kb: KnowledgeBase) -> None:
    path = styled(project, kb)
    kb.hygiene.verify_entry("gotcha/pool")
    removed, added = changes(STYLED, path.read_text())
    assert removed == ["last_verified: 2026-01-02\n"] and len(added) == 1 and added[0].startswith("last_verified: ")


def test_update_keeps_the_quoting_and_comment_of_a_changed_title(project: Path, kb: KnowledgeBase) -> None:
    path = styled(project, kb)
    kb.update("gotcha/pool", kb.get("gotcha/pool").version, title="Pool hangs at shutdown")
    assert changes(STYLED, path.read_text()) == (['title:   "Pool hangs on exit"   # as the runbook says\n'],
                                                 ['title:   "Pool hangs at shutdown"   # as the runbook says\n'])
    kb.update("gotcha/pool", kb.get("gotcha/pool").version, tags=["postgres", "pool", "shutdown"],
              questions=["why does the pool hang?"])
    removed, added = changes(STYLED, path.read_text())
    assert removed == ['title:   "Pool hangs on exit"   # as the runbook says\n', "  - Postgres   # the engine\n"]
    assert added[1:] == ["  - postgres\n", "  - shutdown\n", "questions: ['why does the pool hang?']\n"]


def test_a_new_body_keeps_the_frontmatter_as_written(project: Path, kb: KnowledgeBase) -> None:
    path = styled(project, kb)
    kb.update("gotcha/pool", kb.get("gotcha/pool").version, body="Close the pool first.")
    assert changes(STYLED, path.read_text()) == (["Call `pool.close(timeout=5)` before exit.  \n"],
                                                 ["Close the pool first.\n"])


def test_a_tag_rename_rewrites_only_that_tag(project: Path, kb: KnowledgeBase) -> None:
    path = styled(project, kb)
    assert kb.hygiene.rename_tag("postgres", "postgresql")["renamed"] == ["gotcha/pool"]
    assert changes(STYLED, path.read_text()) == (["  - Postgres   # the engine\n"], ["  - postgresql\n"])


def test_link_unlink_and_a_rename_rewrite_only_the_links_line(project: Path, kb: KnowledgeBase) -> None:
    path = styled(project, kb)
    old_links = "links: [{to: note/runbook, rel: relates, since: 2026-01-01}]\n"
    kb.graph.link("gotcha/pool", "note/deploy", rel="depends_on", since="2026-02-01")
    removed, added = changes(STYLED, path.read_text())
    assert removed == [old_links] and added == [
        "links: [{to: note/runbook, rel: relates, since: 2026-01-01}, "
        "{to: note/deploy, rel: depends_on, since: '2026-02-01'}]\n"]
    kb.graph.unlink("gotcha/pool", "note/deploy", until="2026-03-01")
    kb.graph.move("note/runbook", "note/operations")
    removed, added = changes(STYLED, path.read_text())
    assert removed == [old_links] and len(added) == 1 and added[0].startswith("links: [{to: note/operations, rel:")
    assert "until: '2026-03-01'" in added[0]


def test_supersession_adds_two_lines_and_deleting_the_new_version_takes_them_out(project: Path,
                                                                               kb: KnowledgeBase) -> None:
    path = styled(project, kb)
    newer = kb.save("Pool exit", "Fixed in driver 3.", key="db.pool-exit")
    removed, added = changes(STYLED, path.read_text())
    assert removed == [] and [line.split(":")[0] for line in added] == ["superseded_by", "valid_until"]
    kb.delete(newer.slug, "the fix was reverted")
    assert path.read_text() == STYLED


@pytest.mark.parametrize("text", [STYLED, "\ufeff" + STYLED, STYLED.replace("\n", "\r\n")],
                         ids=["lf", "bom", "crlf"])
def test_delete_and_restore_through_the_cli_give_back_every_byte(project: Path, kb: KnowledgeBase,
                                                                 text: str) -> None:
    path = styled(project, kb, text)
    run = [*console_script("pinky")]
    deleted = subprocess.run([*run, "delete", "gotcha/pool", "--reason", "moved to the runbook"], cwd=project,
                             capture_output=True, text=True, timeout=120)
    assert deleted.returncode == 0, deleted.stderr
    archived = next((project / "documentation/.archive/gotcha").iterdir()).read_bytes()
    removed, added = changes(text.lstrip("\ufeff"), archived.decode().lstrip("\ufeff"))
    assert removed == [] and [line.split(":")[0] for line in added] == ["archived_at", "archive_reason"]
    restored = subprocess.run([*run, "restore", "gotcha/pool"], cwd=project, capture_output=True, text=True,
                              timeout=120)
    assert restored.returncode == 0, restored.stderr
    assert path.read_bytes() == text.encode("utf-8")


def test_cli_verify_keeps_crlf_and_a_bom(project: Path, kb: KnowledgeBase) -> None:
    text = "\ufeff" + STYLED.replace("\n", "\r\n")
    path = styled(project, kb, text)
    result = CliRunner().invoke(cli, ["verify", "gotcha/pool"])
    assert result.exit_code == 0, result.output
    after = path.read_bytes().decode("utf-8")
    removed, added = changes(text, after)
    assert removed == ["last_verified: 2026-01-02\r\n"] and added[0].endswith("\r\n") and after.startswith("\ufeff")

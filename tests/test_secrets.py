"""Secrets never reach a note on disk through pinky, and never show in what pinky displays.

Every write path (save, update, delete's reason, the rollup) redacts what it writes and says what it
replaced (`redacted`); `get` and search snippets redact on display, for notes written by hand or
before a format was known. The sync paths are tested in test_sync_secrets.py.
"""

from __future__ import annotations

import json
import os
import random
import string
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from helpers import console_script, write_note
from mcp_helpers import in_process

from pinky.config import load_config
from pinky.kb import KnowledgeBase
from pinky.search.hybrid import snippet


def fake(n: int, seed: int) -> str:
    rng = random.Random(seed)
    return "".join(rng.choice(string.ascii_letters + string.digits) for _ in range(n - 3)) + "a1Z"


TOKEN = "ghp_" + fake(36, 1)
PASSWORD = "Tr0ub4dor&3x"


@pytest.fixture
def kb(project: Path) -> Iterator[KnowledgeBase]:
    base = KnowledgeBase(load_config())
    yield base
    base.close()


def all_text(root: Path) -> str:
    return "\n".join(p.read_text(encoding="utf-8") for p in root.rglob("*.md"))


def test_save_writes_no_secret_and_says_what_it_replaced(kb: KnowledgeBase, project: Path) -> None:
    entry = kb.save(f"Deploy with {TOKEN}", f"Push with {TOKEN}.\nThe db password is {PASSWORD}\n", type="gotcha")
    on_disk = all_text(project / "documentation")
    assert TOKEN not in on_disk and PASSWORD not in on_disk and TOKEN not in entry.path
    assert "[REDACTED:github-token]" in on_disk
    assert entry.redacted == ["github-token", "password"]
    assert kb.get(entry.slug).redacted == []  # nothing left to hide


def test_update_redacts_the_new_body_and_an_old_secret_kept_in_place(kb: KnowledgeBase, project: Path) -> None:
    path = write_note(project / "documentation", "note/old.md", f"---\ntitle: Old\n---\ntoken {TOKEN}\n")
    kb.reindex()
    version = kb.get("old").version
    entry = kb.update("old", version, tags=["x"])  # the body is kept: its secret goes anyway
    assert TOKEN not in path.read_text(encoding="utf-8") and entry.redacted == ["github-token"]
    entry = kb.update("old", entry.version, body=f"DB_PASSWORD={PASSWORD}")
    assert PASSWORD not in path.read_text(encoding="utf-8") and entry.redacted == ["secret"]


def test_a_secret_pasted_as_a_tag_or_a_path_is_redacted_too(kb: KnowledgeBase, project: Path) -> None:
    entry = kb.save("Tagged", "body", tags=["ci", TOKEN], files=[f"deploy/{TOKEN}.sh"])
    assert TOKEN not in all_text(project / "documentation") and entry.redacted == ["github-token"]
    assert "ci" in entry.tags and TOKEN not in " ".join(entry.tags + entry.files)
    entry = kb.update(entry.slug, entry.version, tags=[f"token {TOKEN}"])
    assert TOKEN not in all_text(project / "documentation") and entry.redacted == ["github-token"]


def test_a_secret_in_a_key_or_subject_is_redacted(kb: KnowledgeBase, project: Path) -> None:
    entry = kb.save("Deploy token", "body", key=f"deploy.{TOKEN}", subject=f"deploy with {TOKEN}")
    assert TOKEN not in all_text(project / "documentation") and entry.redacted == ["github-token"]
    assert entry.meta["key"] == "deploy.[REDACTED:github-token]"


def test_import_writes_a_note_with_a_secret_as_it_is_and_says_so(kb: KnowledgeBase, project: Path) -> None:
    text = f"---\ntitle: Leak\ntoken: {TOKEN}\n---\npush with {TOKEN}\n"
    line = json.dumps({"pinky_export": 1, "root": "project", "path": "note/leak.md", "text": text})
    report = kb.hygiene.import_lines([line], embed=False)
    assert report["secrets"] == [{"slug": "note/leak", "kinds": ["github-token"]}] and report["redacted"] == []
    assert (project / "documentation" / "note" / "leak.md").read_text(encoding="utf-8") == text
    assert TOKEN not in kb.get("note/leak").body


def test_save_keeps_digests_cids_and_test_vectors_and_says_why_it_redacted(kb: KnowledgeBase, project: Path) -> None:
    """Issue 22: a SHA-256 in prose, an IPFS CID and a base64 test vector were written as [REDACTED:…]."""
    body = ("The release tarball's SHA-256 is e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855.\n"
            "Pinned on IPFS as QmYwAPJzv5CZsnA625s3Xf2nemtYgPpHdWEz79ojWnPbdG and "
            "bafybeigdyrzt5sfp7udm7hu76uh7y26nf3efuylqabf3oclgtqy55fbzdi.\n"
            "Test vector: the expected output is 9QEfOgWNkEcFXgy0BCyPZpN7VnKkL8ykvyQDgkhkUKo=\n"
            "request 550e8400-e29b-41d4-a716-446655440000, commit 3f786850e387550fdab836ed7e6dc881de23001b\n")
    entry = kb.save("Release checks", body)
    assert entry.redacted == [] and body in all_text(project / "documentation")
    updated = kb.update(entry.slug, entry.version, tags=["release"])  # a kept body is left alone too
    assert updated.redacted == [] and body in all_text(project / "documentation")
    assert kb.get(entry.slug).body == body  # and shown as it is


def test_delete_reason_is_redacted(kb: KnowledgeBase, project: Path) -> None:
    entry = kb.save("Gone", "body")
    archived = kb.delete(entry.slug, f"leaked {TOKEN}")
    assert TOKEN not in archived.read_text(encoding="utf-8")


def test_get_and_snippets_hide_a_secret_in_a_hand_written_note(kb: KnowledgeBase, project: Path) -> None:
    text = "---\ntitle: Legacy deploy\n---\n" + "deploy steps " * 30 + f"\nexport API_KEY={PASSWORD}\n"
    path = write_note(project / "documentation", "guide/legacy.md", text + f"push token {TOKEN}\n")
    kb.reindex()
    entry = kb.get("legacy")
    assert TOKEN not in entry.body and PASSWORD not in entry.body
    assert entry.redacted == ["github-token", "secret"]
    assert PASSWORD in path.read_text(encoding="utf-8")  # display only: the file is untouched
    for query in ("push token", "API_KEY deploy", "deploy steps"):
        for hit in kb.search(query).hits:
            assert TOKEN not in hit.snippet and PASSWORD not in hit.snippet


@pytest.mark.parametrize("gap", range(0, 50, 3))
def test_a_snippet_cut_never_shows_part_of_a_key(gap: int) -> None:
    text = "filler words " * 40 + "deploy " + "y" * gap + f" {TOKEN} and more " + "filler words " * 40
    shown = snippet(text, "deploy", width=60)
    assert not any(TOKEN[i : i + 8] in shown for i in range(len(TOKEN) - 8)), shown


def test_rollup_is_redacted(project: Path) -> None:
    from pinky.capture.rollup import week_period, write_rollup

    docs = project / "documentation"
    write_note(docs, "diary/2026-11-23.md", f"# Diary\n\n- 09:00 [aaaaaaaa] asked: use {TOKEN} to push\n")
    path = write_rollup(docs, week_period(2026, 48))
    assert TOKEN not in path.read_text(encoding="utf-8")


def test_cli_save_says_what_was_redacted(project: Path) -> None:
    done = subprocess.run([*console_script("pinky"), "save", "-t", "CI token"], cwd=project, text=True,
                          input=f"ci uses {TOKEN}\n", capture_output=True, env=dict(os.environ), timeout=120)
    assert done.returncode == 0, done.stderr
    assert "redacted: github-token (the github token format); replaced by [REDACTED:<kind>]" in done.stdout
    assert TOKEN not in all_text(project / "documentation")


@pytest.mark.anyio
async def test_mcp_save_update_and_get_report_redacted_kinds(tmp_path: Path) -> None:
    async with in_process(tmp_path, "write") as (client, _):
        saved = await client.call_tool("brain_save", {"title": "Keys", "body": f"use {TOKEN}"})
        data: dict[str, Any] = saved.structured_content
        assert data["redacted"] == ["github-token"]
        assert "github-token (the github token format)" in saved.content[0].text
        assert data["redactions"] == [{"kind": "github-token", "reason": "the github token format"}]
        updated = await client.call_tool("brain_update", {
            "slug": data["slug"], "expected_version": data["version"], "body": f"password is {PASSWORD}"})
        assert updated.structured_content["redacted"] == ["password"]
        assert updated.structured_content["redactions"][0]["reason"].startswith("a password")
        got = await client.call_tool("brain_get", {"slug": data["slug"]})
        assert got.structured_content["redacted"] == [] and PASSWORD not in json.dumps(got.structured_content)
        keyed = await client.call_tool("brain_save", {"title": "Key", "body": "b", "key": f"ci.{TOKEN}"})
        assert keyed.structured_content["redacted"] == ["github-token"]


@pytest.mark.anyio
async def test_mcp_import_reports_secrets_and_rewrites_nothing(tmp_path: Path) -> None:
    dump = tmp_path / "dump.jsonl"
    text = f"---\ntitle: Leak\n---\nuse {TOKEN}\n"
    dump.write_text(json.dumps({"pinky_export": 1, "root": "project", "path": "note/leak.md",
                                "text": text}) + "\n", encoding="utf-8")
    async with in_process(tmp_path, "admin") as (client, _):
        done = await client.call_tool("brain_import", {"file": str(dump)})
        assert done.structured_content["secrets"] == [{"slug": "note/leak", "kinds": ["github-token"]}]
        assert done.structured_content["redacted"] == []
        assert all_text(tmp_path / "documentation") == text

"""Sync writing merged files to disk: whole files, the executable bit, and never over an edit."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from dulwich import porcelain
from dulwich.repo import Repo

from pinky.errors import SyncError
from pinky.sync.repo import RepoBlobs, commit_local, head_sha, open_or_init, snapshot
from pinky.sync.worktree import checkout, restage

FILE, EXECUTABLE = 0o100644, 0o100755


@pytest.fixture
def repo(tmp_path: Path) -> Repo:
    repo, _ = open_or_init(tmp_path / "brain")
    for rel, text in {"keep.md": "keep", "old/gone.md": "gone", "edit.md": "v1"}.items():
        (tmp_path / "brain" / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / "brain" / rel).write_text(text)
    commit_local(repo, b"Test <test@example.org>")
    yield repo
    repo.close()


def test_checkout_writes_changes_removes_deletions_and_restages(repo: Repo) -> None:
    root, blobs = Path(repo.path), RepoBlobs(repo)
    old = snapshot(repo, head_sha(repo))
    new = {"keep.md": old["keep.md"], "edit.md": (FILE, blobs.write(b"v2")),
           "bin/run.sh": (EXECUTABLE, blobs.write(b"#!/bin/sh\n"))}
    assert checkout(repo, old, new) == (["bin/run.sh", "edit.md", "old/gone.md"], [])
    assert (root / "edit.md").read_text() == "v2"
    assert not (root / "old").exists()  # the folder it left empty went too
    assert os.access(root / "bin/run.sh", os.X_OK) and not os.access(root / "edit.md", os.X_OK)
    assert not list(root.rglob(".*.tmp"))
    restage(repo, ["bin/run.sh", "edit.md", "old/gone.md"])
    staged = porcelain.status(repo).staged
    assert (staged["add"], staged["modify"], staged["delete"]) == ([b"bin/run.sh"], [b"edit.md"], [b"old/gone.md"])


def test_checkout_keeps_an_ordinary_file_edited_during_the_sync_and_the_incoming_version_beside_it(
        repo: Repo) -> None:
    root = Path(repo.path)
    old = snapshot(repo, head_sha(repo))
    new = {**old, "edit.md": (FILE, RepoBlobs(repo).write(b"v2")), "keep.md": (FILE, RepoBlobs(repo).write(b"k2"))}
    (root / "keep.md").write_text("saved a second ago")
    changed, copies = checkout(repo, old, new, "abcdef12")
    assert copies == ["keep.conflict-abcdef12.md"] and "keep.conflict-abcdef12.md" in changed
    assert (root / "keep.md").read_text() == "saved a second ago"  # never replaced: nobody committed it yet
    assert (root / "keep.conflict-abcdef12.md").read_text() == "k2"
    assert (root / "edit.md").read_text() == "v2"


def test_checkout_unions_an_append_only_file_appended_to_during_the_sync(repo: Repo) -> None:
    root, blobs = Path(repo.path), RepoBlobs(repo)
    head = "---\ntitle: Log\nappend_only: true\n---\n\n"
    (root / "log.md").write_text(head + "- 09:00 first\n")
    commit_local(repo, b"Test <test@example.org>")
    old = snapshot(repo, head_sha(repo))
    new = {**old, "log.md": (FILE, blobs.write((head + "- 09:00 first\n- 10:00 from the other machine\n").encode()))}
    with open(root / "log.md", "a") as stream:
        stream.write("- 11:00 appended during the sync\n")
    changed, copies = checkout(repo, old, new)
    assert changed == ["log.md"] and copies == []
    assert (root / "log.md").read_text() == (
        head + "- 09:00 first\n- 10:00 from the other machine\n- 11:00 appended during the sync\n")


def test_checkout_puts_back_a_file_removed_on_the_other_side_but_edited_here(repo: Repo) -> None:
    root = Path(repo.path)
    old = snapshot(repo, head_sha(repo))
    (root / "keep.md").write_text("edited here")
    new = {p: e for p, e in old.items() if p != "keep.md"}
    assert checkout(repo, old, new) == (["keep.md"], [])
    assert (root / "keep.md").read_text() == "edited here"


@pytest.mark.parametrize("path", ["../escape.md", ".git/config", "/abs.md", "a//b.md"])
def test_checkout_refuses_unsafe_paths(repo: Repo, path: str) -> None:
    old = snapshot(repo, head_sha(repo))
    with pytest.raises(SyncError, match="unsafe path"):
        checkout(repo, old, {**old, path: (FILE, RepoBlobs(repo).write(b"x"))})


def test_checkout_waits_for_an_update_holding_the_note_edit_lock_and_keeps_it(repo: Repo) -> None:
    """An update (`pinky.knowledge.entries.update`) reads, checks its version and writes under the note's edit
    lock: a checkout must take the same lock, so it compares with what the update wrote, not with the file
    before it."""
    import threading

    from pinky.base.fileio import atomic_write
    from pinky.knowledge.edit_locks import edit_lock_at

    root = Path(repo.path)
    old = snapshot(repo, head_sha(repo))
    new = {**old, "edit.md": (FILE, RepoBlobs(repo).write(b"v2 from the other machine"))}
    result: list[tuple[list[str], list[str]]] = []
    with edit_lock_at(root, "global", "edit.md"):
        worker = threading.Thread(target=lambda: result.append(checkout(repo, old, new, "abcdef12")))
        worker.start()
        worker.join(0.5)  # gives a checkout that took no lock the time to replace the file first
        atomic_write(root / "edit.md", "v1, updated here")
    worker.join()
    assert (root / "edit.md").read_text() == "v1, updated here"
    assert (root / "edit.conflict-abcdef12.md").read_text() == "v2 from the other machine"
    assert result == [(["edit.md", "edit.conflict-abcdef12.md"], ["edit.conflict-abcdef12.md"])]

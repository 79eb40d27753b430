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
    assert checkout(repo, old, new) == ["bin/run.sh", "edit.md", "old/gone.md"]
    assert (root / "edit.md").read_text() == "v2"
    assert not (root / "old").exists()  # the folder it left empty went too
    assert os.access(root / "bin/run.sh", os.X_OK) and not os.access(root / "edit.md", os.X_OK)
    assert not list(root.rglob(".*.tmp"))
    restage(repo, ["bin/run.sh", "edit.md", "old/gone.md"])
    staged = porcelain.status(repo).staged
    assert (staged["add"], staged["modify"], staged["delete"]) == ([b"bin/run.sh"], [b"edit.md"], [b"old/gone.md"])


def test_checkout_never_overwrites_a_file_edited_during_the_sync(repo: Repo) -> None:
    root = Path(repo.path)
    old = snapshot(repo, head_sha(repo))
    new = {**old, "edit.md": (FILE, RepoBlobs(repo).write(b"v2")), "keep.md": (FILE, RepoBlobs(repo).write(b"k2"))}
    (root / "keep.md").write_text("saved a second ago")
    with pytest.raises(SyncError, match="keep.md changed while syncing"):
        checkout(repo, old, new)
    assert (root / "edit.md").read_text() == "v1"  # checked everything before writing anything


@pytest.mark.parametrize("path", ["../escape.md", ".git/config", "/abs.md", "a//b.md"])
def test_checkout_refuses_unsafe_paths(repo: Repo, path: str) -> None:
    old = snapshot(repo, head_sha(repo))
    with pytest.raises(SyncError, match="unsafe path"):
        checkout(repo, old, {**old, path: (FILE, RepoBlobs(repo).write(b"x"))})

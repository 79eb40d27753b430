"""Sync's local repository steps through dulwich, on real repositories in tmp_path."""

from __future__ import annotations

from pathlib import Path

import pytest
from dulwich import porcelain
from dulwich.index import ConflictedIndexEntry
from dulwich.repo import Repo

from pinky.errors import SyncError
from pinky.sync.repo import (
    advance,
    commit_local,
    contains,
    head_commit,
    head_sha,
    is_fresh,
    make_commit,
    open_or_init,
    read_blob,
    set_origin,
    snapshot,
    sync_lock,
    write_tree,
)

IDENT = b"Test <test@example.org>"


@pytest.fixture
def repo(tmp_path: Path) -> Repo:
    repo, created = open_or_init(tmp_path / "brain")
    assert created
    yield repo
    repo.close()


def write(repo: Repo, rel: str, text: str) -> None:
    path = Path(repo.path) / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def test_head_commit_and_is_fresh(tmp_path: Path, repo: Repo) -> None:
    brain = Path(repo.path)
    assert head_commit(tmp_path / "missing") is None and is_fresh(tmp_path / "missing")
    assert head_commit(tmp_path) is None  # a folder that is not a repository
    assert head_commit(brain) is None and is_fresh(brain)  # unborn: only .git
    write(repo, "gotcha/x.md", "x")
    assert not is_fresh(brain)  # a file to keep: never cloned over
    commit_local(repo, IDENT)
    assert head_commit(brain) == head_sha(repo) == repo.head()


def test_open_or_init_reopens_and_refuses_a_file(tmp_path: Path, repo: Repo) -> None:
    again, created = open_or_init(Path(repo.path))
    again.close()
    assert not created
    (tmp_path / "file").write_text("x")
    with pytest.raises(SyncError, match="not a directory"):
        open_or_init(tmp_path / "file")


def test_commit_local_commits_adds_edits_and_deletions_once(repo: Repo) -> None:
    write(repo, "a.md", "a")
    write(repo, "b.md", "b")
    assert commit_local(repo, IDENT) == "pinky sync: add 2, update 0, remove 0 (a.md, b.md)"
    assert commit_local(repo, IDENT) is None
    write(repo, "a.md", "a2")
    (Path(repo.path) / "b.md").unlink()
    assert commit_local(repo, IDENT) == "pinky sync: add 0, update 1, remove 1 (a.md, b.md)"
    assert set(snapshot(repo, head_sha(repo))) == {"a.md"}
    assert repo[repo.head()].author == IDENT
    assert porcelain.status(repo).unstaged == []


def test_sync_lock_lets_one_sync_at_a_time(repo: Repo) -> None:
    with sync_lock(repo):
        with pytest.raises(SyncError, match="another pinky-brain sync is running"), sync_lock(repo):
            pass
    with sync_lock(repo):  # released
        pass


def test_advance_refuses_a_branch_someone_else_moved(repo: Repo) -> None:
    write(repo, "a.md", "a")
    commit_local(repo, IDENT)
    first = head_sha(repo)
    write(repo, "a.md", "b")
    commit_local(repo, IDENT)
    with pytest.raises(SyncError, match="moved during sync"):
        advance(repo, first, first, "rewind")


def test_set_origin_records_local_paths_absolute(tmp_path: Path, repo: Repo, monkeypatch: pytest.MonkeyPatch) -> None:
    assert set_origin(repo, None) is None
    (tmp_path / "remote.git").mkdir()
    monkeypatch.chdir(tmp_path)
    assert set_origin(repo, "remote.git") == str(tmp_path / "remote.git")
    assert set_origin(repo, None) == str(tmp_path / "remote.git")
    assert set_origin(repo, "git@example.org:me/brain.git") == "git@example.org:me/brain.git"


def test_objects_of_the_wrong_kind_are_a_sync_error(repo: Repo) -> None:
    write(repo, "a.md", "a")
    commit_local(repo, IDENT)
    commit = head_sha(repo)
    blob = snapshot(repo, commit)["a.md"][1]
    assert read_blob(repo, blob) == b"a"
    with pytest.raises(SyncError, match="is a commit, not a file's contents"):
        read_blob(repo, commit)
    with pytest.raises(SyncError, match="is a blob, not a commit"):
        snapshot(repo, blob)


def test_a_conflict_left_in_the_index_by_git_is_a_sync_error(repo: Repo) -> None:
    write(repo, ".gitignore", "local.md\n")
    write(repo, "a.md", "a")
    commit_local(repo, IDENT)
    index = repo.open_index()
    entry = index[b"a.md"]
    # an ignored path: porcelain.add leaves its conflict in the index for commit_local to find
    index[b"local.md"] = ConflictedIndexEntry(ancestor=entry, this=entry, other=entry)
    index.write()
    head = head_sha(repo)
    with pytest.raises(SyncError, match="local.md has an unresolved git merge conflict"):
        commit_local(repo, IDENT)
    assert head_sha(repo) == head


def _race_shape(repo: Repo, salt: int) -> tuple[bytes, bytes, bytes]:
    """The graph of two machines racing a push within one second: base, B1 and A1 on it, A's merge
    M1 = [A1, B1], B's next commit B2 on B1, A's retry M2 = [M1, B2]. Returns (M1, B2, M2)."""
    tree = write_tree(repo, {})
    base = make_commit(repo, tree, [], f"base {salt}", IDENT)
    b1 = make_commit(repo, tree, [base], f"b1 {salt}", IDENT)
    a1 = make_commit(repo, tree, [base], f"a1 {salt}", IDENT)
    m1 = make_commit(repo, tree, [a1, b1], f"m1 {salt}", IDENT)
    b2 = make_commit(repo, tree, [b1], f"b2 {salt}", IDENT)
    return m1, b2, make_commit(repo, tree, [m1, b2], f"m2 {salt}", IDENT)


def test_commits_of_one_second_are_still_ordered_and_fast_forwards_are_seen(
    repo: Repo, monkeypatch: pytest.MonkeyPatch
) -> None:
    """dulwich walks newest-first: with equal commit times it took some plain fast-forwards for
    diverged branches (about 2 syncs in 100 raced in one second were refused). Each commit now comes
    after its parents, so dulwich's own push check agrees with the exact walk."""
    from dulwich.graph import can_fast_forward

    monkeypatch.setattr("pinky.sync.repo.time.time", lambda: 1_800_000_000.0)
    for salt in range(60):  # different shas, so different tie orders in dulwich's heap
        m1, b2, m2 = _race_shape(repo, salt)
        assert repo[m2].commit_time > max(repo[m1].commit_time, repo[b2].commit_time)
        assert repo[m2].author_time == 1_800_000_000
        assert contains(repo, m2, b2) and contains(repo, m2, m1) and contains(repo, m2, m2)
        assert not contains(repo, b2, m1) and not contains(repo, m1, b2)
        assert can_fast_forward(repo, b2, m2), salt

"""Sync talking to origin: pulling into an empty or a behind repository, and pushing only when needed."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from dulwich import porcelain
from dulwich.repo import Repo

from pinky.errors import SyncError
from pinky.sync.remote import Merge, pull, push
from pinky.sync.repo import commit_local, head_branch, head_sha, open_or_init, set_origin

IDENT = b"Test <test@example.org>"


@pytest.fixture
def remote(tmp_path: Path) -> str:
    path = tmp_path / "remote.git"
    porcelain.init(str(path), bare=True).close()
    return str(path)


def machine(tmp_path: Path, name: str, remote: str) -> Repo:
    repo, _ = open_or_init(tmp_path / name)
    set_origin(repo, remote)
    return repo


def test_pull_from_an_empty_remote_changes_nothing(tmp_path: Path, remote: str) -> None:
    with machine(tmp_path, "A", remote) as repo:
        merge = pull(repo, remote, IDENT, io.BytesIO())
    assert (merge.changed, merge.conflicts, merge.remote_sha) == ([], [], None)
    assert merge.note == "remote has no commits yet"


def test_push_then_fast_forward_the_other_machine(tmp_path: Path, remote: str) -> None:
    with machine(tmp_path, "A", remote) as a:
        (tmp_path / "A/gotcha").mkdir()
        (tmp_path / "A/gotcha/x.md").write_text("from A")
        commit_local(a, IDENT)
        assert push(a, remote, pull(a, remote, IDENT, io.BytesIO()), io.BytesIO()) is True
        assert push(a, remote, pull(a, remote, IDENT, io.BytesIO()), io.BytesIO()) is False  # up to date
        pushed = head_sha(a)
    with machine(tmp_path, "B", remote) as b:
        merge = pull(b, remote, IDENT, io.BytesIO())
        assert merge.changed == ["gotcha/x.md"] and merge.remote_sha == pushed == head_sha(b)
        assert (tmp_path / "B/gotcha/x.md").read_text() == "from A"
        assert porcelain.status(b).staged == {"add": [], "delete": [], "modify": []}


def test_unreachable_remote_is_one_line(tmp_path: Path) -> None:
    missing = str(tmp_path / "missing.git")
    with machine(tmp_path, "A", missing) as repo, pytest.raises(SyncError) as info:
        pull(repo, missing, IDENT, io.BytesIO())
    assert str(info.value).startswith(f"cannot fetch from remote {missing}: ") and "\n" not in str(info.value)


def test_https_credentials_from_the_git_store_reach_fetch_and_push(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from dulwich import client

    stored = {"example.org": [("me", "s3cret")]}
    monkeypatch.setattr(client, "get_credentials_from_store", lambda scheme, host, **_: iter(stored.get(host, [])))
    seen: list[tuple[object, object]] = []

    def offline(*args: object, **kwargs: object) -> None:
        seen.append((kwargs.get("username"), kwargs.get("password")))
        raise OSError("offline")

    monkeypatch.setattr(porcelain, "fetch", offline)
    monkeypatch.setattr(porcelain, "push", offline)
    for url in ("https://example.org/me/brain.git", "https://me@example.org/me/brain.git", "https://other.org/b.git"):
        with machine(tmp_path, "A", url) as repo:
            (tmp_path / "A/x.md").write_text(url)
            commit_local(repo, IDENT)
            with pytest.raises(SyncError, match="cannot fetch from remote .*: OSError: offline"):
                pull(repo, url, IDENT, io.BytesIO())
            with pytest.raises(SyncError, match="push to remote .* failed: OSError: offline"):
                push(repo, url, Merge([], [], head_branch(repo), None), io.BytesIO())
    # origin holds no password, so the store gives it for the host (and the URL's user); an unknown
    # host passes nothing
    assert seen == [("me", "s3cret")] * 4 + [(None, None)] * 2
    seen.clear()
    monkeypatch.setenv("PINKY_GIT_PASSWORD", "from-env")
    with machine(tmp_path, "B", "https://other.org/b.git") as repo, pytest.raises(SyncError):
        pull(repo, "https://other.org/b.git", IDENT, io.BytesIO())
    assert seen == [("pinky", "from-env")]

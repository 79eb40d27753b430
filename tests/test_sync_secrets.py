"""Sync never commits or pulls in a credential: notes are redacted before a commit, and a note that
arrives with one (pushed by an older pinky, or committed by hand) is written redacted and pushed back so."""

from __future__ import annotations

import random
import string
from pathlib import Path

from dulwich import porcelain
from dulwich.objects import Blob
from dulwich.repo import Repo

from pinky.sync import sync

TOKEN = "ghp_" + "".join(random.Random(3).choice(string.ascii_letters + string.digits) for _ in range(33)) + "a1Z"


def all_blobs(repo_path: str) -> bytes:
    with Repo(repo_path) as repo:
        return b"".join(obj.data for obj in (repo.object_store[sha] for sha in repo.object_store)
                        if isinstance(obj, Blob))


def test_a_note_with_a_secret_is_redacted_before_it_is_committed(tmp_path: Path) -> None:
    remote = str(tmp_path / "remote.git")
    porcelain.init(remote, bare=True).close()
    brain = tmp_path / "brain"
    (brain / "gotcha").mkdir(parents=True)
    (brain / "gotcha" / "ci.md").write_text(f"---\ntitle: CI\n---\npush with {TOKEN}\n")
    report = sync(brain, remote)
    assert TOKEN not in (brain / "gotcha" / "ci.md").read_text()
    assert TOKEN.encode() not in all_blobs(remote)  # what travels (the local object store may keep the
    # unreferenced blob `git add` stored, on the machine that holds the file anyway, until git gc)
    assert any("gotcha/ci.md (github-token)" in note for note in report.notes)


def test_a_pulled_note_with_a_secret_is_written_redacted_and_pushed_back_clean(tmp_path: Path) -> None:
    remote = str(tmp_path / "remote.git")
    porcelain.init(remote, bare=True).close()
    a, b = tmp_path / "A", tmp_path / "B"
    a.mkdir()
    (a / "x.md").write_text("x\n")
    sync(a, remote)
    sync(b, remote)
    (a / "leak.md").write_text(f"token {TOKEN}\n")  # what an older pinky committed as it was
    porcelain.add(str(a), paths=[str(a / "leak.md")])
    porcelain.commit(str(a), message=b"old pinky", author=b"a <a@a>", committer=b"a <a@a>")
    porcelain.push(str(a), remote, b"HEAD:" + Repo(str(a)).refs.read_ref(b"HEAD")[5:])
    sync(b)
    assert TOKEN not in (b / "leak.md").read_text() and "[REDACTED:github-token]" in (b / "leak.md").read_text()
    sync(a)
    assert TOKEN not in (a / "leak.md").read_text()  # the clean version came back through the remote

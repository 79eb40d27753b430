"""Sync never rewrites a file to hide a secret, and never pushes a new credential.

Real repositories in tmp_path: the brain, a bare remote, and a second machine. A note holding
only things that look random (a SHA-256 in prose, IPFS CIDs, a base64 test vector) travels byte for
byte; a note holding a credential is held back (left out of the commit, untouched on disk,
reported) until it is cleaned or allowed with `pinky sync --allow`.
"""

from __future__ import annotations

import json
import os
import random
import string
import subprocess
import sys
from pathlib import Path

from dulwich import porcelain
from dulwich.objects import Blob
from dulwich.repo import Repo
from mcp_helpers import RawServer

from pinky.sync.run import sync

TOKEN = "ghp_" + "".join(random.Random(3).choice(string.ascii_letters + string.digits) for _ in range(33)) + "a1Z"
DIGESTS = (
    "---\ntitle: Release checks\ntype: note\n---\n"
    "The release tarball's SHA-256 is e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855.\n"
    "Pinned on IPFS as QmYwAPJzv5CZsnA625s3Xf2nemtYgPpHdWEz79ojWnPbdG, and as CIDv1\n"
    "bafybeigdyrzt5sfp7udm7hu76uh7y26nf3efuylqabf3oclgtqy55fbzdi.\n"
    "Test vector: the expected output is 9QEfOgWNkEcFXgy0BCyPZpN7VnKkL8ykvyQDgkhkUKo=\n"
)


def all_blobs(repo_path: Path | str) -> bytes:
    with Repo(str(repo_path)) as repo:
        return b"".join(obj.data for obj in (repo.object_store[sha] for sha in repo.object_store)
                        if isinstance(obj, Blob))


def remote_file(remote: Path, path: str) -> bytes | None:
    """The file at the remote's HEAD, None when it is not there."""
    with Repo(str(remote)) as repo:
        tree = repo[repo[repo.head()].tree]
        try:
            _, sha = tree.lookup_path(repo.object_store.__getitem__, path.encode())
        except KeyError:
            return None
        return repo[sha].data


def bare(tmp_path: Path) -> Path:
    remote = tmp_path / "remote.git"
    porcelain.init(str(remote), bare=True).close()
    return remote


def two_machines(tmp_path: Path, name: str, text: str) -> tuple[Path, Path, Path]:
    """(remote, a, b): machine A pushed `name` holding `text`, and B cloned it."""
    remote = bare(tmp_path)
    a, b = tmp_path / "A", tmp_path / "B"
    a.mkdir()
    (a / name).write_text(text)
    sync(a, remote)
    sync(b, remote)
    return remote, a, b


def pinky(home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PINKY_", "CLAUDE"))}
    env.update(PINKY_HOME=str(home), PINKY_HASH_EMBED="1")
    proc = subprocess.run([sys.executable, "-m", "pinky", "sync", *args], cwd=home, env=env, capture_output=True,
                          text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    return proc


def test_pinky_sync_pushes_digests_byte_for_byte_and_holds_back_a_token_until_allowed(tmp_path: Path) -> None:
    remote, home = bare(tmp_path), tmp_path / "home"
    brain = home / "brain"
    (brain / "note").mkdir(parents=True)
    digests = brain / "note" / "release-checks.md"
    digests.write_bytes(DIGESTS.encode())
    secret = brain / "gotcha" / "ci.md"
    secret.parent.mkdir()
    secret_bytes = f"---\ntitle: CI\ntype: gotcha\n---\npush with {TOKEN}\n".encode()
    secret.write_bytes(secret_bytes)

    report = json.loads(pinky(home, "--remote", str(remote), "--json").stdout)
    assert digests.read_bytes() == DIGESTS.encode()  # left as it was on disk...
    assert remote_file(remote, "note/release-checks.md") == DIGESTS.encode()  # ...and pushed as it is
    assert report["pushed"] is True
    assert [(h["path"], h["kinds"]) for h in report["held_back"]] == [("gotcha/ci.md", ["github-token"])]
    assert secret.read_bytes() == secret_bytes  # held back: untouched...
    assert remote_file(remote, "gotcha/ci.md") is None and TOKEN.encode() not in all_blobs(remote)  # ...unpushed
    status = porcelain.status(str(brain))
    assert status.staged == {"add": [], "delete": [], "modify": []} and b"gotcha/" in status.untracked

    again = pinky(home)  # the next run holds it back again and says how to go on
    assert "held back: 1 file(s)" in again.stdout and "github-token" in again.stdout
    assert "pinky-brain sync --allow gotcha/ci.md" in again.stdout
    assert secret.read_bytes() == secret_bytes and remote_file(remote, "gotcha/ci.md") is None

    allowed = json.loads(pinky(home, "--allow", "gotcha/ci.md", "--json").stdout)
    assert allowed["allowed"] == [{"path": "gotcha/ci.md", "kinds": ["github-token"]}]
    assert allowed["held_back"] == [] and allowed["pushed"] is True
    assert remote_file(remote, "gotcha/ci.md") == secret_bytes and secret.read_bytes() == secret_bytes
    assert TOKEN not in (brain / ".gitignore").read_text() and ".pinky/" in (brain / ".gitignore").read_text()


def test_a_held_back_note_is_pushed_once_cleaned_and_a_new_secret_needs_its_own_allowing(tmp_path: Path) -> None:
    remote, brain = bare(tmp_path), tmp_path / "brain"
    brain.mkdir()
    note = brain / "ops.md"
    note.write_text(f"deploy token: {TOKEN}\n")
    assert sync(brain, remote).held_back[0]["path"] == "ops.md"
    note.write_text("deploy token: in the team vault\n")
    report = sync(brain)
    assert report.held_back == [] and remote_file(remote, "ops.md") == b"deploy token: in the team vault\n"

    note.write_text(f"deploy token: {TOKEN}\n")
    sync(brain, allow=["ops.md"])
    assert remote_file(remote, "ops.md") == f"deploy token: {TOKEN}\n".encode()
    note.write_text(f"deploy token: {TOKEN}\nmore notes, same token\n")  # nothing new: it goes
    assert sync(brain).held_back == [] and b"more notes" in (remote_file(remote, "ops.md") or b"")
    password = "the staging password is Tr0ub4dor&3x\n"
    note.write_text(f"deploy token: {TOKEN}\n{password}")
    held = sync(brain).held_back
    assert [(h["path"], h["kinds"]) for h in held] == [("ops.md", ["password"])]
    assert held[0]["why"][0]["reason"].startswith("a password")
    assert b"Tr0ub4dor" not in all_blobs(remote)


def test_a_pulled_note_with_a_secret_is_written_as_it_is_and_not_held_back_when_edited(tmp_path: Path) -> None:
    remote, a, b = two_machines(tmp_path, "x.md", "x\n")
    leak = f"token {TOKEN}\n"
    (a / "leak.md").write_text(leak)  # what an older pinky, or a hand commit, pushed
    porcelain.add(str(a), paths=[str(a / "leak.md")])
    porcelain.commit(str(a), message=b"old pinky", author=b"a <a@a>", committer=b"a <a@a>")
    porcelain.push(str(a), str(remote), b"HEAD:" + Repo(str(a)).refs.read_ref(b"HEAD")[5:])
    report = sync(b)
    assert (b / "leak.md").read_text() == leak  # never rewritten: the agent sees it redacted on display
    assert report.pulled_paths == ["leak.md"] and report.held_back == []
    (b / "leak.md").write_text(leak + "rotate it\n")  # the secret is already out there: not news
    assert sync(b).held_back == [] and remote_file(remote, "leak.md") == (leak + "rotate it\n").encode()


def test_a_held_back_file_the_other_machine_changed_keeps_both_versions(tmp_path: Path) -> None:
    remote, a, b = two_machines(tmp_path, "ops.md", "deploy: ask ops\n")
    (a / "ops.md").write_text("deploy: use the runbook\n")
    sync(a)
    mine = f"deploy: token {TOKEN}\n"
    (b / "ops.md").write_text(mine)
    report = sync(b)  # held back, and the other machine's edit arrives beside it
    assert (b / "ops.md").read_text() == mine
    [copy] = report.conflicts
    assert copy.startswith("ops.conflict-") and (b / copy).read_text() == "deploy: use the runbook\n"
    assert [h["path"] for h in report.held_back] == ["ops.md"] and TOKEN.encode() not in all_blobs(remote)
    (b / "ops.md").write_text("deploy: use the runbook; token in the vault\n")
    (b / copy).unlink()
    sync(b)
    assert remote_file(remote, "ops.md") == b"deploy: use the runbook; token in the vault\n"


def test_beside_held_keeps_the_held_file_and_puts_theirs_beside_it() -> None:
    from pinky.sync.remote import beside_held

    old = {"a.md": (0o100644, b"1" * 40), "b.md": (0o100644, b"2" * 40)}
    new = {"a.md": (0o100644, b"3" * 40), "c.md": (0o100644, b"4" * 40)}
    disk, copies = beside_held(old, new, {"a.md": ["github-token"], "b.md": ["password"]}, "abcd1234")
    assert disk == {"a.md": old["a.md"], "a.conflict-abcd1234.md": new["a.md"], "b.md": old["b.md"],
                    "c.md": new["c.md"]}  # b.md, deleted there, stays here
    assert copies == ["a.conflict-abcd1234.md"]


def test_brain_sync_reports_what_it_held_back(tmp_path: Path) -> None:
    remote = bare(tmp_path)
    brain = tmp_path / "home" / "brain"
    brain.mkdir(parents=True)
    (brain / "ci.md").write_text(f"---\ntitle: CI\n---\npush with {TOKEN}\n")
    with RawServer(tmp_path, PINKY_TIER="admin") as server:
        server.initialize()
        result = server.call("brain_sync", remote=str(remote))
        assert result["isError"] is False, result
        held = result["structuredContent"]["held_back"]
        assert [(h["path"], h["kinds"]) for h in held] == [("ci.md", ["github-token"])]
        assert "HELD BACK: ci.md (github-token)" in result["content"][0]["text"]
        assert "pinky-brain sync --allow ci.md" in result["content"][0]["text"]
    assert (brain / "ci.md").read_text() == f"---\ntitle: CI\n---\npush with {TOKEN}\n"
    assert TOKEN.encode() not in all_blobs(remote)


def test_allow_refuses_a_path_outside_the_brain(tmp_path: Path) -> None:
    import pytest

    from pinky.errors import InvalidInput

    brain = tmp_path / "brain"
    brain.mkdir()
    (brain / "a.md").write_text("a\n")
    with pytest.raises(InvalidInput, match="not inside the brain"):
        sync(brain, allow=[str(tmp_path / "elsewhere.md")])
    with pytest.raises(InvalidInput, match="no file missing.md"):
        sync(brain, allow=["missing.md"])

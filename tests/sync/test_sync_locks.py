"""A `pinky sync` killed mid-write leaves git lock files; the next sync clears them, but never
a lock that a live process holds."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from dulwich import porcelain
from dulwich.objects import Blob

from pinky.errors import SyncError
from pinky.sync.locks import PUSH_MARK, clear_after_dead_push, clear_stale_locks, lock_files
from pinky.sync.run import sync

SRC = Path(__file__).resolve().parents[2] / "src"


@pytest.fixture
def brain(tmp_path: Path) -> tuple[Path, str]:
    remote = tmp_path / "remote.git"
    porcelain.init(str(remote), bare=True).close()
    root = tmp_path / "brain"
    root.mkdir()
    (root / "a.md").write_text("a\n")
    sync(root, str(remote))
    return root, str(remote)


def leave_locks(root: Path, text: str) -> list[Path]:
    """What a killed sync leaves: the index lock and the lock of the loose object it was writing."""
    sha = Blob.from_string(text.encode()).id.decode()
    locks = [root / ".git" / "index.lock", root / ".git" / "objects" / sha[:2] / f"{sha[2:]}.lock"]
    for lock in locks:
        lock.parent.mkdir(parents=True, exist_ok=True)
        lock.write_bytes(b"")
    return locks


def test_stale_locks_from_a_killed_sync_are_cleared_and_reported(brain: tuple[Path, str]) -> None:
    root, _ = brain
    (root / "b.md").write_text("b\n")
    locks = leave_locks(root, "b\n")
    report = sync(root)
    assert report.committed and report.pushed
    assert not any(lock.exists() for lock in locks)
    assert any("removed 2 stale git lock file(s)" in note and "index.lock" in note for note in report.notes)


def test_a_lock_a_live_process_holds_is_kept_and_is_one_clear_error(brain: tuple[Path, str]) -> None:
    root, _ = brain
    (root / "b.md").write_text("b\n")
    lock = root / ".git" / "index.lock"
    with open(lock, "wb"):  # this process holds it, as git and dulwich do while they write
        with pytest.raises(SyncError, match="index.lock is held by another git process"):
            sync(root)
        assert lock.exists()
    assert sync(root).committed  # released: the next run goes through


def test_a_really_killed_sync_leaves_nothing_that_blocks_the_next(brain: tuple[Path, str]) -> None:
    root, _ = brain
    for i in range(300):
        (root / f"n{i}.md").write_text(f"note {i}\n" * 50)
    code = (f"import sys, pathlib; sys.path.insert(0, {str(SRC)!r}); from pinky.sync.run import sync; "
            f"sync(pathlib.Path({str(root)!r}))")
    child = subprocess.Popen([sys.executable, "-c", code])
    time.sleep(0.6)
    os.kill(child.pid, signal.SIGKILL)
    child.wait()
    leave_locks(root, "whatever was being written\n")  # in case the kill landed between two writes
    sync(root)  # raised FileLocked before the fix
    assert lock_files(root / ".git") == []
    assert sync(root).committed is False  # everything is in


def test_without_proc_only_locks_older_than_the_run_are_stale(tmp_path: Path, monkeypatch) -> None:
    from pinky.sync import locks

    git = tmp_path / ".git"
    (git / "refs" / "heads").mkdir(parents=True)
    old, new = git / "index.lock", git / "refs" / "heads" / "main.lock"
    old.write_bytes(b"")
    new.write_bytes(b"")
    os.utime(old, (time.time() - 60, time.time() - 60))
    (git / "pinky-sync.lock").write_bytes(b"")
    monkeypatch.setattr(locks, "open_files", lambda: None)
    assert clear_stale_locks(git, time.time()) == ["index.lock"]
    assert new.exists() and (git / "pinky-sync.lock").exists()


def test_locks_a_killed_push_left_in_a_local_remote_are_cleared_and_no_others(tmp_path: Path) -> None:
    brain = tmp_path / "brain" / ".git"
    remote = tmp_path / "remote.git"
    (brain).mkdir(parents=True)
    (remote / "objects").mkdir(parents=True)
    (remote / "refs" / "heads").mkdir(parents=True)
    older = remote / "refs" / "heads" / "other.lock"
    older.write_text("")
    os.utime(older, (time.time() - 3600, time.time() - 3600))  # there before our push: not ours
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    (brain / PUSH_MARK).write_text(f"{dead.stdout.strip()} {time.time() - 1} {remote}\n")
    ours = remote / "refs" / "heads" / "master.lock"
    ours.write_text("")
    removed = clear_after_dead_push(brain)
    assert removed == ["remote.git/refs/heads/master.lock"]
    assert not ours.exists() and older.exists() and not (brain / PUSH_MARK).exists()
    (brain / PUSH_MARK).write_text(f"{os.getppid()} {time.time() - 1} {remote}\n")  # a live pusher: hands off
    ours.write_text("")
    assert clear_after_dead_push(brain) == [] and ours.exists()


def test_a_garbled_push_mark_touches_nothing_and_is_dropped(tmp_path: Path) -> None:
    brain = tmp_path / "brain.git"
    brain.mkdir()
    (brain / PUSH_MARK).write_text("not-a-pid yesterday\n")
    assert clear_after_dead_push(brain) == []
    assert not (brain / PUSH_MARK).exists()

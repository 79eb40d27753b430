"""A project on a real read-only mount (issue 29, item 6), searched by a second user with a home of
their own while its owner keeps writing it through a writable path: the search answers from the files
as they are now (new notes found, removed words gone) without a reindex, works with no index at all in
a checkout where a rename once ran, and `useful` feedback given there is carried back into the
project's index once the project is writable, where it keeps the note out of `prune`.

The mount is a bind mount of the owner's folder remounted read-only (`mount -o remount,ro,bind`): every
write under it fails with EROFS, for root too. The second user is `nobody` (setpriv --reuid) when that
user can run this interpreter, else this user without the powers that ignore file modes
(tests/test_readonly_project.py), with a PINKY_HOME and cache of their own either way.
"""

from __future__ import annotations

import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from helpers import console_script

AS_NOBODY = ("setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups", "--")
DROP_ROOT_POWERS = ("setpriv", "--bounding-set=-dac_override,-dac_read_search,-fowner", "--inh-caps=-all", "--")


def _second_user() -> tuple[str, ...]:
    """A prefix that runs a command as another user, or as this one without root's file powers."""
    if os.geteuid() != 0 or shutil.which("setpriv") is None:
        return ()
    if subprocess.run([*AS_NOBODY, sys.executable, "-c", "import pinky"], capture_output=True).returncode == 0:
        return AS_NOBODY
    return DROP_ROOT_POWERS


class Mounted:
    """The owner's project at `source`, and the same folder read-only at `mount`."""

    def __init__(self, top: Path) -> None:
        self.source, self.mount = top / "owner" / "proj", top / "mnt" / "proj"
        self.owner_home, self.user_home = top / "owner-home", top / "user-home"
        for folder in (self.source, self.mount, self.owner_home, self.user_home):
            folder.mkdir(parents=True)
        self.prefix = _second_user()
        self.mounts = 0  # os.path.ismount cannot tell: a bind mount of the same file system has its device
        if self.prefix == AS_NOBODY:
            shutil.chown(self.user_home, "nobody", "nogroup")

    def owner(self, *args: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
        env = {**os.environ, "PINKY_HOME": str(self.owner_home), "PINKY_CACHE_DIR": str(self.owner_home / "cache")}
        return subprocess.run([*console_script("pinky-brain"), *args], input=stdin, capture_output=True, text=True,
                              cwd=self.source, env=env, timeout=120)

    def user(self, *args: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
        env = {**os.environ, "HOME": str(self.user_home), "PINKY_HOME": str(self.user_home),
               "PINKY_CACHE_DIR": str(self.user_home / "cache")}
        return subprocess.run([*self.prefix, *console_script("pinky-brain"), *args], input=stdin, capture_output=True,
                              text=True, cwd=self.mount, env=env, timeout=120)

    def read_only(self) -> None:
        for command in (["mount", "--bind", str(self.source), str(self.mount)],
                        ["mount", "-o", "remount,ro,bind", str(self.mount)]):
            done = subprocess.run(command, capture_output=True, text=True)
            if done.returncode != 0:
                self.release()
                pytest.skip(f"cannot make a read-only bind mount here ({' '.join(command[:3])}: "
                            f"{done.stderr.strip()})")
            self.mounts += command[1] == "--bind"

    def release(self) -> None:
        while self.mounts:
            subprocess.run(["umount", str(self.mount)], check=True)
            self.mounts -= 1

    def writable_again(self) -> None:
        """The project is writable for the user again: the same path, mounted read-write."""
        self.release()
        subprocess.run(["mount", "--bind", str(self.source), str(self.mount)], check=True)
        self.mounts += 1
        if self.prefix == AS_NOBODY:
            subprocess.run(["chmod", "-R", "a+rwX", str(self.source)], check=True)


@pytest.fixture
def mounted() -> Iterator[Mounted]:
    if os.geteuid() != 0 or shutil.which("mount") is None:
        pytest.skip("a read-only bind mount needs root and mount(8)")
    top = Path(tempfile.mkdtemp(prefix="pinky-ro-", dir="/tmp"))  # not pytest's 0700 folder: nobody reads it
    top.chmod(0o755)
    project = Mounted(top)
    try:
        yield project
    finally:
        project.release()  # first: removing the folder through a mount would fail half way
        shutil.rmtree(top, ignore_errors=True)


def _owned_project(project: Mounted) -> None:
    assert project.owner("init").returncode == 0
    saved = project.owner("save", "-t", "Pool timeout", "--type", "gotcha",
                          stdin="The pool times out after 30 seconds at shutdown.")
    assert saved.returncode == 0, saved.stderr
    subprocess.run(["chmod", "-R", "a+rX", str(project.source.parent.parent)], check=True)


def test_a_read_only_project_is_searched_as_its_files_are_now_without_a_reindex(mounted: Mounted) -> None:
    project = mounted
    _owned_project(project)
    project.read_only()
    assert "gotcha/pool-timeout" in project.user("search", "pool timeout").stdout
    copied = project.user("save", "-t", "Shell tip", "--scope", "global", stdin="ctrl-r searches the history")
    assert copied.returncode == 0, copied.stderr  # this user's index is now a copy in their cache
    assert project.owner("save", "-t", "Walrus naps", "--type", "gotcha", stdin="The walrus sleeps at noon.") \
        .returncode == 0
    note = project.source / "documentation" / "gotcha" / "pool-timeout.md"
    note.write_text(note.read_text().replace("times out after", "stalls after"))
    assert project.owner("reindex").returncode == 0
    found = project.user("search", "walrus sleeps")
    assert found.returncode == 0, found.stderr
    assert "gotcha/walrus-naps" in found.stdout, found.stdout + found.stderr
    gone = project.user("search", "times", "--json")
    assert "pool-timeout" not in gone.stdout, gone.stdout
    assert "pool-timeout" in project.user("search", "stalls").stdout
    assert "global/note/shell-tip" in project.user("search", "ctrl-r history").stdout


def test_a_read_only_checkout_with_no_index_where_a_rename_ran_is_searched(mounted: Mounted) -> None:
    project = mounted
    _owned_project(project)
    moved = project.owner("mv", "gotcha/pool-timeout", "gotcha/pool-stall")
    assert moved.returncode == 0, moved.stderr
    assert (project.source / "documentation" / ".pinky" / "moves").is_dir()
    for name in ("brain.db", "brain.db-wal", "brain.db-shm", "brain.db-files"):
        (project.source / name).unlink(missing_ok=True)
    project.read_only()
    found = project.user("search", "pool timeout")
    assert found.returncode == 0, found.stderr
    assert "gotcha/pool-stall" in found.stdout
    assert "Read-only file system" not in found.stderr


def _useful_verdicts(project: Mounted) -> list[tuple[str, str]]:
    with sqlite3.connect(project.source / "brain.db") as conn:
        return conn.execute("SELECT e.slug, f.verdict FROM feedback f JOIN entry e ON e.id = f.entry_id "
                            "WHERE f.verdict = 'useful'").fetchall()


def test_feedback_given_while_read_only_is_carried_back_once_writable(mounted: Mounted) -> None:
    project = mounted
    _owned_project(project)
    project.read_only()
    said = project.user("feedback", "gotcha/pool-timeout", "useful")
    assert said.returncode == 0, said.stderr
    assert _useful_verdicts(project) == []  # the project's own index could not take it
    kept = list((project.user_home / "cache" / "indexes").glob("*/brain.db"))
    assert len(kept) == 1, "kept in the user's own cache"
    project.writable_again()
    listed = project.user("list")
    assert listed.returncode == 0, listed.stderr
    assert "carried back 1 feedback" in listed.stderr
    assert _useful_verdicts(project) == [("gotcha/pool-timeout", "useful")]  # what keeps it out of prune
    assert not kept[0].exists(), "carried once: the copy is gone"
    again = project.user("list")
    assert "carried back" not in again.stderr and _useful_verdicts(project) == [("gotcha/pool-timeout", "useful")]

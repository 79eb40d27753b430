"""Stale git lock files, and stale temporary files: a `pinky sync` killed mid-write leaves `index.lock` or an
`objects/xx/<sha>.lock` behind, and dulwich then refuses every later write with FileLocked.

`clear_stale_locks` runs while sync holds its own advisory lock (`pinky-sync.lock`), so no other
pinky sync can be writing. A lock file is stale when no live process has it open (read from
/proc where there is one: git and dulwich keep the file open while they hold it), or, where
that cannot be known, when it is older than this run by more than `GRACE_SECONDS` (a git
command run by hand in the brain at that very moment keeps its lock).
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterable
from pathlib import Path

from pinky.base import fileio

GRACE_SECONDS = 5.0
OWN_LOCK = "pinky-sync.lock"  # sync's advisory lock: held by this run, never a git lock
PUSH_MARK = "pinky-push"  # beside OWN_LOCK while a push into a local remote runs: "<pid> <time> <remote>"
_TOP_LEVEL = ("index.lock", "HEAD.lock", "config.lock", "packed-refs.lock", "ORIG_HEAD.lock", "FETCH_HEAD.lock")


def clear_stale_locks(controldir: Path, run_started: float | None = None) -> list[str]:
    """Delete the stale lock files under a repository's control dir; their paths relative to it."""
    found = lock_files(controldir)
    if not found:
        return []
    started = time.time() if run_started is None else run_started
    held = open_files()
    removed = []
    for path in found:
        try:
            mtime = path.stat().st_mtime
        except OSError:
            continue  # released meanwhile
        stale = str(path) not in held if held is not None else mtime < started - GRACE_SECONDS
        if stale:
            try:
                path.unlink()
            except FileNotFoundError:
                continue
            removed.append(path.relative_to(controldir).as_posix())
    return removed


TEMP_MAX_AGE = 60.0  # seconds: a write holds its temporary file for milliseconds


def clear_stale_temps(brain_dir: Path, tracked: Iterable[str]) -> int:
    """Remove pinky's temporary files (`fileio.is_temp`) a killed write left in the brain, e.g. a sync killed
    during its checkout: those whose writer is gone or that are older than a minute, and any a commit holds
    (an older pinky committed them; the next commit removes them everywhere). How many."""
    removed = 0
    for rel in tracked:
        if fileio.is_temp(rel.rpartition("/")[2]):
            try:
                (brain_dir / rel).unlink()
                removed += 1
            except OSError:
                pass
    for folder, dirs, _ in os.walk(brain_dir):
        dirs[:] = [d for d in dirs if d != ".git"]
        removed += fileio.sweep_temps(folder, max_age=TEMP_MAX_AGE)
    return removed


def mark_push(controldir: Path, remote: Path) -> Path:
    """Note that this process is about to push into the local repository `remote`. A push writes lock
    files there; if the process is killed they stay, and only this note says whose they were."""
    mark = controldir / PUSH_MARK
    mark.write_text(f"{os.getpid()} {time.time()} {remote}\n", encoding="utf-8")
    return mark


def clear_after_dead_push(controldir: Path) -> list[str]:
    """Lock files a killed push of ours left in a local remote: those created since the push began,
    when the pushing process is gone and no live process holds them. A lock another machine took on a
    shared disk is younger than nothing we know of, so it is never touched."""
    mark = controldir / PUSH_MARK
    try:
        pid_text, when_text, remote = mark.read_text(encoding="utf-8").strip().split(" ", 2)
        pid, when = int(pid_text), float(when_text)
    except (OSError, ValueError):  # no mark, or a garbled one: nothing known, nothing touched
        mark.unlink(missing_ok=True)
        return []
    if pid != os.getpid() and fileio.pid_alive(pid):
        return []
    remote_dir = Path(remote) if (Path(remote) / "objects").is_dir() else Path(remote) / ".git"
    held = open_files() or set()
    removed = []
    for path in lock_files(remote_dir):
        try:
            fresh = path.stat().st_mtime >= when - 1.0
        except OSError:
            continue
        if fresh and str(path) not in held:
            path.unlink(missing_ok=True)
            removed.append(f"{remote_dir.name}/{path.relative_to(remote_dir).as_posix()}")
    mark.unlink(missing_ok=True)
    return removed


def lock_files(controldir: Path) -> list[Path]:
    """Every git lock file: the top-level ones, loose objects' and refs'. One scandir per folder."""
    found = [controldir / name for name in _TOP_LEVEL if (controldir / name).exists()]
    objects = controldir / "objects"
    for folder in _subdirs(objects):
        found += [Path(e.path) for e in _entries(folder) if e.name.endswith(".lock")]
    stack = [controldir / "refs"]
    while stack:
        for entry in _entries(stack.pop()):
            if entry.is_dir(follow_symlinks=False):
                stack.append(Path(entry.path))
            elif entry.name.endswith(".lock"):
                found.append(Path(entry.path))
    return [path for path in found if path.name not in (OWN_LOCK, PUSH_MARK)]


def open_files() -> set[str] | None:
    """Paths any process has open (as /proc shows them), or None where that cannot be read."""
    proc = Path("/proc")
    if not (proc / "self" / "fd").is_dir():
        return None
    held: set[str] = set()
    for pid in _entries(proc):
        if not pid.name.isdigit():
            continue
        for fd in _entries(Path(pid.path) / "fd"):
            try:
                held.add(os.readlink(fd.path))
            except OSError:
                continue
    return held


def _subdirs(folder: Path) -> list[Path]:
    return [Path(e.path) for e in _entries(folder) if e.is_dir(follow_symlinks=False)]


def _entries(folder: Path | str) -> list[os.DirEntry[str]]:
    try:
        with os.scandir(folder) as it:
            return list(it)
    except OSError:
        return []

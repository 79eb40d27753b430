"""Stale git lock files: a `pinky sync` killed mid-write leaves `index.lock` or an
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
from pathlib import Path

GRACE_SECONDS = 5.0
OWN_LOCK = "pinky-sync.lock"  # sync's advisory lock: held by this run, never a git lock
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
    return [path for path in found if path.name != OWN_LOCK]


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

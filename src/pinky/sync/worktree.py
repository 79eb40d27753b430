"""Make the brain's files match a merged commit, without ever overwriting an edit made meanwhile.

Every file that changes is first checked against the committed version (a note saved during the
sync stops it), then written whole (`fileio.atomic_write`) or removed, and the index is updated.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path
from typing import TYPE_CHECKING

from pinky.base import fileio
from pinky.errors import SyncError
from pinky.sync.merge import Entry, Snapshot
from pinky.sync.repo import read_blob

if TYPE_CHECKING:
    from dulwich.repo import Repo


def checkout(repo: Repo, old: Snapshot, new: Snapshot) -> list[str]:
    """Make the files match ``new`` where they differ from ``old``; return those paths.

    Checks first that no file changed since the local commit, so nothing is overwritten.
    """
    root = Path(repo.path)
    changed = sorted(p for p in set(old) | set(new) if old.get(p) != new.get(p))
    for path in changed:
        _check_untouched(repo, root, path, old.get(path))
    for path in changed:
        entry = new.get(path)
        if entry is None:
            _remove(root, path)
        else:
            _write_entry(repo, root, path, entry)
    return changed


def restage(repo: Repo, paths: list[str]) -> None:
    """Bring the index in line with the files sync just wrote (adds, edits, deletions)."""
    from dulwich import porcelain

    if paths:
        porcelain.add(repo, paths=list(paths))  # relative paths are taken from the repo root


def _safe_target(root: Path, path: str) -> Path:
    """Refuse tree paths that would escape the brain or touch ``.git``."""
    parts = path.split("/")
    if path.startswith("/") or ".." in parts or parts[0] == ".git" or "" in parts:
        raise SyncError(f"refusing unsafe path from remote: {path!r}")
    return root.joinpath(*parts)


def _check_untouched(repo: Repo, root: Path, path: str, entry: Entry | None) -> None:
    """The working file must still equal the committed one before sync replaces it."""
    target = _safe_target(root, path)
    if entry is None:
        current_ok = not target.exists()
    else:
        current_ok = target.is_file() and _blob_id(target) == entry[1]
    if not current_ok:
        raise SyncError(f"{path} changed while syncing; run sync again")


def _blob_id(path: Path) -> bytes:
    """The git blob id of a file, hashed in chunks: comparing a 50 MB file with the commit must not
    hold both copies in memory."""
    digest = hashlib.sha1(usedforsecurity=False)
    with path.open("rb") as stream:
        digest.update(b"blob %d\0" % os.fstat(stream.fileno()).st_size)
        for chunk in iter(lambda: stream.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest().encode("ascii")


def _write_entry(repo: Repo, root: Path, path: str, entry: Entry) -> None:
    """Write one blob to disk atomically, exactly as committed, keeping the executable bit."""
    mode, sha = entry
    target = _safe_target(root, path)
    if mode & 0o170000 != 0o100000:
        return  # symlinks/submodules do not belong in a brain; leave them to git
    fileio.atomic_write(target, read_blob(repo, sha), mode=0o755 if mode & 0o111 else 0o644)


def _remove(root: Path, path: str) -> None:
    """Delete a file and the directories it leaves empty."""
    target = _safe_target(root, path)
    target.unlink(missing_ok=True)
    parent = target.parent
    while parent != root and parent.is_dir() and not any(parent.iterdir()):
        parent.rmdir()
        parent = parent.parent

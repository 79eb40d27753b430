"""Make the brain's files match a merged commit, without ever overwriting an edit made meanwhile.

Each file that changes is replaced on its own, under the two locks its writers take: the note's edit lock
(`pinky.knowledge.entries.edit_lock`, held by every update of a note) and an exclusive `flock` on the file
itself (held by `fileio.append`, the diary's and append-only notes' writer). Under them the file on disk is
hashed and compared with what the local commit holds:

* the same: it is replaced whole (`fileio.atomic_write`) or removed; bytes a writer that takes no lock
  appended to the old file meanwhile (seen by its size, still open) are appended to the new one;
* changed since the commit (an edit made during the sync): the disk version is merged into the incoming one
  by the same per-file rules as the merge (`pinky.sync.merge`): an append-only file is line-unioned, an
  ordinary one keeps the disk version with the incoming one beside it as a conflict copy. The next commit
  of the same run takes the result, so nothing is replaced that nobody has committed.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, BinaryIO

from pinky.base import fileio
from pinky.errors import SyncError
from pinky.sync.merge import UNION_LIMIT_BYTES, Entry, Snapshot, merge_snapshots
from pinky.sync.repo import RepoBlobs, read_blob

if TYPE_CHECKING:
    from dulwich.repo import Repo

_CHUNK = 1 << 20


def checkout(repo: Repo, old: Snapshot, new: Snapshot, short: str = "local",
             union_limit: int = UNION_LIMIT_BYTES) -> tuple[list[str], list[str]]:
    """Make the files match ``new`` where they differ from ``old``: (the paths written, the conflict copies
    written because a file was edited during the sync). ``short`` names those copies (the incoming commit).
    Every path is checked for safety before anything is written."""
    root = Path(repo.path)
    changed = sorted(p for p in set(old) | set(new) if old.get(p) != new.get(p))
    for path in changed:
        _safe_target(root, path)
    written, copies = list(changed), []
    for path in changed:
        for copy in _replace(repo, root, path, old.get(path), new.get(path), short, union_limit):
            copies.append(copy)
            written.append(copy)
    return written, copies


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


def _replace(repo: Repo, root: Path, path: str, before: Entry | None, after: Entry | None, short: str,
             union_limit: int) -> list[str]:
    """Replace one file under its writers' locks; the conflict copies written if it was edited meanwhile."""
    target = _safe_target(root, path)
    with _edit_lock(root, path), _locked_file(target, root) as current:
        seen = _blob_id(current) if current is not None else None
        if (seen[0] if seen else None) == (before[1] if before else None):
            _put(repo, target, after)
            if current is not None and seen is not None:
                _keep_late_appends(current, seen[1], target, after is None)
            return []
        data = _read_all(current) if current is not None else None
        return _merge_edit(repo, root, path, target, (before, after, data), short, union_limit)


def _merge_edit(repo: Repo, root: Path, path: str, target: Path,
                versions: tuple[Entry | None, Entry | None, bytes | None], short: str, union_limit: int) -> list[str]:
    """The file was edited during the sync: merge the disk version (ours) with the incoming one (theirs)
    from the committed one (base), write the result and any conflict copy; return the copies."""
    before, after, data = versions
    blobs = RepoBlobs(repo)
    ours = None if data is None else (_mode_of(target), blobs.write(data))
    merged, copies = merge_snapshots(
        {path: before} if before else {}, {path: ours} if ours else {}, {path: after} if after else {}, blobs,
        short, union_limit=union_limit)
    if merged.get(path) != ours:
        _put(repo, target, merged.get(path))
    for copy in copies:  # a new name: no writer to lock out (and its edit lock may be the one held here)
        _put(repo, _safe_target(root, copy), merged[copy])
    return copies


@contextmanager
def _edit_lock(root: Path, path: str) -> Iterator[None]:
    """The edit lock every update of the global note ``path`` takes (`pinky.knowledge.entries`)."""
    from pinky.knowledge.entries import edit_lock_at

    with edit_lock_at(root, "global", path):
        yield


@contextmanager
def _locked_file(target: Path, root: Path) -> Iterator[BinaryIO | None]:
    """The file open for reading under an exclusive flock (what `fileio.append` takes); None when absent."""
    handle = _open_locked(target, root)
    try:
        yield handle
    finally:
        if handle is not None:
            handle.close()


def _open_locked(target: Path, root: Path) -> BinaryIO | None:
    """Open and flock the file; one replaced between the open and the lock is opened again, as the lock must
    be on the file now there."""
    for _ in range(100):
        try:
            handle = fileio.open_regular(target, root)
        except FileNotFoundError:
            return None
        except OSError as exc:
            raise SyncError(f"cannot read {target} to update it: {exc.strerror or exc}") from None
        try:
            fileio.lock_descriptor(handle.fileno())
            if fileio.same_file(handle.fileno(), target):
                return handle
        except FileNotFoundError:
            pass  # removed meanwhile: look again
        except BaseException:
            handle.close()
            raise
        handle.close()
    raise SyncError(f"{target} kept being replaced while syncing; run sync again")


def _blob_id(stream: BinaryIO) -> tuple[bytes, int]:
    """The git blob id of an open file and the size hashed, read in chunks: comparing a 50 MB file with the
    commit must not hold both copies in memory."""
    size = os.fstat(stream.fileno()).st_size
    digest = hashlib.sha1(usedforsecurity=False)
    digest.update(b"blob %d\0" % size)
    done = 0
    while done < size:
        chunk = os.pread(stream.fileno(), min(_CHUNK, size - done), done)
        if not chunk:
            break
        digest.update(chunk)
        done += len(chunk)
    return digest.hexdigest().encode("ascii"), size


def _read_all(stream: BinaryIO) -> bytes:
    stream.seek(0)
    return stream.read()


def _mode_of(target: Path) -> int:
    return 0o100755 if os.access(target, os.X_OK) else 0o100644


def _keep_late_appends(old: BinaryIO, hashed: int, target: Path, removed: bool) -> None:
    """A writer that takes no lock (`echo >>`) may append to the old file between the hash and the rename;
    those bytes are added to the new file (or the file is put back, if sync removed it)."""
    size = os.fstat(old.fileno()).st_size
    if size <= hashed:
        return
    late = os.pread(old.fileno(), size - hashed, hashed)
    if removed:
        fileio.atomic_write(target, _read_all(old))
    else:
        fileio.append(target, late)


def _put(repo: Repo, target: Path, entry: Entry | None) -> None:
    """Write one blob to disk atomically, exactly as committed, keeping the executable bit; None removes."""
    if entry is None:
        _remove(Path(repo.path), target)
        return
    mode, sha = entry
    if mode & 0o170000 != 0o100000:
        return  # symlinks/submodules do not belong in a brain; leave them to git
    fileio.atomic_write(target, read_blob(repo, sha), mode=0o755 if mode & 0o111 else 0o644)


def _remove(root: Path, target: Path) -> None:
    """Delete a file and the directories it leaves empty."""
    target.unlink(missing_ok=True)
    parent = target.parent
    while parent != root and parent.is_dir() and not any(parent.iterdir()):
        try:
            parent.rmdir()
        except OSError:  # a writer put a file there meanwhile
            return
        parent = parent.parent

"""Make the brain's files match a merged commit, without ever overwriting an edit made meanwhile.

Each file that changes is replaced on its own, under the two locks its writers take: the note's edit lock
(`pinky.knowledge.edit_locks.edit_lock`, held by every update of a note) and an exclusive `flock` on the file
itself (held by `fileio.append`, the diary's and append-only notes' writer). Under them the file on disk is
hashed and compared with what the local commit holds:

* the same: it becomes the incoming version: appended to in place when that only adds to its end, else
  replaced whole (`fileio.write_temp`, then a rename) or removed;
* changed since the commit (an edit made during the sync): the disk version is merged into the incoming one
  by the same per-file rules as the merge (`pinky.sync.merge`): an append-only file is line-unioned, an
  ordinary one keeps the disk version with the incoming one beside it as a conflict copy. The next commit
  of the same run takes the result, so nothing is replaced that nobody has committed.

Writers that take no lock (an editor, `echo >>`, a logger) are met as `pinky.sync.unlocked` describes: the file
is checked again just before the rename (the same file at the path, and the bytes read still its first ones:
else it is read and merged again), what is appended to the old file after the rename is copied into the new
one, and a file another process holds open for writing is never replaced.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, BinaryIO

from pinky.base import fileio
from pinky.errors import SyncError
from pinky.sync.merge import UNION_LIMIT_BYTES, Entry, Snapshot, appended_form, conflict_copy_name, merge_snapshots
from pinky.sync.repo import RepoBlobs, read_blob
from pinky.sync.unlocked import Key, LateAppends, held_for_writing, key_of

if TYPE_CHECKING:
    from dulwich.repo import Repo

_CHUNK = 1 << 20
_ATTEMPTS = 50  # reads of one file a writer kept rewriting between the read and the rename


@dataclass(frozen=True)
class _Checkout:
    repo: Repo
    root: Path
    short: str  # names the conflict copies (the incoming commit)
    union_limit: int
    held: set[Key]  # files other processes hold open for writing: never replaced
    late: LateAppends


@dataclass(frozen=True)
class _Read:
    """What sync read of a file: its first `size` bytes (their git blob id) and its stat when it read them."""

    size: int
    blob_id: bytes
    stat: tuple[int, int, int]  # size, mtime_ns, ctime_ns


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
    run = _Checkout(repo, root, short, union_limit, held_for_writing(root), LateAppends(root))
    try:
        for path in changed:
            for copy in _replace(run, path, old.get(path), new.get(path)):
                copies.append(copy)
                written.append(copy)
        run.late.settle()
    finally:
        run.late.close()
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


def _replace(run: _Checkout, path: str, before: Entry | None, after: Entry | None) -> list[str]:
    """Replace one file under its writers' locks; the conflict copies written if it was edited meanwhile."""
    target = _safe_target(run.root, path)
    for _ in range(_ATTEMPTS):
        with _edit_lock(run.root, path), _locked_file(target, run.root) as current:
            copies = _replace_once(run, path, target, current, (before, after))
        if copies is not None:
            return copies
    raise SyncError(f"{target} kept being rewritten while syncing; run sync again")


def _replace_once(run: _Checkout, path: str, target: Path, current: BinaryIO | None,
                  versions: tuple[Entry | None, Entry | None]) -> list[str] | None:
    """One attempt at `_replace`; None when a writer changed the file under it (nothing was written)."""
    before, after = versions
    if current is None:
        entry, copies = _resolved(run, path, target, None, versions)
        _put(run.repo, target, entry)
        return _with_copies(run, copies)
    if key_of(current.fileno()) in run.held:
        return _keep_inode(run, path, target, current, versions)
    read = _hashed(current)
    if read.blob_id == (before[1] if before else None):
        return [] if _write_over(run, target, current, read, after) else None
    data, read = _read_all(current)
    entry, copies = _resolved(run, path, target, data, versions)
    if not _write_over(run, target, current, read, entry):
        return None
    return _with_copies(run, copies)


def _resolved(run: _Checkout, path: str, target: Path, data: bytes | None,
              versions: tuple[Entry | None, Entry | None]) -> tuple[Entry | None, list[tuple[str, Entry]]]:
    """The file was edited during the sync: merge the disk version ``data`` (ours) with the incoming one
    (theirs) from the committed one (base): the entry to write (None: none) and the conflict copies."""
    before, after = versions
    if before is None and data is None:
        return after, []
    blobs = RepoBlobs(run.repo)
    ours = None if data is None else (_mode_of(target), blobs.write(data))
    merged, copies = merge_snapshots(
        {path: before} if before else {}, {path: ours} if ours else {}, {path: after} if after else {}, blobs,
        run.short, union_limit=run.union_limit)
    return merged.get(path), [(copy, merged[copy]) for copy in copies]


def _with_copies(run: _Checkout, copies: list[tuple[str, Entry]]) -> list[str]:
    """Write the conflict copies: new names, so no writer to lock out (and the edit lock may be the one held)."""
    for copy, entry in copies:
        _put(run.repo, _safe_target(run.root, copy), entry)
    return [copy for copy, _ in copies]


def _keep_inode(run: _Checkout, path: str, target: Path, current: BinaryIO,
                versions: tuple[Entry | None, Entry | None]) -> list[str] | None:
    """A file another process holds open for writing: its later writes go to this very file, so it is never
    replaced. The incoming version is appended in place when it only adds to the end (or, for an append-only
    file, its missing lines are); else the file stays and the incoming version goes beside it, a conflict copy.
    A removal is not made (a removed file against an edited one keeps the edited one)."""
    data, _ = _read_all(current)
    before = versions[0]
    committed = before is not None and _git_id(data) == before[1]
    entry, copies = _resolved(run, path, target, data, versions) if not committed else (versions[1], [])
    if entry is not None and entry[0] & 0o170000 == 0o100000:
        incoming = read_blob(run.repo, entry[1])
        extended = incoming if incoming.startswith(data) else appended_form(path, data, incoming)
        if extended is None:
            copies.append((conflict_copy_name(path, run.short), entry))
        elif not _append_in_place(target, current, extended[len(data):]):
            return None  # replaced meanwhile: look again
    return _with_copies(run, copies)


@contextmanager
def _edit_lock(root: Path, path: str) -> Iterator[None]:
    """The edit lock every update of the global note ``path`` takes (`pinky.knowledge.entries`)."""
    from pinky.knowledge.edit_locks import edit_lock_at

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


def _git_id(data: bytes) -> bytes:
    return hashlib.sha1(b"blob %d\0" % len(data) + data, usedforsecurity=False).hexdigest().encode("ascii")


def _hashed(stream: BinaryIO, size: int | None = None) -> _Read:
    """The git blob id of an open file's first ``size`` bytes (all of them by default), read in chunks:
    comparing a 50 MB file with the commit must not hold both copies in memory."""
    st = os.fstat(stream.fileno())
    size = st.st_size if size is None else size
    digest = hashlib.sha1(usedforsecurity=False)
    digest.update(b"blob %d\0" % size)
    done = 0
    while done < size:
        chunk = os.pread(stream.fileno(), min(_CHUNK, size - done), done)
        if not chunk:
            break
        digest.update(chunk)
        done += len(chunk)
    return _Read(size, digest.hexdigest().encode("ascii"), (st.st_size, st.st_mtime_ns, st.st_ctime_ns))


def _read_all(stream: BinaryIO) -> tuple[bytes, _Read]:
    st = os.fstat(stream.fileno())
    stream.seek(0)
    data = stream.read()
    return data, _Read(len(data), _git_id(data), (st.st_size, st.st_mtime_ns, st.st_ctime_ns))


def _unchanged(current: BinaryIO, read: _Read, target: Path) -> bool:
    """True while ``current`` is still the file at ``target`` and its first bytes are still those sync read
    (a writer that takes no lock may only have appended since: `LateAppends` carries that over)."""
    try:
        if not fileio.same_file(current.fileno(), target):
            return False
    except FileNotFoundError:
        return False
    st = os.fstat(current.fileno())
    if (st.st_size, st.st_mtime_ns, st.st_ctime_ns) == read.stat:
        return True
    return st.st_size >= read.size and _hashed(current, read.size).blob_id == read.blob_id


def _write_over(run: _Checkout, target: Path, current: BinaryIO, read: _Read, entry: Entry | None) -> bool:
    """Make the file at ``target`` (open as ``current``, read as ``read``) hold ``entry``; False when a writer
    changed it meanwhile, and nothing was written."""
    if entry is None:
        if not _unchanged(current, read, target):
            return False
        _remove(run.root, target)
        run.late.watch(current, read.size, target, removed=True)
        return True
    mode, sha = entry
    if mode & 0o170000 != 0o100000:
        return True  # symlinks/submodules do not belong in a brain; leave them to git
    data = read_blob(run.repo, sha)
    if _same_mode(current, mode) and _starts_with(current, data, read.size):
        return _append_in_place(target, current, data[read.size:])
    temp = fileio.write_temp(target, data, mode=0o755 if mode & 0o111 else 0o644)
    try:
        if not _unchanged(current, read, target):
            return False
        os.replace(temp, target)
    finally:
        if os.path.lexists(temp):
            os.unlink(temp)
    run.late.watch(current, read.size, target)
    return True


def _same_mode(current: BinaryIO, mode: int) -> bool:
    return bool(os.fstat(current.fileno()).st_mode & 0o100) == bool(mode & 0o111)


def _starts_with(current: BinaryIO, data: bytes, size: int) -> bool:
    """True when ``data`` begins with the file's first ``size`` bytes (compared in chunks)."""
    if len(data) < size:
        return False
    done = 0
    while done < size:
        chunk = os.pread(current.fileno(), min(_CHUNK, size - done), done)
        if not chunk or data[done:done + len(chunk)] != chunk:
            return False
        done += len(chunk)
    return True


def _append_in_place(target: Path, current: BinaryIO, tail: bytes) -> bool:
    """Append ``tail`` to the file itself (still the one at ``target``), as its writers do: a writer that
    takes no lock and appends meanwhile loses nothing. False when the path holds another file by now."""
    if not tail:
        return True
    fd = os.open(target, os.O_WRONLY | os.O_APPEND | getattr(os, "O_BINARY", 0))
    try:
        if key_of(fd) != key_of(current.fileno()):
            return False
        view = memoryview(tail)
        while view:
            view = view[os.write(fd, view):]
        os.fsync(fd)
    finally:
        os.close(fd)
    return True


def _mode_of(target: Path) -> int:
    return 0o100755 if os.access(target, os.X_OK) else 0o100644


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

"""Files pinky reads and writes inside a repository: a checkout it did not write, which may hold anything git can.

A repository can ship `AGENTS.md` as a symbolic link to `~/.ssh/id_rsa`, `.cursor` as a link to `~/.cursor`, or a
FIFO named like a file pinky reads. Every read and write pinky makes inside a repository (the rules files and the
AGENTS.md block, `setup --project`, `pinky init`'s lines, the clone's `.git/info/exclude`) goes through here:

- `resolve` walks the path from the repository's root down, one lstat per part: a symbolic link that stays inside
  the repository is followed (`AGENTS.md -> CLAUDE.md` is common, and the link is kept), one that leads out, or
  into git's own folder (`AGENTS.md -> .git/hooks/pre-commit` would have the digest's text run by the next
  commit), is refused, and so is anything but a folder on the way or a regular file at the end;
- reads open the resolved path with O_NOFOLLOW | O_NONBLOCK and check it again with fstat (a FIFO never blocks,
  a link swapped in meanwhile is not followed, `/dev/zero` is not read), size-capped;
- `rewrite` is a read-modify-write that loses no concurrent edit: under a lock on the file between pinky's
  writers, written only if the file is still what was read (else read again), and whatever a writer that takes no
  lock appended to the old file while it was being replaced is appended to the new one.

A refusal is `OutsideRepository` (an OSError, so callers that skip unreadable files skip these too), one line.
Stdlib only: the hooks of Cursor, Copilot CLI and Windsurf write their rules file through this module.
"""

from __future__ import annotations

import os
import stat

from pinky.base.fileio import (
    UnsafeFile,
    _unlink_quietly,
    _write_temp,
    append,
    atomic_write,
    create_new,
    file_kind,
    lock_descriptor,
    same_file,
)

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable

MAX_BYTES = 4 * 1024 * 1024  # a rules file, AGENTS.md or a project config is kilobytes: more is not one
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_NONBLOCK = getattr(os, "O_NONBLOCK", 0)
_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
_ATTEMPTS = 50


class OutsideRepository(UnsafeFile):
    """A path inside a repository that pinky will not read or write: it leads out, or is no regular file."""


def _inside(path: str, base: str) -> bool:
    return path == base or path.startswith(base.rstrip(os.sep) + os.sep)


def _refuse(root: str, relative: str, why: str) -> OutsideRepository:
    return OutsideRepository(f"{os.path.join(root, relative)}: {why}")


def _parts(root: str, relative: str) -> list[str]:
    parts = relative.replace("\\", "/").split("/")
    if os.path.isabs(relative) or any(part in ("", ".", "..") for part in parts):
        raise _refuse(root, relative, "not a plain path inside the repository")
    return parts


def _which(parts: list[str], index: int) -> str:
    """How a refusal names the part of the path it is about: "" for the file itself, "its folder x is " else."""
    return "" if index == len(parts) - 1 else f"its folder {'/'.join(parts[:index + 1])} is "


def resolve(root: str | os.PathLike[str], relative: str) -> str:
    """The real path of `relative` (a path below `root`, with `/`), once every existing part of it was checked:
    links are followed only while they stay inside `root`, every folder on the way is a folder and the file, when
    it exists, a regular file. Missing parts are fine (a file about to be created). OutsideRepository otherwise."""
    root_text = os.fspath(root)
    base = os.path.realpath(root_text)
    parts = _parts(root_text, relative)
    current = base
    for index, part in enumerate(parts):
        candidate = os.path.join(current, part)
        try:
            mode = os.lstat(candidate).st_mode
        except FileNotFoundError:
            return os.path.join(candidate, *parts[index + 1:])  # nothing from here on exists to lead elsewhere
        if stat.S_ISLNK(mode):
            candidate = os.path.realpath(candidate)
            if not _inside(candidate, base):
                raise _refuse(root_text, relative, f"{_which(parts, index)}a symbolic link to {candidate}, "
                                                   "outside the repository")
            if ".git" in os.path.relpath(candidate, base).split(os.sep):  # its config, its hooks: never ours
                raise _refuse(root_text, relative, f"{_which(parts, index)}a symbolic link to {candidate}, "
                                                   "inside git's own folder")
            try:
                mode = os.stat(candidate).st_mode
            except FileNotFoundError:  # a dangling link inside the repository: its target is created
                return os.path.join(candidate, *parts[index + 1:])
        last = index == len(parts) - 1
        if not last and not stat.S_ISDIR(mode):
            raise _refuse(root_text, relative, f"{_which(parts, index)}not a folder")
        if last and not stat.S_ISREG(mode):
            raise _refuse(root_text, relative, f"{file_kind(mode) or 'a folder'}, not a regular file")
        current = candidate
    return current


def _open(root: str, relative: str, path: str, flags: int) -> int | None:
    """`path` (resolved) opened without following a link or blocking, checked to be a regular file of at most
    MAX_BYTES; None when it does not exist."""
    try:
        fd = os.open(path, flags | _NOFOLLOW | _NONBLOCK | _CLOEXEC)
    except FileNotFoundError:
        return None
    except OSError as exc:  # ELOOP: a link swapped in since resolve; ENXIO: a FIFO with no writer
        raise _refuse(root, relative, f"not openable as a regular file ({exc.strerror})") from None
    info = os.fstat(fd)
    why = None if stat.S_ISREG(info.st_mode) else f"{file_kind(info.st_mode) or 'a folder'}, not a regular file"
    if why is None and info.st_size > MAX_BYTES:
        why = f"{info.st_size:,} bytes, more than the {MAX_BYTES:,} pinky reads"
    if why:
        os.close(fd)
        raise _refuse(root, relative, why)
    return fd


def _read_all(fd: int, start: int = 0) -> bytes:
    chunks: list[bytes] = []
    offset = start
    while True:
        chunk = os.pread(fd, 1 << 16, offset)
        if not chunk:
            return b"".join(chunks)
        chunks.append(chunk)
        offset += len(chunk)
        if offset - start > MAX_BYTES:
            raise OSError(f"it grew past {MAX_BYTES:,} bytes while being read")


def read(root: str | os.PathLike[str], relative: str) -> bytes | None:
    """The bytes of the file `relative` below `root`; None when there is none. OutsideRepository (see resolve)."""
    root_text = os.fspath(root)
    fd = _open(root_text, relative, resolve(root_text, relative), os.O_RDONLY)
    if fd is None:
        return None
    try:
        return _read_all(fd)
    finally:
        os.close(fd)


def read_text(root: str | os.PathLike[str], path: str) -> str | None:
    """The text of `path` (relative to `root`, or absolute) for a check that only compares, such as the
    instructions-file guard; None when it is missing or refused (a link out of the repository, a FIFO). A path
    outside `root` (the user's own ~/.claude/CLAUDE.md) is read when it is a regular file."""
    root_text = os.path.abspath(os.fspath(root))
    target = os.path.normpath(os.path.join(root_text, os.path.expanduser(path)))
    try:
        if target.startswith(root_text.rstrip(os.sep) + os.sep):
            data = read(root_text, os.path.relpath(target, root_text).replace(os.sep, "/"))
        else:
            from pinky.base.fileio import read_regular

            data = read_regular(target, limit=MAX_BYTES)
    except OSError:
        return None
    return None if data is None else data.decode("utf-8", "replace")


def write(root: str | os.PathLike[str], relative: str, data: bytes | str, *, mode: int | None = None) -> str:
    """Replace (or create) the file `relative` below `root` atomically; its real path. An existing file keeps its
    permissions unless `mode` is given; a link inside the repository is kept, its target written."""
    root_text = os.fspath(root)
    path = resolve(root_text, relative)
    _make_parent(root_text, relative, path)
    if mode is None:
        try:
            mode = stat.S_IMODE(os.stat(path).st_mode)
        except FileNotFoundError:
            mode = 0o644
    atomic_write(path, data, mode=mode)
    return path


def remove(root: str | os.PathLike[str], relative: str) -> str | None:
    """Delete the file `relative` below `root` (never what a link leads to outside it); its path, or None."""
    root_text = os.fspath(root)
    path = resolve(root_text, relative)
    try:
        os.unlink(path)
    except FileNotFoundError:
        return None
    return path


def _make_parent(root: str, relative: str, path: str) -> None:
    """Create the folders missing above `path`, then check again that none of them leads out (one was made a
    link between resolve and now)."""
    folder = os.path.dirname(path)
    if not os.path.isdir(folder):
        os.makedirs(folder, exist_ok=True)
        resolve(root, relative)


def rewrite(root: str | os.PathLike[str], relative: str, change: Callable[[str | None], str | None]) -> bool:
    """Read the file `relative` below `root` (None: there is none), let `change` make its new text (None: delete
    it), and write that, losing no concurrent edit; True when the file changed.

    Pinky's writers take an flock on the file; an editor or a shell appending takes none. So the text is written
    only if the file still begins with what was read (else it is read again: an edit in place, a file replaced),
    and whatever was appended to it since it was read, up to a moment after the rename that replaces it, is
    appended to the new file (a writer that appends all the time never makes the rewrite start again)."""
    root_text = os.fspath(root)
    for _ in range(_ATTEMPTS):
        path = resolve(root_text, relative)
        fd = _open(root_text, relative, path, os.O_RDONLY)
        if fd is None:
            new = change(None)
            if new is None:
                return False
            _make_parent(root_text, relative, path)
            if create_new(path, new):
                return True
            continue  # created meanwhile: read what is there
        try:
            with FolderLock(path):
                done = _rewrite_open(fd, path, change)
        finally:
            os.close(fd)  # releases the flock
        if done is not None:
            return done
    raise _refuse(root_text, relative, f"kept changing while being rewritten ({_ATTEMPTS} attempts)")


class FolderLock:
    """An flock on `path`'s folder, which no rewrite replaces, held for a `with` block: pinky's writers of one file
    take turns instead of one of them starting again each time another replaced the file it waited on (with the
    file's own lock only, a writer could be starved of its turn). Nothing where a folder cannot be locked (no
    fcntl, some network file systems)."""

    def __init__(self, path: str) -> None:
        self.folder = os.path.dirname(path)
        self.fd: int | None = None

    def __enter__(self) -> FolderLock:
        try:
            self.fd = os.open(self.folder, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | _CLOEXEC)
            lock_descriptor(self.fd)
        except OSError:
            self.__exit__()
        return self

    def __exit__(self, *exc: object) -> None:
        if self.fd is not None:
            os.close(self.fd)  # releases the flock
            self.fd = None


def _rewrite_open(fd: int, path: str, change: Callable[[str | None], str | None]) -> bool | None:
    """One attempt of rewrite on the open file; None when the file changed under it (try again)."""
    lock_descriptor(fd)
    if not same_file(fd, path):
        return None  # replaced while waiting for the lock
    old = _read_all(fd)
    text = old.decode("utf-8", "surrogateescape")
    new = change(text)
    if new == text:
        return False
    temp = None if new is None else _write_temp(path, new.encode("utf-8", "surrogateescape"),
                                                stat.S_IMODE(os.fstat(fd).st_mode), True)
    if not _read_all(fd).startswith(old) or not same_file(fd, path):
        if temp:
            _unlink_quietly(temp)
        return None  # changed meanwhile, not only at its end: start again from what is there now
    if temp is None:
        os.unlink(path)
    else:
        os.replace(temp, path)
    _keep_late_appends(fd, len(old), path)
    return True


def _keep_late_appends(fd: int, size: int, path: str) -> None:
    """Bytes a writer that takes no lock appended to the replaced file after it was last compared go to the end of
    the new one (a writer opens, writes and closes within microseconds: a short second look catches the slow)."""
    import time

    for pause in (0.0, 0.002, 0.01):
        time.sleep(pause)
        late = _read_all(fd, size)
        if late:
            _add(path, late)
            size += len(late)


def _add(path: str, data: bytes) -> None:
    """Append `data` to `path`, creating it when the rewrite deleted it."""
    for _ in range(_ATTEMPTS):
        try:
            append(path, data)
            return
        except FileNotFoundError:
            if create_new(path, data):
                return

"""Files that are never half-written, and locks between processes: the one implementation of each.

Markdown is the source of truth, so every write lands whole or not at all: a temporary file in
the same folder, flushed to disk, then renamed over the target (readers see the old file or the
new one, never a mix). A new file is published with a hard link, which fails when the name is
taken, so two processes saving the same title never overwrite each other.

Files are only read or written where they belong. `outside` is the one check that a path, once its
symbolic links are followed, stays inside its root (a knowledge folder, the brain's home): every
write calls `ensure_inside` first, and reads go through `open_regular`, which also refuses FIFOs,
devices and sockets before opening anything (a FIFO named `.md` would block a read for ever, and
`/dev/zero` would fill the memory).

Stdlib only and no `tempfile`/`pathlib`/`threading`: the hooks write their state files through this
module and must start in a few milliseconds.
"""

from __future__ import annotations

import errno
import itertools
import os
import stat
from _thread import get_ident  # = threading.get_ident, without loading threading (~2 ms)

TYPE_CHECKING = False  # `typing` is not loaded on the hooks' path
if TYPE_CHECKING:
    from typing import BinaryIO

_COUNTER = itertools.count()
_BINARY = getattr(os, "O_BINARY", 0)
_NONBLOCK = getattr(os, "O_NONBLOCK", 0)
_SPECIAL = ((stat.S_ISFIFO, "a named pipe (FIFO)"), (stat.S_ISCHR, "a character device"),
            (stat.S_ISBLK, "a block device"), (stat.S_ISSOCK, "a socket"))


# --- where a file may be: inside its root, and a regular file ---------------------------------------------


class UnsafeFile(OSError):
    """A path pinky will not open: a special file, or one that leads out of its root. An OSError, so
    readers that already skip unreadable files skip these too."""


def file_kind(mode: int) -> str | None:
    """What a special file is ('a named pipe (FIFO)', 'a character device', ...); None for anything else."""
    for test, name in _SPECIAL:
        if test(mode):
            return name
    return None


def _real_under(path: str, root: str) -> bool:
    real, base = os.path.realpath(path), os.path.realpath(root)
    return real == base or real.startswith(base.rstrip(os.sep) + os.sep)


def _no_link_below(target: str, base: str) -> bool:
    """True when no existing part of `target` below `base` is a symbolic link (one lstat per part)."""
    rest, current = target[len(base):].strip(os.sep), base
    for part in rest.split(os.sep) if rest else ():
        current = os.path.join(current, part)
        try:
            mode = os.lstat(current).st_mode
        except FileNotFoundError:
            return True  # nothing from here on exists, so nothing can lead elsewhere
        except OSError:
            return False  # e.g. a file used as a folder: let realpath decide
        if stat.S_ISLNK(mode):
            return False
    return True


def outside(path: str | os.PathLike[str], root: str | os.PathLike[str]) -> str | None:
    """Why `path` is not inside `root` once symbolic links are followed; None when it is.

    Missing parts are fine (a file about to be created). Cheap when nothing below the root is a
    link: one lstat per part of the path below the root, and `realpath` only when a link is met."""
    given = os.fspath(path)
    target, base = os.path.abspath(given), os.path.abspath(root)
    lexically_inside = target == base or target.startswith(base.rstrip(os.sep) + os.sep)
    if lexically_inside and ".." not in given.replace("\\", "/").split("/") and _no_link_below(target, base):
        return None
    if _real_under(target, base):
        return None
    return f"it leads to {os.path.realpath(target)}, outside {base}"


def ensure_inside(path: str | os.PathLike[str], root: str | os.PathLike[str], *, done: str = "written") -> str:
    """`path` as given, once checked that a write there stays inside `root` and lands on no special file.

    Raises InvalidInput otherwise: a symbolic link (the file, or a folder on the way) must not lead a
    write out of the knowledge folder, into a FIFO or onto a device. `done` finishes the message
    ("nothing was written")."""
    target = os.fspath(path)
    why = outside(target, root)
    if why is None:
        try:
            kind = file_kind(os.stat(target).st_mode)
        except OSError:
            kind = None
        why = None if kind is None else f"it is {kind}, not a regular file"
    if why is None:
        return target
    from pinky.errors import InvalidInput  # only when something is wrong: the hooks import this module

    raise InvalidInput(f"{target}: {why}; pinky reads and writes only regular files inside {root}, "
                       f"so nothing was {done}")


def open_regular(path: str | os.PathLike[str], root: str | os.PathLike[str] | None = None) -> BinaryIO:
    """Open a regular file for reading in binary; raise UnsafeFile (an OSError) for anything else.

    The file is checked with stat before it is opened, so a FIFO or a device is never opened, and
    checked again once open (in case it was swapped meanwhile). With `root`, the file must also stay
    inside it once symbolic links are followed."""
    target = os.fspath(path)
    why = outside(target, root) if root is not None else None
    kind = None if why else file_kind(os.stat(target).st_mode)
    if why or kind:
        raise UnsafeFile(f"{target}: {why or f'{kind}, not a regular file'}")
    fd = os.open(target, os.O_RDONLY | _BINARY | _NONBLOCK)
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            raise UnsafeFile(f"{target}: {file_kind(mode) or 'a folder'}, not a regular file")
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


def read_regular(path: str | os.PathLike[str], root: str | os.PathLike[str] | None = None,
                 limit: int = -1) -> bytes:
    """The bytes of a regular file (the first `limit` of them when given); see open_regular."""
    with open_regular(path, root) as handle:
        return handle.read(limit)


# --- writing ---------------------------------------------------------------------------------------------


def _temp_path(target: str) -> str:
    """A name no other writer uses: pid and thread differ between writers, the counter within one."""
    folder, name = os.path.split(target)
    return os.path.join(folder, f".{name}.{os.getpid()}.{get_ident()}.{next(_COUNTER)}.tmp")


def temp_writer(name: str) -> int | None:
    """The pid of the process writing the temporary file `name` (one of `_temp_path`'s), else None."""
    if not (name.startswith(".") and name.endswith(".tmp")):
        return None
    parts = name[1:-4].rsplit(".", 3)
    return int(parts[1]) if len(parts) == 4 and all(p.isdigit() for p in parts[1:]) else None


def is_temp(name: str) -> bool:
    """True for a temporary file name of `atomic_write`/`create_new` (`.<name>.<pid>.<thread>.<n>.tmp`): never
    a note, never committed by sync, removed once its writer is gone."""
    return temp_writer(name) is not None


def sweep_temps(folder: str | os.PathLike[str], max_age: float | None = None) -> int:
    """Remove the temporary files a killed writer left in `folder` (its pid is gone); how many. A writer
    killed between writing and renaming leaves one: hidden, but litter in a user's tree (git status).
    With `max_age`, one older than that many seconds goes too, whoever's pid it names (a writer holds its
    temporary file for milliseconds: an old one is a leftover whose pid was taken again)."""
    removed = 0
    try:
        names = os.listdir(folder)
    except OSError:
        return 0
    for name in names:
        pid = temp_writer(name)
        if pid is None or pid == os.getpid():
            continue
        path = os.path.join(folder, name)
        if pid_alive(pid) and not (max_age is not None and _age(path) > max_age):
            continue  # its write may be under way
        try:
            os.unlink(path)
            removed += 1
        except OSError:
            pass
    return removed


def pid_alive(pid: int) -> bool:
    """True while the process `pid` runs (also another user's, which may not be signalled)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True  # another user's: alive
    return True


def _age(path: str) -> float:
    import time

    try:
        return time.time() - os.stat(path).st_mtime
    except OSError:
        return 0.0


def unwritable(exc: BaseException) -> bool:
    """An OSError that says the folder or file may not be written (permissions, a read-only mount)."""
    return isinstance(exc, OSError) and exc.errno in (errno.EACCES, errno.EPERM, errno.EROFS)


def _as_bytes(data: bytes | str) -> bytes:
    return data.encode("utf-8") if isinstance(data, str) else data


def _write_temp(target: str, data: bytes, mode: int, durable: bool) -> str:
    temp = _temp_path(target)
    fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _BINARY, mode)
    try:
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view):]
            if durable:
                os.fsync(fd)
        finally:
            os.close(fd)
    except BaseException:
        _unlink_quietly(temp)
        raise
    return temp


def _unlink_quietly(path: str) -> None:
    try:
        os.unlink(path)
    except OSError:
        pass


def write_temp(path: str | os.PathLike[str], data: bytes | str, *, mode: int = 0o644) -> str:
    """The first half of `atomic_write`: `data` written and flushed to a temporary file beside `path` (its
    folder created if needed); the caller renames it over `path` (`os.replace`) or removes it."""
    target = os.fspath(path)
    os.makedirs(os.path.dirname(target) or ".", exist_ok=True)
    return _write_temp(target, _as_bytes(data), mode, True)


def atomic_write(path: str | os.PathLike[str], data: bytes | str, *, mode: int = 0o644,
                 durable: bool = True) -> None:
    """Replace `path` with `data` atomically, creating its folder if needed.

    `durable=False` skips the fsync: for caches and state files that may be lost in a crash."""
    target = os.fspath(path)
    os.makedirs(os.path.dirname(target) or ".", exist_ok=True)
    temp = _write_temp(target, _as_bytes(data), mode, durable)
    try:
        os.replace(temp, target)
    except BaseException:
        _unlink_quietly(temp)
        raise


def create_new(path: str | os.PathLike[str], data: bytes | str) -> bool:
    """Create `path` holding `data` unless the name is taken; True when this call created it.

    Never overwrites and never shows a half-written file where hard links work. Where they do
    not (some network and FAT file systems), an exclusive create is used instead; it opens with
    O_APPEND so a concurrent appender (the diary) cannot be overwritten by the first write."""
    target = os.fspath(path)
    os.makedirs(os.path.dirname(target) or ".", exist_ok=True)
    content = _as_bytes(data)
    temp = _write_temp(target, content, 0o644, True)
    try:
        os.link(temp, target)
        return True
    except FileExistsError:
        return False
    except OSError:
        return _create_exclusive(target, content)
    finally:
        _unlink_quietly(temp)


def _create_exclusive(target: str, content: bytes) -> bool:
    try:
        fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_APPEND | _BINARY, 0o644)
    except FileExistsError:
        return False
    try:
        os.write(fd, content)
        os.fsync(fd)
    finally:
        os.close(fd)
    return True


def write_numbered(directory: str | os.PathLike[str], stem: str, data: bytes | str,
                   *, suffix: str = ".md", attempts: int = 10_000) -> str:
    """Create `<directory>/<stem><suffix>`, or `<stem>-2<suffix>`, `-3`, … when taken; returns the path."""
    folder = os.fspath(directory)
    for n in range(1, attempts + 1):
        target = os.path.join(folder, f"{stem}{suffix}" if n == 1 else f"{stem}-{n}{suffix}")
        if create_new(target, data):
            return target
    raise FileExistsError(f"{attempts} files named {stem!r} already exist in {folder}")


def append(path: str | os.PathLike[str], data: bytes | str) -> None:
    """Append in one O_APPEND write followed by fsync: concurrent appenders never interleave inside it.

    The write is made under an exclusive flock on the file itself, and only once that file is still the one
    at `path`: sync replaces a file it merged under the same lock, so a line is never written into a file
    that has just been replaced (where no one would ever read it)."""
    payload = _as_bytes(data)
    target = os.fspath(path)
    for _ in range(100):
        fd = os.open(target, os.O_WRONLY | os.O_APPEND | _BINARY)
        try:
            lock_descriptor(fd)
            if same_file(fd, target):
                os.write(fd, payload)
                os.fsync(fd)
                return
        finally:
            os.close(fd)  # releases the flock
    raise OSError(errno.EAGAIN, "the file kept being replaced while appending to it", target)


def lock_descriptor(fd: int) -> None:
    """An exclusive flock on an open file, released when it is closed (a no-op where fcntl is missing)."""
    try:
        import fcntl
    except ImportError:  # pragma: no cover - Windows
        return
    fcntl.flock(fd, fcntl.LOCK_EX)


def unlock_descriptor(fd: int) -> None:
    """Release the flock `lock_descriptor` took, keeping the file open."""
    try:
        import fcntl
    except ImportError:  # pragma: no cover - Windows
        return
    fcntl.flock(fd, fcntl.LOCK_UN)


def same_file(fd: int, path: str | os.PathLike[str]) -> bool:
    """True when the open file `fd` is still the file at `path` (not replaced or removed since it was opened)."""
    try:
        there = os.stat(path)
    except FileNotFoundError:
        raise FileNotFoundError(errno.ENOENT, "removed while it was being written", os.fspath(path)) from None
    here = os.fstat(fd)
    return (here.st_dev, here.st_ino) == (there.st_dev, there.st_ino)


# The reentrant locks each thread holds: path -> how many `with` blocks hold it (see FileLock's `reentrant`).
_HELD: dict[int, dict[str, int]] = {}


class FileLock:
    """An exclusive advisory lock between processes, held for a `with` block.

    `blocking=False` raises BlockingIOError at once when another process holds it. `shared=True`
    takes a shared lock: any number of shared holders, but none while an exclusive one is held. The kernel
    drops the lock when its holder dies, so a killed process never leaves it stuck. Where fcntl
    is missing (Windows) the lock is a no-op and callers rely on their own version checks.
    `reentrant=True`: a thread that already holds the lock at this path (through another reentrant
    FileLock) enters at once, and the lock is let go when the outermost block ends; so a compound edit
    can hold every note's lock while it calls the single-note operations that take them too.
    """

    def __init__(self, path: str | os.PathLike[str], *, blocking: bool = True, shared: bool = False,
                 reentrant: bool = False, mode: int = 0o644) -> None:
        self.path = os.fspath(path)
        self.mode = mode
        self.blocking = blocking
        self.shared = shared
        self.reentrant = reentrant
        self._fd: int | None = None

    def __enter__(self) -> FileLock:
        held = _HELD.setdefault(get_ident(), {}) if self.reentrant else {}
        if self.path in held:
            held[self.path] += 1
            return self
        os.makedirs(os.path.dirname(self.path) or ".", exist_ok=True)
        self._fd = os.open(self.path, os.O_RDWR | os.O_CREAT | _BINARY, self.mode)
        try:
            import fcntl
        except ImportError:  # pragma: no cover - Windows
            return self
        try:
            mode = fcntl.LOCK_SH if self.shared else fcntl.LOCK_EX
            fcntl.flock(self._fd, mode | (0 if self.blocking else fcntl.LOCK_NB))
        except BaseException:
            os.close(self._fd)
            self._fd = None
            raise
        if self.reentrant:
            held[self.path] = 1
        return self

    def __exit__(self, *exc: object) -> None:
        if self.reentrant:
            held = _HELD.get(get_ident(), {})
            held[self.path] = held.get(self.path, 1) - 1
            if held[self.path] > 0:
                return
            held.pop(self.path, None)
        if self._fd is not None:
            os.close(self._fd)  # closing the descriptor releases the flock
            self._fd = None


def file_lock(path: str | os.PathLike[str], *, blocking: bool = True, shared: bool = False,
              reentrant: bool = False, mode: int = 0o644) -> FileLock:
    """`with file_lock(path):` — see FileLock; `mode`: the lock file's, when this creates it."""
    return FileLock(path, blocking=blocking, shared=shared, reentrant=reentrant, mode=mode)

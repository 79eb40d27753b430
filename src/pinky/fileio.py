"""Files that are never half-written, and locks between processes: the one implementation of each.

Markdown is the source of truth, so every write lands whole or not at all: a temporary file in
the same folder, flushed to disk, then renamed over the target (readers see the old file or the
new one, never a mix). A new file is published with a hard link, which fails when the name is
taken, so two processes saving the same title never overwrite each other.

Stdlib only and no `tempfile`/`pathlib`: the hooks write their state files through this module
and must start in a few milliseconds.
"""

from __future__ import annotations

import itertools
import os
import threading

_COUNTER = itertools.count()
_BINARY = getattr(os, "O_BINARY", 0)


def _temp_path(target: str) -> str:
    """A name no other writer uses: pid and thread differ between writers, the counter within one."""
    folder, name = os.path.split(target)
    return os.path.join(folder, f".{name}.{os.getpid()}.{threading.get_ident()}.{next(_COUNTER)}.tmp")


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
    """Append in one O_APPEND write followed by fsync: concurrent appenders never interleave inside it."""
    payload = _as_bytes(data)
    fd = os.open(os.fspath(path), os.O_WRONLY | os.O_APPEND | _BINARY)
    try:
        os.write(fd, payload)
        os.fsync(fd)
    finally:
        os.close(fd)


class FileLock:
    """An exclusive advisory lock between processes, held for a `with` block.

    `blocking=False` raises BlockingIOError at once when another process holds it. `shared=True`
    takes a shared lock: any number of shared holders, but none while an exclusive one is held. The kernel
    drops the lock when its holder dies, so a killed process never leaves it stuck. Where fcntl
    is missing (Windows) the lock is a no-op and callers rely on their own version checks.
    """

    def __init__(self, path: str | os.PathLike[str], *, blocking: bool = True, shared: bool = False) -> None:
        self.path = os.fspath(path)
        self.blocking = blocking
        self.shared = shared
        self._fd: int | None = None

    def __enter__(self) -> FileLock:
        os.makedirs(os.path.dirname(self.path) or ".", exist_ok=True)
        self._fd = os.open(self.path, os.O_RDWR | os.O_CREAT | _BINARY, 0o644)
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
        return self

    def __exit__(self, *exc: object) -> None:
        if self._fd is not None:
            os.close(self._fd)  # closing the descriptor releases the flock
            self._fd = None


def file_lock(path: str | os.PathLike[str], *, blocking: bool = True, shared: bool = False) -> FileLock:
    """`with file_lock(path):` — see FileLock."""
    return FileLock(path, blocking=blocking, shared=shared)

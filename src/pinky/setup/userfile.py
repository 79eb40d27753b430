"""Reading and writing a host's config file as it really is on the user's machine.

- Regular files only: the file is opened without blocking and checked with fstat, so a FIFO, a device (`/dev/zero`)
  or a socket in its place is refused in one line instead of hanging or filling the memory; the size is capped.
- A symbolic link (a dotfile kept by stow or chezmoi) stays a link: the file it leads to is edited, in place.
- Line endings (CRLF) and a UTF-8 byte order mark come back as they were; bytes that are not UTF-8 are refused.
- Setup's read-modify-write holds a lock on the folder of each file (no lock file is left beside the user's
  config), and just before the atomic replace it reads the file again: a file another program changed since it
  was read is never overwritten (`Changed`; setup plans again from the new bytes).
"""

from __future__ import annotations

import errno
import os
import stat
import time
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass

from pinky.base.fileio import file_kind
from pinky.errors import InvalidInput

MAX_BYTES = 64 * 1024 * 1024  # ~/.claude.json keeps every project's history and grows to tens of MB
LOCK_WAIT = 30.0  # seconds to wait for another setup holding a folder's lock
UNCHANGED = "pinky-brain changed nothing"
BOM = "\ufeff"


class Changed(Exception):  # noqa: N818 - a signal to plan again, not an error shown to anyone
    """The file changed between setup's read and its write."""


def target(path: str) -> str:
    """The file that is really read and written for `path`: the end of its symbolic links, or `path` itself."""
    if not os.path.islink(path):
        return path
    real = os.path.realpath(path)
    if not os.path.lexists(real):
        raise InvalidInput(f"{path} is a symbolic link to {real}, which does not exist; create that file or remove "
                           f"the link, {UNCHANGED}")
    return real


def read(path: str) -> bytes | None:
    """The bytes of the config file at `path` (None: there is none), through a symbolic link; a FIFO, a device, a
    folder or a file over MAX_BYTES is refused with InvalidInput, before anything is read from it."""
    real = target(path)
    try:
        fd = os.open(real, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0))
    except FileNotFoundError:
        return None
    except IsADirectoryError:
        raise InvalidInput(f"{path} is a folder, not a config file; {UNCHANGED}") from None
    except OSError as exc:
        raise InvalidInput(f"cannot read {path} ({exc.strerror}); {UNCHANGED}") from None
    with os.fdopen(fd, "rb") as handle:
        mode = os.fstat(fd).st_mode
        if stat.S_ISDIR(mode):
            raise InvalidInput(f"{path} is a folder, not a config file; {UNCHANGED}")
        if not stat.S_ISREG(mode):
            raise InvalidInput(f"{path} is {file_kind(mode) or 'a special file'}, not a regular file; pinky-brain "
                               f"reads and writes only regular config files, {UNCHANGED}")
        try:
            data = handle.read(MAX_BYTES + 1)
        except OSError as exc:
            raise InvalidInput(f"cannot read {path} ({exc.strerror}); {UNCHANGED}") from None
    if len(data) > MAX_BYTES:
        raise InvalidInput(f"{path} is larger than {MAX_BYTES // (1024 * 1024)} MB, too large for a config file; "
                           f"{UNCHANGED}")
    return data


@dataclass(frozen=True)
class Style:
    """How a file's text is written down: its line ending and whether it starts with a byte order mark."""

    newline: str = "\n"
    bom: bool = False


def decode(path: str, data: bytes | None) -> tuple[str, Style]:
    """The text of a config file (without its BOM, with LF line endings) and the style to write it back in."""
    if data is None:
        return "", Style()
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InvalidInput(f"{path} is not UTF-8 text (byte {exc.start + 1} is 0x{data[exc.start]:02x}); fix it, "
                           f"{UNCHANGED}") from None
    bom = text.startswith(BOM)
    text = text[1:] if bom else text
    first = text.find("\n")
    newline = "\r\n" if first > 0 and text[first - 1] == "\r" else "\n"
    return (text.replace("\r\n", "\n") if newline == "\r\n" else text), Style(newline, bom)


def encode(text: str, style: Style) -> bytes:
    if style.newline == "\r\n":
        text = text.replace("\r\n", "\n").replace("\n", "\r\n")
    return ((BOM if style.bom else "") + text).encode("utf-8")


@contextmanager
def locked(paths: list[str]) -> Iterator[None]:
    """Hold an exclusive lock on the folder of each file (in one order, so two setups never wait on each other)
    while setup reads, plans and writes them. Where a folder cannot be locked (no fcntl, a network file system
    refusing it), the re-read before each replace still keeps another writer's change."""
    # by their real path: a linked folder (a checkout's `.codex -> ~/.codex`) is the same folder, and flock on a
    # second descriptor of it would wait on this very process
    folders = sorted({os.path.realpath(_existing_folder(os.path.dirname(target(os.path.abspath(p))))) for p in paths})
    with ExitStack() as stack:
        for folder in folders:
            stack.enter_context(_folder_lock(folder))
        yield


def _existing_folder(folder: str) -> str:
    """`folder`, or when it is not made yet the nearest folder above it that is (it stands for it)."""
    while not os.path.isdir(folder) and os.path.dirname(folder) != folder:
        folder = os.path.dirname(folder)
    return folder


@contextmanager
def _folder_lock(folder: str) -> Iterator[None]:
    try:
        import fcntl
    except ImportError:  # pragma: no cover - Windows
        yield
        return
    try:
        fd = os.open(folder, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    except OSError:
        yield
        return
    try:
        _lock(fd, folder, fcntl)
        yield
    finally:
        os.close(fd)


def _lock(fd: int, folder: str, fcntl: object) -> None:
    deadline = time.monotonic() + LOCK_WAIT
    while True:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)  # type: ignore[attr-defined]
            return
        except BlockingIOError:
            if time.monotonic() > deadline:
                raise InvalidInput(f"another process has held a lock on {folder} for {LOCK_WAIT:.0f} s (another "
                                   f"pinky-brain setup?); try again, {UNCHANGED}") from None
            time.sleep(0.02)
        except OSError as exc:
            if exc.errno in (errno.EINTR,):
                continue
            return  # this file system has no such locks: rely on the re-read


def replace(path: str, data: bytes, expected: bytes | None, mode: int) -> None:
    """Write `data` to the file at `path` (its link's target, the link kept) atomically, unless the file no longer
    holds `expected` (None: did not exist), which raises Changed and writes nothing."""
    real = target(path)
    folder, name = os.path.split(real)
    os.makedirs(folder or ".", exist_ok=True)
    temp = os.path.join(folder, f".{name}.{os.getpid()}.pinky-setup.tmp")
    fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | getattr(os, "O_BINARY", 0), mode)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(temp, mode)  # the umask must not widen or narrow the file's own mode
        if read(path) != expected:
            raise Changed(path)
        os.replace(temp, real)
    except BaseException:
        try:
            os.unlink(temp)
        except OSError:
            pass
        raise


def delete(path: str, expected: bytes | None) -> None:
    """Delete the file setup created at `path`, unless it changed since it was read (Changed)."""
    if read(path) != expected:
        raise Changed(path)
    os.unlink(path)

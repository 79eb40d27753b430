"""Writers that take no lock: what sync does so that an editor's or a shell's append is never lost when it
replaces a file (`pinky.sync.worktree`).

pinky's own writers append under an flock on the file and check, once they hold it, that the file is still the
one at its path (`fileio.append`); sync replaces a file under that lock. A writer that takes no lock comes in
two kinds:

* one that opens the file by its name for each write (`echo >>`, an editor appending): it may have opened the
  old file just before sync renamed the new one over it, and write to the old one just after. Sync keeps the
  old file open (`LateAppends`) and, once the checkout is done, copies what was appended to it past what sync
  read into the new file, again and again while any other process still has the old file open (read from
  /proc where there is one, else for a short grace period);
* one that opened the file once and keeps writing to what it opened (a logger, `exec 3>>note.md`): every later
  write would go to a file no one can read. Such a file, open for writing by another process when the
  checkout begins (`held_for_writing`), is never replaced: sync appends to it in place, or leaves it as it is
  with the incoming version beside it as a conflict copy (`pinky.sync.worktree`).
"""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

from pinky.base import fileio

SETTLE_SECONDS = 5.0  # how long a checkout waits for the writers that still hold a replaced file open
GRACE_SECONDS = 0.2  # without /proc: how long a replaced file is watched once it stops growing
WATCH_LIMIT = 128  # replaced files kept open at once (descriptors): more are settled mid-checkout
_POLL = 0.005
log = logging.getLogger("pinky")

Key = tuple[int, int]  # (st_dev, st_ino)


def key_of(fd: int) -> Key:
    st = os.fstat(fd)
    return st.st_dev, st.st_ino


def _descriptors_under(root: Path) -> Iterator[tuple[str, str]] | None:
    """(/proc/<pid>/fd/<n>, /proc/<pid>/fdinfo/<n>) of every file under `root` another process has open
    (a replaced file too: its link then reads '<path> (deleted)'); None where /proc cannot be read."""
    proc = "/proc"
    if not os.path.isdir(os.path.join(proc, "self", "fd")):
        return None
    prefix = os.path.realpath(root).rstrip(os.sep) + os.sep
    me = str(os.getpid())

    def walk() -> Iterator[tuple[str, str]]:
        for pid in _names(proc):
            if not pid.isdigit() or pid == me:
                continue
            for fd in _names(os.path.join(proc, pid, "fd")):
                link = os.path.join(proc, pid, "fd", fd)
                try:
                    if os.readlink(link).startswith(prefix):
                        yield link, os.path.join(proc, pid, "fdinfo", fd)
                except OSError:
                    continue

    return walk()


def _names(folder: str) -> list[str]:
    try:
        return os.listdir(folder)
    except OSError:  # gone, or another user's
        return []


def _writable(fdinfo: str) -> bool:
    """True when the descriptor `fdinfo` describes was opened for writing (its `flags:` line, in octal)."""
    try:
        with open(fdinfo, encoding="ascii") as handle:
            for line in handle:
                if line.startswith("flags:"):
                    return int(line.split()[1], 8) & os.O_ACCMODE != os.O_RDONLY
    except (OSError, ValueError, IndexError):
        pass
    return False


def _key_at(link: str) -> Key | None:
    try:
        st = os.stat(link)  # follows the /proc link to the open file itself, even a removed one
    except OSError:
        return None
    return st.st_dev, st.st_ino


def held_for_writing(root: Path) -> set[Key]:
    """The files under `root` another process holds open for writing (one pass over /proc); empty where
    that cannot be known."""
    found: set[Key] = set()
    for link, fdinfo in _descriptors_under(root) or ():
        key = _key_at(link)
        if key is not None and _writable(fdinfo):
            found.add(key)
    return found


def held_open(root: Path, keys: set[Key]) -> set[Key] | None:
    """Which of `keys` another process still has open; None where that cannot be known."""
    descriptors = _descriptors_under(root)
    if descriptors is None:
        return None
    return {key for link, _ in descriptors if (key := _key_at(link)) in keys}


@dataclass
class _Replaced:
    """A file sync replaced (or removed), kept open to see what is appended to it afterwards."""

    handle: BinaryIO
    read: int  # the bytes sync had taken into account
    target: Path
    removed: bool
    key: Key
    quiet_since: float

    def harvest(self) -> None:
        """Carry what was appended past `read` over to the file now at `target`."""
        size = os.fstat(self.handle.fileno()).st_size
        if size <= self.read:
            return
        late = os.pread(self.handle.fileno(), size - self.read, self.read)
        if self.removed and not os.path.lexists(self.target):  # sync removed it: put it back, whole
            fileio.atomic_write(self.target, os.pread(self.handle.fileno(), size, 0))
        else:
            try:
                fileio.append(self.target, late)
            except FileNotFoundError:  # removed meanwhile by someone else: the late bytes are all there is
                fileio.atomic_write(self.target, late)
        self.read = size
        self.quiet_since = time.monotonic()


class LateAppends:
    """The files a checkout replaced, watched until no other process can still append to them."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.watched: list[_Replaced] = []
        self.abandoned = 0  # files still held open by another process when sync stopped watching them

    def watch(self, handle: BinaryIO, read: int, target: Path, *, removed: bool = False) -> None:
        """Keep watching `handle`, the file just replaced at `target` (sync read its first `read` bytes). The
        flock sync held on it is released: a locked writer waiting for it then finds the new file."""
        fd = os.dup(handle.fileno())
        fileio.unlock_descriptor(fd)
        self.watched.append(_Replaced(os.fdopen(fd, "rb"), read, target, removed, key_of(fd), time.monotonic()))
        if len(self.watched) >= WATCH_LIMIT:
            self.settle()

    def settle(self) -> None:
        """Copy late appends over until no other process holds a replaced file open (or the time is up)."""
        deadline = time.monotonic() + SETTLE_SECONDS
        while self.watched:
            for item in self.watched:
                item.harvest()
            holders = held_open(self.root, {item.key for item in self.watched})
            now = time.monotonic()
            done = [item for item in self.watched if
                    (now - item.quiet_since > GRACE_SECONDS if holders is None else item.key not in holders)]
            if now > deadline:
                self.abandoned += len(self.watched) - len(done)
                log.warning("%d file(s) sync replaced are still open in another process after %.0f s: what it "
                            "writes to them from now on is not in the brain", len(self.watched) - len(done),
                            SETTLE_SECONDS)
                done = list(self.watched)
            for item in done:
                item.harvest()  # what was written between the last look and the close
                item.handle.close()
                self.watched.remove(item)
            if self.watched:
                time.sleep(_POLL)

    def close(self) -> None:
        for item in self.watched:
            item.handle.close()
        self.watched.clear()

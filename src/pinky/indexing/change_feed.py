"""What changed in the markdown roots since the last request, from the OS, read without blocking.

A long-running process (`pinky-mcp`) must find an edit, a pull or a save made elsewhere with its very next
search, and cannot walk 100,000 notes' stats before each one (~435 ms). Linux reports file changes as they
happen: inotify queues an event in the writer's own system call, before `write`, `rename` or `unlink`
returns to it. So whatever finished before a request is already in the queue when the request starts, and
`ChangeFeed.drain` reads that queue with a non-blocking read, in the request's own thread: no watcher
thread between the kernel and the request, so no event can be on its way still (watchdog, the
library that follows the notes for the background indexing, dispatches from a thread of its own, which
is why this reads the inotify descriptor itself).

Anything that makes the events incomplete makes `drain` say so (`Drained.lost`), and the caller checks
everything instead of missing a change: the kernel's queue overflowed, a root was removed, moved or
recreated, a root did not exist yet, a watch could not be added (the inotify watch limit), or the feed
could not start at all (`FeedUnavailable`: no inotify here, no instances left). A folder created inside
a root is watched as soon as its event is read, and its root scanned once (`Drained.rescan`): notes may
have been written into it before its watch was added.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import errno
import os
import struct
import sys
from dataclasses import dataclass, field
from pathlib import Path

from pinky.base.layout import is_note, is_skipped

IN_MODIFY, IN_ATTRIB, IN_CLOSE_WRITE = 0x2, 0x4, 0x8
IN_MOVED_FROM, IN_MOVED_TO, IN_CREATE, IN_DELETE = 0x40, 0x80, 0x100, 0x200
IN_DELETE_SELF, IN_MOVE_SELF, IN_Q_OVERFLOW, IN_IGNORED = 0x400, 0x800, 0x4000, 0x8000
IN_ONLYDIR, IN_ISDIR = 0x01000000, 0x40000000
IN_NONBLOCK, IN_CLOEXEC = os.O_NONBLOCK, os.O_CLOEXEC
WATCHED = (IN_MODIFY | IN_ATTRIB | IN_CLOSE_WRITE | IN_MOVED_FROM | IN_MOVED_TO | IN_CREATE | IN_DELETE
           | IN_DELETE_SELF | IN_MOVE_SELF | IN_ONLYDIR)
HEADER = struct.Struct("iIII")  # struct inotify_event: wd, mask, cookie, len; then len bytes of name
READ_SIZE = 1 << 16


class FeedUnavailable(Exception):
    """No change feed here (not Linux, no inotify instance left, …): the caller walks instead."""


@dataclass
class Drained:
    """What happened since the last drain."""

    lost: str | None = None  # why the events are not the whole story: check everything
    rearm: bool = True  # with `lost`: start the feed again first (it lost watches, or has to add some)

    def lose(self, why: str) -> None:
        self.lost, self.rearm = why, True
    notes: dict[str, set[Path]] = field(default_factory=dict)  # root name -> note files created, changed or gone
    rescan: set[str] = field(default_factory=set)  # roots where a folder came, went or moved: scan the root

    @property
    def quiet(self) -> bool:
        return self.lost is None and not self.notes and not self.rescan


def _libc() -> ctypes.CDLL:
    if not sys.platform.startswith("linux"):
        raise FeedUnavailable(f"no inotify on {sys.platform}")
    return ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)


class ChangeFeed:
    """inotify watches over every folder of `roots` (name -> folder); `drain()` between requests."""

    def __init__(self, roots: dict[str, Path]) -> None:
        self.roots = {name: Path(folder) for name, folder in roots.items()}
        self._libc = _libc()
        self._fd = -1
        self._watches: dict[int, tuple[str, Path]] = {}  # watch descriptor -> (root name, folder)
        self._awaited: dict[int, set[str]] = {}  # a missing root's parent's watch -> the names of roots awaited there
        self._problem: str | None = None  # set by start(): a watch it could not add, a missing root
        self._first = True  # the first drain after start: what changed before it is unknown
        self._unsure: str | None = None  # events drained but not taken in (the caller failed): check everything

    @property
    def folders(self) -> int:
        return len(self._watches)

    def start(self) -> None:
        """(Re)open the inotify descriptor and watch every folder of every root (a root not made yet: its parent,
        for its creation); raises FeedUnavailable when that cannot be done (inotify's instance or watch limit)."""
        self.close()
        fd = self._libc.inotify_init1(IN_NONBLOCK | IN_CLOEXEC)
        if fd < 0:
            raise FeedUnavailable(f"inotify_init1: {os.strerror(ctypes.get_errno())}")
        self._fd, self._problem, self._first = fd, None, True
        for name, root in self.roots.items():
            if not root.is_dir():
                self._await(name, root)
            if root.is_dir():  # also when made between the look and the parent's watch: its event came too early
                self._watch_tree(name, root)
        if self._problem:
            problem = self._problem
            self.close()
            raise FeedUnavailable(problem)

    def _await(self, name: str, root: Path) -> None:
        wd = self._libc.inotify_add_watch(self._fd, os.fsencode(root.parent), IN_CREATE | IN_MOVED_TO | IN_ONLYDIR)
        if wd < 0:
            self._problem = f"cannot watch {root.parent} for {root.name}/: {os.strerror(ctypes.get_errno())}"
        else:
            self._awaited.setdefault(wd, set()).add(name)

    def _watch_tree(self, name: str, top: Path) -> None:
        stack = [top]
        while stack:
            folder = stack.pop()
            if not self._watch(name, folder):
                return
            try:
                with os.scandir(folder) as listing:
                    stack.extend(Path(item.path) for item in listing
                                 if not is_skipped(item.name) and item.is_dir(follow_symlinks=False))
            except OSError:
                continue  # gone meanwhile (its parent's event says so) or unreadable (the scan says so)

    def _watch(self, name: str, folder: Path) -> bool:
        wd = self._libc.inotify_add_watch(self._fd, os.fsencode(folder), WATCHED)
        if wd < 0:
            code = ctypes.get_errno()
            if code in (errno.ENOENT, errno.ENOTDIR):
                return True  # gone before it was watched: its parent's event says so
            hint = " (the inotify watch limit: fs.inotify.max_user_watches)" if code == errno.ENOSPC else ""
            self._problem = f"cannot watch {folder}: {os.strerror(code)}{hint}"
            return False
        self._watches[wd] = (name, folder)
        return True

    def drain(self) -> Drained:
        """Every event queued since the last drain, read without blocking."""
        drained = Drained(lost=self._problem)
        if self._fd < 0:
            drained.lost = "not watching"
            return drained
        if self._first and drained.lost is None:
            drained.lost, drained.rearm = "the watch just started", False
        elif self._unsure and drained.lost is None:
            drained.lost, drained.rearm = self._unsure, False
        self._first, self._unsure = False, None
        while True:
            try:
                data = os.read(self._fd, READ_SIZE)
            except BlockingIOError:
                break
            except OSError as exc:
                drained.lose(f"reading the change feed failed: {exc}")
                break
            self._parse(data, drained)
        return drained

    def _parse(self, data: bytes, drained: Drained) -> None:
        at = 0
        while at + HEADER.size <= len(data):
            wd, mask, _cookie, length = HEADER.unpack_from(data, at)
            raw = data[at + HEADER.size : at + HEADER.size + length].split(b"\0", 1)[0]
            at += HEADER.size + length
            self._event(wd, mask, os.fsdecode(raw), drained)

    def _event(self, wd: int, mask: int, name: str, drained: Drained) -> None:
        if mask & IN_Q_OVERFLOW:
            drained.lose("the kernel's event queue overflowed")
            return
        if any(self.roots[root].name == name for root in self._awaited.get(wd, ())):
            drained.lose(f"{name}/ was created")  # a root made since the start: watch it from now on
        watched = self._watches.get(wd)
        if watched is None:
            return  # a watch already dropped
        root_name, folder = watched
        root = self.roots[root_name]
        if mask & (IN_DELETE_SELF | IN_MOVE_SELF | IN_IGNORED):
            if mask & IN_IGNORED:
                del self._watches[wd]
            if folder == root:
                drained.lose(f"{root} was removed or moved")
            else:
                drained.rescan.add(root_name)
            return
        if not name or is_skipped(name):
            return
        path = folder / name
        if mask & IN_ISDIR:
            if mask & (IN_CREATE | IN_MOVED_TO):
                self._watch_tree(root_name, path)  # before anything else: notes written into it from now on
                if self._problem:
                    drained.lose(self._problem)
            drained.rescan.add(root_name)
            return
        if is_note(path.relative_to(root).as_posix()):
            drained.notes.setdefault(root_name, set()).add(path)

    def unsure(self, why: str) -> None:
        """The events last drained were not all taken in (`why`): the next drain asks for a check of everything."""
        self._unsure = why

    def close(self) -> None:
        if self._fd >= 0:
            os.close(self._fd)
        self._fd = -1
        self._watches.clear()
        self._awaited.clear()

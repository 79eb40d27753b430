"""The usage ledger: on which days each note was returned by a search or marked useful, kept beside the
notes so that it outlives the index.

`pinky prune` archives what nobody used, so what it knows of use must not vanish with a disposable
`brain.db` (a full rebuild, a deleted or damaged file) or depend on which project's index a global
note was found from. Each knowledge root keeps `.pinky/usage.log` (git-ignored with the rest of
`.pinky/`): a first line saying since when use has been watched there, then one JSON line per note,
kind and day — written once a day at most, since the index's own usage table says whether today's
line is written already. The file is compacted (the latest day of each note and kind) once it
grows past `COMPACT_BYTES`.

Telemetry, like the index's usage table: a machine-local record, never synced, never needed to find
anything; losing the tail of it in a crash loses nothing written. Stdlib only.
"""

from __future__ import annotations

import datetime as dt
import errno
import json
import logging
import os
import stat
from collections.abc import Iterable
from pathlib import Path

from pinky.base.fileio import UnsafeFile, atomic_write, file_lock, outside

log = logging.getLogger("pinky.base.usage")

LEDGER = ".pinky/usage.log"
COMPACT_BYTES = 256 * 1024
KINDS = ("retrieved", "useful")


def ledger_path(base: Path) -> Path:
    return base / LEDGER


def record(base: Path, paths: Iterable[str], kind: str, day: str, now: str) -> None:
    """Note that these notes of root `base` were used (`kind`) on `day`; `now` starts a new ledger."""
    lines = "".join(json.dumps({"day": day, "use": kind, "path": path}, ensure_ascii=False) + "\n"
                    for path in dict.fromkeys(paths))
    path = ledger_path(base)
    why = outside(path, base)  # a checkout's `.pinky -> ~` or `usage.log -> ~/.bashrc`: never appended to
    if why:
        raise UnsafeFile(f"{path}: {why}")
    path.parent.mkdir(parents=True, exist_ok=True)
    with file_lock(_lock_of(path), shared=True):  # compaction takes it exclusively
        fd = _open_ledger(path)
        try:
            if os.fstat(fd).st_size == 0:
                lines = json.dumps({"since": now}) + "\n" + lines
            if lines:
                os.write(fd, lines.encode("utf-8"))  # one write: appenders never interleave inside it
            size = os.fstat(fd).st_size
        finally:
            os.close(fd)
    if size > COMPACT_BYTES:
        compact(base)


def _open_ledger(path: Path) -> int:
    """The ledger opened for appending: never through a link, never a FIFO or a device (UnsafeFile)."""
    flags = os.O_WRONLY | os.O_APPEND | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
    try:
        fd = os.open(path, flags, 0o644)
    except OSError as exc:
        if exc.errno in (errno.ELOOP, errno.ENXIO):
            raise UnsafeFile(f"{path}: a symbolic link or a special file, not the usage ledger") from None
        raise
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise UnsafeFile(f"{path}: not a regular file, not the usage ledger")
    return fd


def note_use(roots: dict[str, Path], used: Iterable[tuple[str, str]], kind: str, when: dt.datetime) -> None:
    """Record the first use today of these (root, path) notes in their roots' ledgers, and start the
    ledger of every root that has none yet (use is watched from then on). A root that cannot be
    written (a read-only checkout) is skipped: telemetry never fails the caller."""
    by_root: dict[str, list[str]] = {}
    for root, rel in used:
        by_root.setdefault(root, []).append(rel)
    for root, base in roots.items():
        paths = by_root.get(root, [])
        if paths or not ledger_path(base).exists():
            try:
                record(base, paths, kind, when.date().isoformat(), when.isoformat())
            except OSError as exc:
                log.debug("usage ledger of %s not written: %s", base, exc)


def _lock_of(path: Path) -> Path:
    return path.with_name(path.name + ".lock")


def read(base: Path) -> tuple[str | None, dict[tuple[str, str], str]]:
    """(since when use is watched in this root, or None for never; {(path, kind): the latest day}).
    A line that does not parse (a torn write, an edit by hand) is skipped."""
    path = ledger_path(base)
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        return None, {}
    since: str | None = None
    latest: dict[tuple[str, str], str] = {}
    for line in raw.splitlines():
        try:
            item = json.loads(line)
        except ValueError:
            continue
        if not isinstance(item, dict):
            continue
        if isinstance(item.get("since"), str):
            since = min(since or item["since"], item["since"])
            continue
        day, kind, rel = item.get("day"), item.get("use"), item.get("path")
        if isinstance(day, str) and kind in KINDS and isinstance(rel, str) and day > latest.get((rel, kind), ""):
            latest[(rel, kind)] = day
    return since, latest


def last_used(base: Path) -> tuple[str | None, dict[str, str]]:
    """(since when use is watched in this root; {note path: the last day it was retrieved or marked useful})."""
    since, latest = read(base)
    days: dict[str, str] = {}
    for (rel, _kind), day in latest.items():
        days[rel] = max(days.get(rel, ""), day)
    return since, days


def compact(base: Path) -> None:
    """Rewrite the ledger with the latest day of each note and kind (and its first `since`)."""
    path = ledger_path(base)
    with file_lock(_lock_of(path)):
        since, latest = read(base)
        if since is None and not latest:
            return
        lines = [json.dumps({"since": since})] if since else []
        lines += [json.dumps({"day": day, "use": kind, "path": rel}, ensure_ascii=False)
                  for (rel, kind), day in sorted(latest.items())]
        atomic_write(path, "\n".join(lines) + "\n", durable=False)

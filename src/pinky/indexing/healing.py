"""Keeping the index usable whatever happened to it. It is derived from the markdown, so a damaged
or replaced index is never the caller's problem, and the markdown is never touched here.

- Every KnowledgeBase operation first `follow`s the file (another process may have swapped in a
  repaired one: reopen it); when SQLite says the file is damaged mid-operation, the index is rebuilt
  from the markdown (`repair`) and the operation runs once more (`healed`, `heal`).
- A note already written to disk is indexed through `after_write`, which repairs instead of
  failing, so a write is never reported as failed, nor repeated, because of the index; an index that
  cannot be written says so in one line, with the note's path and the fix.
- Full rebuilds run one at a time (`reindex`); `verify` runs SQLite's quick_check (`pinky doctor`,
  a server's background upkeep; integrity_check for `pinky doctor --full`) and repairs what it finds.
"""

from __future__ import annotations

import contextlib
import functools
import inspect
import logging
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

from pinky.errors import IndexReplaced, IndexUnavailable
from pinky.indexing import indexer, refresh
from pinky.indexing.index import Index, is_corruption
from pinky.indexing.indexer import ReindexReport
from pinky.indexing.vector_fill import Progress
from pinky.store.connect import file_identity, quick_check

T = TypeVar("T")
C = TypeVar("C", bound=type)
SQLITE_READONLY = 8
NOT_HEALED = frozenset({"close", "reindex"})  # reindex heals itself: a full one must not run twice
# Operations that do not read entries, or report how far the index is behind (drift): they do not walk the
# global brain first (a CLI command's `is_empty` then its search would walk it twice; the server's fills often).
NOT_REFRESHED = frozenset({"root_dir", "display_path", "fingerprint", "vector_status", "second_stage", "drift",
                           "is_empty", "embed_pending", "refine_pending"})
log = logging.getLogger("pinky")


def repair(index: Index, why: object) -> None:
    """The open file is damaged (`why`): swap it for a fresh one and rebuild that from the markdown
    (full text; vectors follow with the next embedding pass). One repair at a time: when another
    process repaired the file while we waited for the rebuild lock, its work is used as it is."""
    bad = index.identity
    index.close()
    with index.lock("rebuild"):
        if bad is not None and file_identity(index.config.db_path) != bad:
            return
        index.replace(f"{index.config.db_path.name} is corrupt ({why})", bad)
        _complete(index, embed=False)


def _complete(index: Index, *, progress: Progress | None = None, embed: bool = True,
              full: bool = False) -> ReindexReport:
    """A reindex that brings the whole index up to date, which ends any pending rebuild."""
    tally = refresh.tally(index)  # the scan's own stats, each taken before its note is read: a change after shows
    report = indexer.reindex(index, full=full, progress=progress, embed=embed, tally=tally)
    refresh.record(index, tally.state() if tally is not None else None)
    index.rebuild_done()
    return report


def heal(index: Index, operation: Callable[[], T], *, catch_up: bool = True, fresh: bool = True) -> T:
    """Run `operation` on the current index file; after a reopen or a repair, run it once more.
    `catch_up`: first finish a rebuild somebody started and did not complete (it was killed). An outermost
    operation first takes in what changed in the global brain since (`freshness`; `fresh=False`: not)."""
    index.follow()
    operation = _marked(index, operation)
    try:
        if catch_up and index.rebuild_interrupted():
            with index.lock("rebuild"):
                if index.rebuild_pending():  # still: nobody else finished it meanwhile
                    _complete(index, embed=False)
        if fresh and not index.operating:
            refresh_global(index)
        return operation()
    except IndexReplaced:
        index.close()
    except Exception as exc:
        if _read_only(exc) and index.reading_source:  # a read-only checkout's index, read in place: copy it
            own_copy(index)
            return operation()
        if _read_only(exc):
            raise IndexUnavailable(f"the index {index.config.db_path} cannot be written ({exc}): make it "
                                   "writable, or delete it (it is rebuilt from the markdown)") from exc
        if not is_corruption(exc):
            raise
        repair(index, exc)
    return operation()


def _marked(index: Index, operation: Callable[[], T]) -> Callable[[], T]:
    """`operation`, with the index marked busy while it runs (what it calls does not refresh again)."""
    def run() -> T:
        before, index.operating = index.operating, True
        try:
            return operation()
        finally:
            index.operating = before

    return run


def refresh_global(index: Index, *, embed: bool = True) -> bool:
    """refresh.refresh (the change feed's events, or the global brain's check); an index that cannot be written
    (named with --db/PINKY_DB, read-only) is read as it is, with a warning. A read-only checkout's index read in
    place raises: `heal` copies it first."""
    try:
        return refresh.refresh(index, embed=embed)
    except Exception as exc:
        if not _read_only(exc) or index.reading_source:
            raise
        log.warning("the global brain changed, but %s cannot be written to take it in (%s)", index.path, exc)
        return False


def own_copy(index: Index) -> None:
    """Move from the read-only index read in place to a copy this process can write (in the user's cache
    folder), brought up to date with the markdown (the copy may predate it, and its global notes are the
    ones of whoever built it)."""
    index.own_file()
    _complete(index)


def _read_only(exc: BaseException) -> bool:
    code = getattr(exc, "sqlite_errorcode", None)
    return isinstance(code, int) and code & 0xFF == SQLITE_READONLY


def healed(cls: C) -> C:
    """Class decorator: every public method of `cls` (whose `index` is an Index) runs through `heal`."""
    for name, method in list(vars(cls).items()):
        if inspect.isfunction(method) and not name.startswith("_") and name not in NOT_HEALED:
            setattr(cls, name, _healing(method, fresh=name not in NOT_REFRESHED))
    return cls


def _healing(method: Callable[..., T], *, fresh: bool) -> Callable[..., T]:
    @functools.wraps(method)
    def run(self: Any, *args: Any, **kwargs: Any) -> T:
        return heal(self.index, lambda: method(self, *args, **kwargs), fresh=fresh)

    return run


def after_write(index: Index, path: Path, finish: Callable[[str | None], T], *, embed: bool = True) -> T:
    """Index the note just written at `path`, then `finish(slug)` (read the entry back).

    The markdown is safe already: a replaced file is reopened and a damaged one repaired, and the
    step runs again; any other failure of the index is one IndexUnavailable that says the note was
    written, where, and how to get it indexed."""
    try:
        return heal(index, lambda: finish(indexer.index_file(index, path, embed=embed)))
    except Exception as exc:
        cause = exc.__cause__ if isinstance(exc, IndexUnavailable) and exc.__cause__ is not None else exc
        if getattr(cause, "sqlite_errorcode", None) is None and not isinstance(cause, OSError):
            raise
        fix = ("make it writable (or delete it: it is rebuilt from the markdown), then run `pinky-brain reindex`"
               if _read_only(cause) else "fix that, then run `pinky-brain reindex`")
        raise IndexUnavailable(f"the note was written to {path}, but the index {index.config.db_path} could not "
                               f"be updated ({cause}): {fix}") from None


def reindex(index: Index, *, full: bool = False, progress: Progress | None = None,
            embed: bool = True) -> ReindexReport:
    """indexer.reindex, healed; full rebuilds one at a time (`<index>-rebuild.lock`). A full rebuild
    asked for while another runs waits for it, then catches up with it instead of starting over."""
    index.own_file()
    if not full:
        return heal(index, lambda: _complete(index, progress=progress, embed=embed), catch_up=False, fresh=False)
    with contextlib.ExitStack() as held:
        try:
            held.enter_context(index.lock("rebuild", blocking=False))
        except BlockingIOError:
            with index.lock("rebuild"):
                pass
            report = heal(index, lambda: _complete(index, progress=progress, embed=embed), catch_up=False,
                          fresh=False)
            report.warnings.append("another full rebuild ran at the same time: caught up with it instead")
            return report
        index.follow()  # no repair from in here (it takes this lock): drop() swaps a damaged file itself
        return _complete(index, progress=progress, embed=embed, full=True)


def verify(index: Index, *, full: bool = False) -> str | None:
    """SQLite's quick_check over the whole file (~250 ms per 10,000 notes; `full`: integrity_check,
    which also matches every index to its table, then the content audit of every row against the
    markdown): None when it is sound; else what is wrong, and the index has been rebuilt from the markdown
    (a damaged file as a whole; rows the audit found, one by one)."""
    index.follow()
    try:
        problem = quick_check(index.conn, full=full)
    except Exception as exc:
        if not is_corruption(exc):
            raise
        problem = str(exc)
    if problem:
        repair(index, problem)
        return problem
    if full:  # sound pages and indexes can still hold rows a flipped byte changed
        from pinky.indexing.audit import DIFFERED, audit

        found = audit(index)
        return f"{DIFFERED}: {found.summary()}" if found.damaged else None
    return None

"""The markdown as it is on disk now, in every index, without a reindex anyone must know to run.

Each project's index keeps its own copy of the global brain's rows (and vectors), so a note saved by
another project, outside any project, pulled by `pinky-brain sync` or edited by hand is found only once
that copy catches up. Before every operation (`healing.heal`) a process makes sure it has:

- A long-running process with a change feed (`pinky-mcp` on Linux: `change_feed`, inotify over the global
  brain and the project's notes) drains the events queued since its last request, without blocking, and
  indexes the notes they name: microseconds when nothing changed, whatever the brain's size. When the feed
  lost track (its queue overflowed, a root was removed or recreated, a watch could not be added) it is
  re-armed and everything is checked, as below, instead of missing a change.
- Everyone else (the CLI, the hooks, a server without a feed) compares the global brain with what the
  index recorded when it last caught up (`pinky.base.global_signature`): every note's stats while there are at most
  ONE_SHOT_WALK_LIMIT of them (~3 ms per 1,000), beyond that its folders' first. When they differ it
  reindexes the global root alone (stat, then hash, then parse only what changed) and records the new state.

New chunks get their vectors at once when they are few (a save, a sync of a handful of notes); more
are left to the background fill of a running server or the next reindex, and searches say so.
"""

from __future__ import annotations

import logging
import os
from typing import TYPE_CHECKING

from pinky.base import global_signature as signal
from pinky.indexing import indexer
from pinky.indexing.index import Index
from pinky.indexing.vector_fill import embed_pending
from pinky.store import vectors as store_vectors
from pinky.store.connect import write_transaction

if TYPE_CHECKING:  # the feed (and ctypes) are a long-running process's: a one-shot command does not load them
    from pinky.indexing.change_feed import Drained

log = logging.getLogger("pinky")

EMBED_AT_ONCE = 64  # new chunks of the global brain embedded before the operation goes on
OWED_KEY = "global_vectors_owed"  # "1": chunks taken in without their vectors (by a hook), to embed when few
MANY_PATHS = 200  # from this many changed notes on, the feed's root is scanned instead (a pull, a sync)


def snapshot(index: Index) -> tuple[str, str] | None:
    """The global brain's (signature, folders) now; None when this index has no global root."""
    root = index.config.roots().get("global")
    return signal.walk(os.fspath(root)) if root is not None else None


def tally(index: Index) -> signal.Tally | None:
    """What a full reindex's scan tells of the global brain, for `record`: `snapshot`'s answer without a walk of
    its own (`global_signature.Tally`); None when this index has no global root."""
    root = index.config.roots().get("global")
    return signal.Tally(os.fspath(root)) if root is not None else None


def record(index: Index, state: tuple[str, str] | None, *, owed: bool = False) -> None:
    """Remember that the index holds the global brain as it was at `state` (taken before its scan); `owed`: some of
    the chunks taken in still lack vectors (a hook took them in)."""
    if state is None:
        return
    with write_transaction(index.conn):
        store_vectors.set_meta(index.conn, signal.SIGNATURE_KEY, state[0])
        store_vectors.set_meta(index.conn, signal.FOLDERS_KEY, state[1])
        store_vectors.set_meta(index.conn, OWED_KEY, "1" if owed else "0")


def refresh(index: Index, *, embed: bool = True) -> bool:
    """Bring the index up to date with what changed on disk since the last operation; True when something did.
    With a change feed: what it reports; without: the global brain, by `refresh_global`."""
    feed = index.feed
    if feed is None:
        return refresh_global(index, embed=embed)
    drained = feed.drain()
    if drained.quiet:
        return False
    try:
        return _take_in(index, drained, embed=embed)
    except BaseException as exc:  # drained, not taken in: the next request must not take the quiet for granted
        feed.unsure(f"taking the last changes in failed ({type(exc).__name__})")
        raise


def _take_in(index: Index, drained: Drained, *, embed: bool) -> bool:
    if drained.lost is not None:
        return _check_everything(index, drained.lost, rearm=drained.rearm, embed=embed)
    for name in drained.rescan:
        indexer.reindex(index, embed=False, only=name)
    for name, paths in drained.notes.items():
        if name in drained.rescan:
            continue
        if len(paths) >= MANY_PATHS:
            indexer.reindex(index, embed=False, only=name)
            continue
        for path in sorted(paths):
            indexer.index_file(index, path, embed=False)
    _embed_few(index, embed)
    return True


def _check_everything(index: Index, why: str, *, rearm: bool, embed: bool) -> bool:
    """The feed lost track (`why`): re-arm it first (`rearm`; a change made during the check shows next time),
    then check every root as a process without a feed does, every note's stats included."""
    from pinky.indexing.change_feed import FeedUnavailable

    log.info("the change feed lost track (%s): checking every note", why)
    if rearm and index.feed is not None:
        try:
            index.feed.start()
        except FeedUnavailable as exc:
            log.warning("cannot watch the notes for changes any more (%s): each request checks them", exc)
            index.feed = None
    for name in index.config.roots():
        if name != "global":
            indexer.reindex(index, embed=False, only=name)
    refresh_global(index, embed=embed, walk_limit=None)
    return True


def _embed_few(index: Index, embed: bool) -> None:
    if embed and index.vectors_writable() and 0 < store_vectors.count_pending(index.conn) <= EMBED_AT_ONCE:
        embed_pending(index)


def refresh_global(index: Index, *, embed: bool = True, walk_limit: int | None = signal.ONE_SHOT_WALK_LIMIT) -> bool:
    """Bring the index's global rows up to date when the global brain changed; True when it did.
    `embed`: give a few new chunks their vectors at once (the hooks leave them to the next process that does).
    `walk_limit`: how many notes are walked at most to find out (pinky.base.global_signature.changed); None: all."""
    root = index.config.roots().get("global")
    if root is None:
        return False
    conn = index.conn
    owed_before = store_vectors.get_meta(conn, OWED_KEY) == "1"
    recorded = store_vectors.get_meta(conn, signal.SIGNATURE_KEY)
    to_embed = owed_before and embed and index.vectors_writable()
    folders = store_vectors.get_meta(conn, signal.FOLDERS_KEY)
    if walk_limit is not None and not to_embed and recorded and folders and _count(recorded) > walk_limit:
        return _take_in_folders(index, recorded, folders, os.fspath(root), owed_before, embed=embed)
    state = snapshot(index) if walk_limit is None else None  # walked once, not once to compare and once to record
    if not to_embed and (recorded == state[0] if state is not None else not signal.changed(
            recorded, folders, os.fspath(root), walk_limit=walk_limit)):
        return False
    state = state or snapshot(index)
    if state is None:
        return False
    changed = recorded != state[0]
    owed = owed_before
    if changed:
        report = indexer.reindex(index, embed=False, only="global")
        log.info("the global brain changed: %s", report.as_dict())
        owed = owed or bool(report.added or report.updated)
    if owed and embed and index.vectors_writable() and store_vectors.count_pending(conn) <= EMBED_AT_ONCE:
        embed_pending(index)
        owed = False
    if changed or owed != owed_before:
        record(index, state, owed=owed)
    return changed


def _count(signature: str) -> int:
    count = signature.split(":", 1)[0]
    return int(count) if count.isdigit() else 0


def _take_in_folders(index: Index, recorded: str, folders: str, root: str, owed: bool, *, embed: bool) -> bool:
    """A global brain past the walk limit: its folders first, then only the files of the folders that changed (a
    note created, deleted, renamed or replaced in them). The signature recorded then keeps the count alone (its
    sum is the walk's): a process that walks takes the brain in once and records it whole."""
    moved = signal.moved_folders(folders, root)
    if not moved:
        return False
    lines = {line.split(" ", 2)[2]: line for line in folders.split("\n") if line.count(" ") >= 2}
    report, listed = indexer.reindex_folders(index, "global", moved, set(lines))
    log.info("folders of the global brain changed: %s", report.as_dict())
    whole = tuple(rel for rel, replaced in moved.items() if replaced)
    fresh = {line.split(" ", 2)[2]: line for line in listed}
    kept = [line for rel, line in lines.items() if rel not in fresh and rel not in moved and not rel.startswith(whole)]
    owed = owed or bool(report.added or report.updated)
    if owed and embed and index.vectors_writable() and store_vectors.count_pending(index.conn) <= EMBED_AT_ONCE:
        embed_pending(index)
        owed = False
    count = max(0, _count(recorded) + report.added - report.removed)
    record(index, (f"{count}:folders", "\n".join(sorted(kept + list(fresh.values())))), owed=owed)
    return True

"""The global brain as it is on disk now, in every index, without a reindex anyone must know to run.

Each project's index keeps its own copy of the global brain's rows (and vectors), so a note saved by
another project, outside any project, pulled by `pinky-brain sync` or edited by hand is found only once
that copy catches up. Before every operation (`healing.heal`) a process walks the global brain's stats
(`pinky.base.freshness`: ~3 ms per 1,000 notes) and compares them with what the index recorded when it
last caught up; when they differ it reindexes the global root alone (stat, then hash, then parse only
what changed) and records the new state. A long-running process remembers the last state it saw, so
a walk that finds nothing new costs no query.

New chunks get their vectors at once when they are few (a save, a sync of a handful of notes); more
are left to the background fill of a running server or the next reindex, and searches say so.
"""

from __future__ import annotations

import logging
import os

from pinky.base import freshness as signal
from pinky.indexing import indexer
from pinky.indexing.index import Index
from pinky.indexing.vector_fill import embed_pending
from pinky.store import vectors as store_vectors
from pinky.store.connect import write_transaction

log = logging.getLogger("pinky")

EMBED_AT_ONCE = 64  # new chunks of the global brain embedded before the operation goes on
OWED_KEY = "global_vectors_owed"  # "1": chunks taken in without their vectors (by a hook), to embed when few


def snapshot(index: Index) -> tuple[str, str] | None:
    """The global brain's (signature, folders) now; None when this index has no global root."""
    root = index.config.roots().get("global")
    return signal.walk(os.fspath(root)) if root is not None else None


def record(index: Index, state: tuple[str, str] | None, *, owed: bool = False) -> None:
    """Remember that the index holds the global brain as it was at `state` (taken before its scan); `owed`: some of
    the chunks taken in still lack vectors (a hook took them in)."""
    if state is None:
        return
    with write_transaction(index.conn):
        store_vectors.set_meta(index.conn, signal.SIGNATURE_KEY, state[0])
        store_vectors.set_meta(index.conn, signal.FOLDERS_KEY, state[1])
        store_vectors.set_meta(index.conn, OWED_KEY, "1" if owed else "0")
    index.global_seen = state[0]


def refresh_global(index: Index, *, embed: bool = True) -> bool:
    """Bring the index's global rows up to date when the global brain changed; True when it did.
    `embed`: give a few new chunks their vectors at once (the hooks leave them to the next process that does)."""
    state = snapshot(index)
    if state is None or state[0] == index.global_seen:
        return False
    conn = index.conn
    changed = store_vectors.get_meta(conn, signal.SIGNATURE_KEY) != state[0]
    owed_before = store_vectors.get_meta(conn, OWED_KEY) == "1"
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
    else:
        index.global_seen = state[0]
    return changed

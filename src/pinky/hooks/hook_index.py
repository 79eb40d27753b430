"""The hooks' index, with the global brain as it is on disk now (pinky.base.global_signature).

The hooks read the index read-only and must cost little more than the interpreter's start, so they look
at the global brain the cheap way first: the per-prompt hook walks its notes' stats while there are at most
HOOK_WALK_LIMIT of them (~6 ms), and beyond that only its folders' (microseconds: every note created,
deleted, renamed or replaced, which is how pinky, `pinky-brain sync` and most editors write); the
session-start hook walks up to ONE_SHOT_WALK_LIMIT (~60 ms), as the CLI does. Only when something changed
does a hook take it in itself: it opens the KnowledgeBase once and reindexes the global root (full text now;
vectors are left to the next CLI command, server or reindex), a one-off cost after a change instead of a stale
answer. Why not read the global index (`global.db`) beside the project's instead: nothing keeps that one fresh
either (a save in a project writes the project's index), and two BM25 rankings over different corpora cannot be
merged into one.
When taking it in fails (an index nobody may write), the hook says so on stderr and answers from what the
index holds: hooks fail open.
"""

from __future__ import annotations

import sys

from pinky.base import global_signature
from pinky.base.locations import Locations
from pinky.store.readonly import connect_ro, meta_values

TYPE_CHECKING = False
if TYPE_CHECKING:
    from sqlite3 import Connection


def fresh_connection(loc: Locations, conn: Connection, *, walk_limit: int | None) -> Connection | None:
    """`conn` (the index read-only) when it holds the global brain as it is; else a connection to the index
    once it took the changes in. `walk_limit`: global_signature.changed's."""
    signature, folders = meta_values(conn, global_signature.SIGNATURE_KEY, global_signature.FOLDERS_KEY)
    if not global_signature.changed(signature, folders, loc.global_dir, walk_limit=walk_limit):
        return conn
    conn.close()
    try:
        from pinky.config import config_from
        from pinky.services.global_brain import take_in

        take_in(config_from(loc))
    except Exception as exc:  # fail open: the rows the index holds are still worth showing
        message = " ".join(str(exc).split())[:200]
        sys.stderr.write(f"pinky-hooks: the global brain changed, but the index could not take it in ({message}); "
                         "run `pinky-brain reindex`\n")
    return connect_ro(loc.read_db)

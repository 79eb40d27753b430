"""The transcript pinky keeps for hosts without one (Cursor, Copilot CLI, OpenCode, Windsurf): the session's journal.

Each prompt and tool call is appended, Claude-shaped, to `$PINKY_HOME/state/hooks/journal/<session>.jsonl`, which
the stop (or session-end) hook reads like a transcript. What the user typed and ran is theirs: the journal is
redacted as the diary is (`pinky.base.redact`, unlabelled keys too), 0600 in folders only they may enter
(`pinky.base.private`), and bounded:
- once the diary has recorded a journal to its end, what it recorded is dropped (the file is emptied and its
  offset set back to 0, both under the locks the appenders and the diary take);
- a journal stops growing at `MAX_BYTES` (a session whose stop never comes);
- a journal not written for `MAX_AGE_DAYS` (a session long ended) is deleted.

What is journaled, and how it is redacted, is `pinky.capture.foreign`'s (`pinky-brain import-sessions` builds the
same from a host's own store). Stdlib only: the per-prompt and per-tool hooks write here.
"""

from __future__ import annotations

import os

from pinky.base.locations import Locations
from pinky.hooks.state import dumps

MAX_BYTES = 4 * 1024 * 1024
MAX_AGE_DAYS = 7
FOLDER = ("hooks", "journal")


def journal_path(loc: Locations, session_id: str) -> str:
    safe = "".join(c if c.isalnum() or c in "-_" else "-" for c in session_id)[:120]
    return os.path.join(loc.state_dir, *FOLDER, safe + ".jsonl")


def journal(loc: Locations, payload: dict, event: str) -> None:
    """Append this prompt or tool call to the session's journal, as Claude Code's transcript would hold it."""
    from pinky.capture.foreign import relayed_events

    events = relayed_events(payload, event)
    if events is None:
        return
    from pinky.base.private import append_private

    append_private(journal_path(loc, payload["session_id"]), "".join(dumps(e) + "\n" for e in events),
                   loc.state_dir, limit=MAX_BYTES)


def trim(loc: Locations, session_id: str) -> None:
    """Drop what the diary has recorded of this session's journal, and delete journals long unwritten.

    Under the offsets' lock (no other diary writer moves the offset meanwhile) and the journal's own flock (no
    prompt hook appends meanwhile): only a journal read to its very end is emptied, and its offset goes back to 0
    with it, so nothing unrecorded is lost and nothing is recorded twice."""
    from pathlib import Path

    from pinky.base.fileio import lock_descriptor, same_file
    from pinky.capture.recorder import OffsetStore
    from pinky.hooks.stop import offsets_path

    path = journal_path(loc, session_id)
    store = OffsetStore(Path(offsets_path(loc)), top=loc.state_dir)
    try:
        with store.lock():
            entry = store.entry(session_id)
            if entry and entry.get("path") == path and entry.get("offset"):
                fd = os.open(path, os.O_RDWR)
                try:
                    lock_descriptor(fd)
                    if same_file(fd, path) and os.fstat(fd).st_size == entry["offset"]:
                        os.ftruncate(fd, 0)
                        store.set(session_id, 0, path, extra={k: v for k, v in entry.items()
                                                              if k not in ("offset", "seen", "path")})
                finally:
                    os.close(fd)
    except OSError:
        pass  # a journal that cannot be trimmed now is trimmed at the next stop, or goes with its age
    prune(loc)


def prune(loc: Locations, now: float | None = None) -> int:
    """Delete the journals not written for MAX_AGE_DAYS (their sessions ended long ago); how many."""
    import time

    folder = os.path.join(loc.state_dir, *FOLDER)
    cutoff = (time.time() if now is None else now) - MAX_AGE_DAYS * 86400
    removed = 0
    try:
        names = os.listdir(folder)
    except OSError:
        return 0
    for name in names:
        path = os.path.join(folder, name)
        try:
            if name.endswith(".jsonl") and os.stat(path).st_mtime < cutoff:
                os.unlink(path)
                removed += 1
        except OSError:
            pass
    return removed

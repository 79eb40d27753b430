"""Another program's SQLite database, read only: the sessions OpenCode keeps (`pinky.hosts.opencode.SessionStore`
says what its tables hold). Opened `mode=ro`, so OpenCode's own writes (WAL) are seen and nothing is written."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from contextlib import closing, contextmanager
from pathlib import Path
from urllib.parse import quote

__all__ = ["opencode_messages", "opencode_parts", "opencode_sessions", "read_only"]


@contextmanager
def read_only(path: Path) -> Iterator[sqlite3.Connection]:
    """A connection that reads `path` and can change nothing; sqlite3.Error when it is no SQLite database."""
    with closing(sqlite3.connect(f"file:{quote(str(path))}?mode=ro", uri=True)) as db:
        yield db


def opencode_sessions(db: sqlite3.Connection) -> list[tuple[str, str]]:
    """(id, the folder it ran in) of every session, oldest first."""
    rows = db.execute("SELECT id, directory FROM session ORDER BY time_created, id").fetchall()
    return [(sid, folder) for sid, folder in rows if isinstance(sid, str) and isinstance(folder, str)]


def opencode_messages(db: sqlite3.Connection, session_id: str) -> Iterator[tuple[str, str]]:
    """(id, data) of the session's messages, in order."""
    yield from db.execute("SELECT id, data FROM message WHERE session_id = ? ORDER BY time_created, id",
                          (session_id,))


def opencode_parts(db: sqlite3.Connection, session_id: str) -> Iterator[tuple[str, str]]:
    """(message id, data) of the session's parts, in order."""
    yield from db.execute("SELECT message_id, data FROM part WHERE session_id = ? ORDER BY time_created, id",
                          (session_id,))

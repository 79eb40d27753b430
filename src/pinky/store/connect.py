"""One connection factory that owns SQLite's quirks.

Many Python builds (pyenv, macOS system Python) compile `sqlite3` without `enable_load_extension`,
so sqlite-vec cannot load there. We use the stdlib driver where it can load extensions, else
sqlean.py (a drop-in sqlite3 build with extension loading and FTS5). If vectors still cannot load,
the database works without them and `vec_error` says why; search then runs on FTS alone.

Each connection remembers which file (device and inode) it opened. A repaired index is a new file
under the same name, and a connection still on the old one would write into a file nobody reads:
`write_transaction` checks the name still leads to its file and raises IndexReplaced otherwise.
"""

from __future__ import annotations

import logging
import os
import random
import sqlite3
import time
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

from pinky.base.locations import ENV_NO_VEC, ENV_SQLITE_DRIVER
from pinky.errors import IndexReplaced
from pinky.store.readonly import readonly_uri

log = logging.getLogger("pinky.store")

BUSY_TIMEOUT_MS = 60_000


@dataclass
class Database:
    """A connection plus what we learned while opening it."""

    conn: Any
    path: Path
    driver: str
    sqlite_version: str
    vec_version: str | None
    vec_error: str | None

    @property
    def vec_available(self) -> bool:
        return self.vec_version is not None

    @property
    def identity(self) -> tuple[int, int] | None:
        """(device, inode) of the file this connection opened."""
        return self.conn.pinky_identity

    def close(self) -> None:
        self.conn.close()


def file_identity(path: str | os.PathLike[str]) -> tuple[int, int] | None:
    """(device, inode) of the file at `path` now; None when there is none."""
    try:
        stat = os.stat(path)
    except FileNotFoundError:
        return None
    return stat.st_dev, stat.st_ino


_CONNECTION_CLASSES: dict[str, type] = {}


def _connection_class(module: ModuleType) -> type:
    """The driver's Connection with room for the file identity (the C class takes no attributes)."""
    found = _CONNECTION_CLASSES.get(module.__name__)
    if found is None:
        found = _CONNECTION_CLASSES[module.__name__] = type("Connection", (module.Connection,), {})
    return found


def _driver_module(preferred: str | None) -> tuple[ModuleType, str]:
    if preferred == "sqlite3":
        return sqlite3, "sqlite3"
    if preferred != "sqlean" and hasattr(sqlite3.Connection, "enable_load_extension"):
        return sqlite3, "sqlite3"
    try:
        import sqlean
    except ImportError:
        return sqlite3, "sqlite3"
    return sqlean, "sqlean"


def _load_vec(conn: Any) -> tuple[str | None, str | None]:
    if os.environ.get(ENV_NO_VEC, "") == "1":
        return None, f"disabled by {ENV_NO_VEC}=1"
    if not hasattr(conn, "enable_load_extension"):
        return None, "this Python's sqlite3 cannot load extensions and sqlean.py is not installed"
    location = _vec_extension_path()
    if location is None:
        return None, "the sqlite-vec package is not installed"
    try:
        conn.enable_load_extension(True)
        conn.load_extension(location)
        conn.enable_load_extension(False)
        return conn.execute("SELECT vec_version()").fetchone()[0], None
    except Exception as exc:  # any failure here only costs us the vector half of search
        return None, f"sqlite-vec failed to load: {exc}"


def _vec_extension_path() -> str | None:
    """Where sqlite-vec's loadable extension is, found without importing the package:
    `import sqlite_vec` imports numpy (~100 ms), which the hooks and the CLI must not pay for."""
    import importlib.util

    spec = importlib.util.find_spec("sqlite_vec")
    if spec is None or not spec.submodule_search_locations:
        return None
    return os.path.join(list(spec.submodule_search_locations)[0], "vec0")


def open_database(path: Path, *, driver: str | None = None, readonly: bool = False) -> Database:
    """Open (creating if needed) the index at `path` with WAL, a long busy timeout and foreign keys.

    `readonly`: an existing index this process may not write (a read-only checkout), opened with SQLite's
    `mode=ro`; nothing is created beside it, and every write fails with SQLITE_READONLY."""
    module, name = _driver_module(driver or os.environ.get(ENV_SQLITE_DRIVER))
    if readonly:
        conn = _connect_readonly(module, path)
    else:
        path.parent.mkdir(parents=True, exist_ok=True)
        # isolation_level=None: we issue BEGIN IMMEDIATE ourselves so writers queue on the busy
        # timeout instead of failing with "database is locked" when a read upgrades to a write.
        conn = module.connect(str(path), timeout=BUSY_TIMEOUT_MS / 1000, isolation_level=None,
                              check_same_thread=False, factory=_connection_class(module))
    conn.pinky_path, conn.pinky_identity = str(path), file_identity(path)
    conn.row_factory = module.Row
    conn.execute(f"PRAGMA busy_timeout={BUSY_TIMEOUT_MS}")
    if not readonly:
        _enable_wal(conn)
        conn.execute("PRAGMA synchronous=NORMAL")
    conn.execute("PRAGMA foreign_keys=ON")
    vec_version, vec_error = _load_vec(conn)
    if vec_error:
        log.info("vectors unavailable: %s", vec_error)
    sqlite_version = conn.execute("SELECT sqlite_version()").fetchone()[0]
    return Database(conn, path, name, sqlite_version, vec_version, vec_error)


def _connect_readonly(module: ModuleType, path: Path) -> Any:
    """`mode=ro`, else `immutable=1`. A WAL index needs its `-shm` file even to be read, and SQLite cannot
    create one in a folder we may not write ("attempt to write a readonly database" at the first read):
    then, with no `-wal` holding commits the file lacks, the file alone is the whole index and is opened
    as immutable (SQLite takes no locks and reads no WAL). A non-empty `-wal` without a readable `-shm`
    is refused: reading past it would show an older index."""
    options = {"timeout": BUSY_TIMEOUT_MS / 1000, "isolation_level": None, "check_same_thread": False,
               "uri": True, "factory": _connection_class(module)}
    conn = module.connect(readonly_uri(str(path)), **options)
    try:
        conn.execute("SELECT count(*) FROM sqlite_master").fetchone()
        return conn
    except module.OperationalError:
        conn.close()
        wal = Path(f"{path}-wal")
        if wal.exists() and wal.stat().st_size > 0:
            raise
    return module.connect(readonly_uri(str(path), immutable=True), **options)


def copy_database(db: Database, target: Path) -> None:
    """Copy the index `db` (open read-only is fine) into a new file `target`, page by page (SQLite's
    backup: a consistent snapshot, whatever journal the source uses)."""
    module, _ = _driver_module(db.driver)
    target.parent.mkdir(parents=True, exist_ok=True)
    copy = module.connect(str(target))
    try:
        db.conn.backup(copy)
    finally:
        copy.close()


def _enable_wal(conn: Any) -> None:
    """Switch a new database to WAL. The switch needs an exclusive lock and SQLite reports
    "database is locked" at once, without waiting on busy_timeout, when another process is
    creating the same file at that moment: so check first, and retry briefly."""
    deadline = time.monotonic() + BUSY_TIMEOUT_MS / 1000
    delay = 0.01
    while True:
        try:
            if str(conn.execute("PRAGMA journal_mode").fetchone()[0]).lower() != "wal":
                conn.execute("PRAGMA journal_mode=WAL")
            return
        except Exception as exc:
            if "locked" not in str(exc) and "busy" not in str(exc) or time.monotonic() > deadline:
                raise
            time.sleep(delay + random.random() * delay)
            delay = min(delay * 2, 0.5)


def has_fts5(db: Database) -> bool:
    rows = db.conn.execute("PRAGMA compile_options").fetchall()
    return any(r[0] == "ENABLE_FTS5" for r in rows) or _probe_fts5(db)


def _probe_fts5(db: Database) -> bool:
    try:
        db.conn.execute("CREATE VIRTUAL TABLE temp._fts5_probe USING fts5(x)")
        db.conn.execute("DROP TABLE temp._fts5_probe")
        return True
    except Exception:
        return False


@contextmanager
def write_transaction(conn: Any) -> Iterator[None]:
    """BEGIN IMMEDIATE takes the write lock up front, so waiting happens on busy_timeout
    instead of failing later with "database is locked" when a reader upgrades.

    Raises IndexReplaced, writing nothing, when the connection's file is no longer the index."""
    conn.execute("BEGIN IMMEDIATE")
    identity = getattr(conn, "pinky_identity", None)
    if identity is not None and file_identity(conn.pinky_path) != identity:
        conn.execute("ROLLBACK")
        raise IndexReplaced(f"{conn.pinky_path} was replaced by another process (a repair); reopen it")
    try:
        yield
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    conn.execute("COMMIT")


BULK_CHECKPOINT_PAGES = 16384  # 64 MB of WAL between checkpoints during a large rebuild (SQLite's default: 1000)


@contextmanager
def bulk_checkpoints(conn: Any, pages: int = BULK_CHECKPOINT_PAGES) -> Iterator[None]:
    """Checkpoint the WAL less often while many transactions rewrite the same pages (a large reindex):
    a page changed by ten commits is then copied into the database once, not ten times (the 2,000-note
    benchmark writes 15 % fewer bytes, with 2,048-chunk vector commits). Afterwards the usual interval
    returns and the WAL is checkpointed."""
    before = int(conn.execute("PRAGMA wal_autocheckpoint").fetchone()[0])
    conn.execute(f"PRAGMA wal_autocheckpoint={int(pages)}")
    try:
        yield
    finally:
        conn.execute(f"PRAGMA wal_autocheckpoint={before}")
        with suppress(Exception):  # busy readers only postpone it to the next automatic checkpoint
            conn.execute("PRAGMA wal_checkpoint(PASSIVE)")


@contextmanager
def bulk_writes(conn: Any, *, empty: bool) -> Iterator[None]:
    """Write a large rebuild with as few bytes as SQLite allows.

    Into an empty index nobody else has open, with the rollback journal instead of the WAL: pages
    appended to the file are never journaled, so the index is written about once, where the WAL
    writes every page twice (log, then checkpoint). The switch needs the file to itself; when
    another process has it open the WAL stays (`bulk_checkpoints`). A process that opens the index
    meanwhile waits for each commit, as with any writer, and its own open switches the file back
    to WAL between our commits if it gets there first: SQLite lets connections follow that."""
    if not (empty and _journal_mode(conn, "truncate")):
        with bulk_checkpoints(conn):
            yield
        return
    try:
        yield
    finally:
        _enable_wal(conn)


def _journal_mode(conn: Any, mode: str) -> bool:
    """Switch the journal mode; False (nothing changed) at once while another connection has the file
    open (without the busy timeout: that would wait a minute for a server that never lets go)."""
    conn.execute("PRAGMA busy_timeout=0")
    try:
        return str(conn.execute(f"PRAGMA journal_mode={mode}").fetchone()[0]).lower() == mode
    except Exception as exc:
        if "locked" in str(exc) or "busy" in str(exc):
            return False
        raise
    finally:
        conn.execute(f"PRAGMA busy_timeout={BUSY_TIMEOUT_MS}")


@contextmanager
def read_snapshot(conn: Any) -> Iterator[None]:
    """One consistent view across several reads (WAL: writers carry on meanwhile). Inside a transaction
    already, that transaction is the snapshot: nothing is begun or ended here."""
    if conn.in_transaction:
        yield
        return
    conn.execute("BEGIN")
    try:
        yield
    finally:
        conn.execute("COMMIT")


def quick_check(conn: Any, *, full: bool = False) -> str | None:
    """None when SQLite finds every page of the file sound (PRAGMA quick_check reads them all: ~250 ms
    for 10,000 notes with SQLite 3.50), else its first complaint. A badly damaged file may raise.

    `full`: PRAGMA integrity_check instead, which also looks up every row in each of its table's
    indexes, so a flipped byte inside an index key ("row 3 missing from index chunk_hash") is found."""
    pragma = "integrity_check" if full else "quick_check"
    rows = conn.execute(f"PRAGMA {pragma}(1)").fetchall()
    first = str(rows[0][0]) if rows else f"{pragma} gave no answer"
    return None if first == "ok" else first

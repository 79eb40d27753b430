"""brain.db opened for one configuration: created, migrated, repaired and rebuilt as needed.

The index is derived from the markdown and disposable, so a file that is not a readable SQLite
database, or has a schema this pinky does not know, is moved aside and rebuilt — but only when it
is named or shaped like an index: a note or any other file passed as the index is refused.
The indexer, search and entries modules all work through an `Index`.

Several processes share one index (servers, the CLI, the hooks), so the file is only ever changed
in ways they all see. A full rebuild empties it in place (one transaction): every open connection
stays valid and sees the new contents. A corrupt file is swapped for a fresh one under the same
name, while `<index>-open.lock` is held exclusively (every opener holds it shared, so nobody opens
the name halfway through); processes that still have the old file open notice at their next call
(`follow`: one stat) or at their next write (`write_transaction` checks too) and reopen it.
"""

from __future__ import annotations

import contextlib
import logging
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pinky.base.fileio import FileLock, file_lock
from pinky.base.locations import can_hold
from pinky.base.shown import plain
from pinky.config import Config
from pinky.errors import IndexUnavailable, InvalidInput, NotInProject, PinkyError
from pinky.store import corpus, quality, retrieval
from pinky.store import migrations as store_migrations
from pinky.store import vectors as store_vectors
from pinky.store.connect import Database, copy_database, file_identity, open_database, quick_check, write_transaction

if TYPE_CHECKING:
    from pinky.indexing.change_feed import ChangeFeed

log = logging.getLogger("pinky")

# SQLITE_CORRUPT and SQLITE_NOTADB; and what damaged files say where the driver gives no code. Text
# we stored is always UTF-8, so a column that does not decode holds bytes we never wrote.
_CORRUPT_CODES = (11, 26)
_CORRUPT_MARKERS = ("database disk image is malformed", "file is not a database", "unsupported file format",
                    "malformed database schema", "could not decode to utf-8")
_INDEX_SUFFIXES = (".db", ".sqlite", ".sqlite3")
Identity = tuple[int, int] | None


def looks_like_an_index(path: Path) -> bool:
    """Only files that are (or are named like) a SQLite database are ever moved aside."""
    if path.suffix.lower() in _INDEX_SUFFIXES:
        return True
    try:
        with open(path, "rb") as handle:
            header = handle.read(16)
    except OSError:
        return True  # missing: nothing to protect
    return header in (b"", b"SQLite format 3\x00")


def is_corruption(exc: BaseException) -> bool:
    """True for SQLite's own word that the file is damaged. A PinkyError only when it wraps that word
    (a failed migration): never for what pinky says about notes, whatever its text."""
    if isinstance(exc, PinkyError):
        return exc.__cause__ is not None and is_corruption(exc.__cause__)
    code = getattr(exc, "sqlite_errorcode", None)
    if isinstance(code, int) and code & 0xFF in _CORRUPT_CODES:
        return True
    text = str(exc).lower()
    return any(marker in text for marker in _CORRUPT_MARKERS)


class Index:
    """The SQLite index of one brain, opened lazily, plus what searching and indexing need to know
    about it: the markdown roots, the embedder and whether vectors can be used."""

    def __init__(self, config: Config, *, cache_vectors: bool = False) -> None:
        """`cache_vectors`: keep vectors in memory between searches (long-running processes)."""
        self.config = config
        self._db: Database | None = None
        self.vector_cache: Any = None
        # In-memory copies of this index's data kept by the layers above between searches (the second
        # stage's vectors, by name); like vector_cache, each reloads once the file is closed.
        self.caches: dict[str, Any] = {}
        if cache_vectors:
            from pinky.indexing.vectors import VectorCache

            self.vector_cache = VectorCache()
        self.rebuilt_reason: str | None = None  # set when a corrupt/unknown index was replaced
        self.corruption: str | None = None  # set when that was because the file was damaged
        self._chunk_total: tuple[tuple[int, int, int], int] | None = None
        # The project's own index, read in place and read-only (`config.db_source`: a read-only checkout)
        # until something must be written; then it is copied to `config.db_path` (`own_file`).
        self.reading_source = False
        self.feed: ChangeFeed | None = None  # what changed on disk, from the OS (a long-running process's)
        self.operating = False  # inside an operation: a nested one does not look at the global brain again

    # --- the file ---------------------------------------------------------------------------------

    @property
    def db(self) -> Database:
        if self._db is None:
            self._db = self._open()
        return self._db

    @property
    def conn(self) -> Any:
        return self.db.conn

    @property
    def identity(self) -> Identity:
        """(device, inode) of the file open now; None when none is."""
        return self._db.identity if self._db is not None else None

    @property
    def path(self) -> Path:
        """The file read now: `config.db_path`, or the read-only index read in place."""
        return Path(self._db.conn.pinky_path) if self._db is not None else self.config.db_path

    def close(self) -> None:
        if self._db is not None:
            self._db.close()
            self._db = None
        self.reading_source = False
        for cache in (self.vector_cache, *self.caches.values()):
            if cache is not None:
                cache.generation = None  # the next file may be another one: reload

    def follow(self) -> None:
        """Reopen the index if another process replaced the file since we opened it (a repair),
        so a long-running process never reads or writes a file that is no longer the index.
        One stat: cheap enough for every request. A read-only index read in place is left for the copy
        another process made of it."""
        if self.reading_source:
            if self.config.db_path.exists():
                self.close()
            return
        if self._db is not None and file_identity(self.config.db_path) != self._db.identity:
            log.info("%s was replaced by another process; reopening it", self.config.db_path)
            self.close()

    def lock(self, name: str, *, shared: bool = False, blocking: bool = True) -> FileLock:
        """A lock beside the index: `open` (held shared while opening, exclusive while swapping the
        file) and `rebuild` (full rebuilds and repairs, one at a time)."""
        return file_lock(f"{self.config.db_path}-{name}.lock", shared=shared, blocking=blocking)

    def rebuild_pending(self) -> bool:
        """The index was emptied for a rebuild that has not completed yet: it holds part of the notes."""
        return store_vectors.get_meta(self.conn, store_vectors.REBUILD_PENDING) == "1"

    def rebuild_interrupted(self) -> bool:
        """A rebuild is pending and nobody is running it any more (killed, interrupted). A meta read
        per call; the lock is only tried when the mark is there."""
        if not self.rebuild_pending():
            return False
        try:
            with self.lock("rebuild", blocking=False):
                return True
        except BlockingIOError:
            return False  # a rebuild is running: it completes the index itself

    def rebuild_done(self) -> None:
        """A reindex has brought the whole index up to date: no rebuild is pending any more."""
        if store_vectors.get_meta(self.conn, store_vectors.REBUILD_PENDING) is not None:
            with write_transaction(self.conn):
                store_vectors.delete_meta(self.conn, store_vectors.REBUILD_PENDING)

    def drop(self) -> None:
        """Empty the index for a full rebuild; the markdown is untouched.

        In place when the file is sound, so the processes that have it open see the rebuild at once;
        a file that fails quick_check, or whose vector table this process cannot drop (no
        sqlite-vec here), is swapped for a fresh one instead."""
        db = self.db
        try:
            problem = quick_check(db.conn)
            if problem is None and (db.vec_available or not store_vectors.vector_table_exists(db.conn)):
                store_migrations.reset(db.conn)
                _shrink(db.conn)
                return
        except Exception as exc:
            if not is_corruption(exc):
                raise
            problem = str(exc)
        self.replace(f"{self.config.db_path.name} is corrupt ({problem})" if problem else None, db.identity)

    def _open(self) -> Database:
        path = self.config.db_path
        if self.config.db_moved_from is not None:
            from pinky.indexing.carried import remember_read_only  # what is said here is carried back later

            remember_read_only(self.config)
        if path.suffix.lower() in (".md", ".markdown"):
            # A corrupt index is moved aside and rebuilt; a note passed by mistake must never be.
            raise IndexUnavailable(f"{path} is a markdown file, not an index; pass a path like brain.db")
        if self.config.db_source is not None and not path.exists():
            source = self._open_source(self.config.db_source)
            if source is not None:
                return source
        with contextlib.ExitStack() as held:
            with contextlib.suppress(OSError):  # a folder where no lock can be made: open it all the same
                held.enter_context(self.lock("open", shared=True))
            found = file_identity(path)
            why: tuple[str, bool] | None
            try:
                db = open_database(path)
            except Exception as exc:
                if not is_corruption(exc):
                    where = "" if can_hold(str(path)) else f" ({path.parent} cannot be written by this user)"
                    raise IndexUnavailable(f"cannot open the index {path}: {exc}{where}") from exc
                why = (f"{path.name} was not a readable SQLite database ({exc})", True)
            else:
                why = self._unusable(db)
                if why is None:
                    if self.config.project_root is not None and self.config.db_moved_from is None:
                        from pinky.indexing.carried import carry_back  # feedback given while read-only

                        carry_back(self.config, db.conn)
                    return db
        return self.replace(why[0], found, damaged=why[1])

    def _open_source(self, source: Path) -> Database | None:
        """The project's read-only index opened in place, when it can serve as it is; None when it cannot
        (then `config.db_path` is opened: built from the markdown, or copied from it first when only
        migrations are missing)."""
        try:
            db = open_database(source, readonly=True)
        except Exception as exc:
            log.info("cannot read %s in place (%s); the index is built in %s", source, exc, self.config.db_path)
            return None
        try:
            done = store_migrations.applied(db.conn)
            if done == store_migrations.KNOWN:
                store_migrations.check_readable(db.conn)
                self.reading_source = True
                return db
            # an older pinky's: copied, then migrated where it can be
            if not store_migrations.is_unknown_schema(db.conn):
                self._copy(db)
        except Exception as exc:
            log.info("cannot read %s in place (%s); the index is built in %s", source, exc, self.config.db_path)
        db.close()
        return None

    def own_file(self) -> None:
        """Make sure the index open is one this process may write: the read-only index read in place
        (`reading_source`) is copied to `config.db_path`, where the next open finds it. Another process's
        copy, when there is one, is used as it is."""
        if self._db is None:
            self._db = self._open()
        if not self.reading_source:
            return
        db = self._db
        self._db = None
        try:
            self._copy(db)
        finally:
            db.close()
            self.close()

    def _copy(self, db: Database) -> None:
        path = self.config.db_path
        with self.lock("open"):  # exclusive: nobody opens the name before the copy is whole
            if path.exists():
                return
            fresh = path.with_name(path.name + "-new")
            for name in (fresh, Path(f"{fresh}-wal"), Path(f"{fresh}-shm")):
                name.unlink(missing_ok=True)
            copy_database(db, fresh)
            fresh.replace(path)
        log.info("%s", self.config.db_note or f"the index is now {path}")

    def _unusable(self, db: Database) -> tuple[str, bool] | None:
        """Why a file just opened cannot serve as the index, and whether it is damaged (it is then
        closed); None when it can."""
        path = self.config.db_path
        try:
            if store_migrations.is_unknown_schema(db.conn):
                db.close()
                return f"{path.name} has a schema this pinky does not know", False
            store_migrations.migrate(db.conn)
            store_migrations.check_readable(db.conn)
        except Exception as exc:
            db.close()
            if not is_corruption(exc):
                raise IndexUnavailable(f"cannot use the index {path}: {exc}") from exc
            return f"{path.name} is corrupt ({exc})", True
        return None

    def replace(self, reason: str | None, bad: Identity, *, damaged: bool = True) -> Database:
        """Swap the file `bad` for a fresh, empty index under the same name and open that (callers
        reindex). With a `reason` the old file is kept as `<index>.corrupt`; without one (a plain
        full rebuild) it is deleted. `damaged`: the reason is damage (not a newer pinky's schema).

        When another process already replaced `bad`, its fresh file is simply opened."""
        path = self.config.db_path
        self.close()  # first: reading the file's header below would drop the locks SQLite holds on it
        if not looks_like_an_index(path):
            raise IndexUnavailable(f"{path} is not a SQLite index and not named like one (.db); "
                                   "refusing to replace it: pass a path like brain.db")
        with self.lock("open"):  # exclusive: nobody opens the name while it changes files
            if file_identity(path) == bad:
                if reason:
                    log.warning("%s; rebuilding it from the markdown", reason)
                self._swap(path, keep_as=path.with_name(path.name + ".corrupt") if reason else None)
            self._db = open_database(path)
        if reason:
            self.rebuilt_reason = reason
            self.corruption = reason if damaged else None
        return self._db

    @staticmethod
    def _swap(path: Path, keep_as: Path | None) -> None:
        """Build an empty index beside `path`, then move it over: the name never stands empty. The old
        file's WAL goes first, so no fresh connection could read the old pages as the new file's."""
        fresh = path.with_name(path.name + "-new")
        for name in (fresh, Path(f"{fresh}-wal"), Path(f"{fresh}-shm")):
            name.unlink(missing_ok=True)
        refined = quality.salvage(path)  # hours of the second stage's work (none from a missing file)
        db = open_database(fresh)
        store_migrations.migrate(db.conn)
        with write_transaction(db.conn):
            store_vectors.set_meta(db.conn, store_vectors.REBUILD_PENDING, "1")
            quality.after_rebuild(db.conn, *refined)
        db.close()  # checkpointed: the new file stands alone
        for suffix in ("-wal", "-shm"):
            path.with_name(path.name + suffix).unlink(missing_ok=True)
        if keep_as is not None and path.exists():
            path.replace(keep_as)
        fresh.replace(path)

    # --- the markdown roots -------------------------------------------------------------------------

    def root_dir(self, root: str) -> Path:
        try:
            return self.config.roots()[root]
        except KeyError:
            raise NotInProject() from None

    def display_path(self, root: str, rel: str) -> str:
        """Project notes relative to the repository (citable); global notes absolute. One line
        (`plain`), whatever the folders are named: every path pinky shows comes from here."""
        if root == "project" and self.config.save_dir is not None:
            base, top = self.config.save_dir, self.config.project_root
            folder = base.relative_to(top) if top is not None and base.is_relative_to(top) else Path(base.name)
            return plain((folder / rel).as_posix())
        return plain((self.config.global_dir / rel).as_posix())

    def locate(self, path: Path) -> tuple[str, str]:
        """(root, path relative to it) of a file under one of the roots."""
        resolved = path.resolve()
        for root, base in self.config.roots().items():
            if resolved.is_relative_to(base):
                return root, resolved.relative_to(base).as_posix()
        where = " or ".join(str(p) for p in self.config.roots().values())
        raise InvalidInput(f"{path} is not inside {where}")

    # --- vectors ----------------------------------------------------------------------------------

    @property
    def embedder(self) -> Any:
        from pinky.embed.embedding import get_embedder

        return get_embedder(self.config)

    def fingerprint(self) -> str:
        from pinky.embed.embedding import fingerprint

        embedder = self.embedder
        return fingerprint(embedder.name, embedder.dims, self.config.chunk_words)

    def chunk_total(self) -> int:
        """How many chunks the index holds, counted again only after a write by anyone: counting is a
        scan of the chunk table (2 ms of a 45 ms search at 200,000 chunks)."""
        conn = self.conn
        version = (id(conn), retrieval.data_version(conn), conn.total_changes)
        if self._chunk_total is None or self._chunk_total[0] != version:
            self._chunk_total = (version, corpus.chunk_total(conn))
        return self._chunk_total[1]

    def vector_status(self) -> tuple[bool, str]:
        """Whether vector search can run now, and why not."""
        db = self.db
        if not db.vec_available:
            return False, db.vec_error or "sqlite-vec is not loaded"
        stored = store_vectors.get_meta(db.conn, "fingerprint")
        if not store_vectors.vector_table_exists(db.conn) or stored is None:
            return False, "no vectors yet: run `pinky-brain reindex`"
        if stored != self.fingerprint():
            return False, "the embedder or chunker changed since the vectors were built: run `pinky-brain reindex`"
        return True, "ok"

    def prepare_vectors(self) -> bool:
        """Make sure a vector table for the current embedder exists; False where vectors cannot load."""
        db = self.db
        if not db.vec_available:
            return False
        current = self.fingerprint()
        if store_vectors.vector_table_exists(db.conn) and store_vectors.get_meta(db.conn, "fingerprint") == current:
            return True
        with write_transaction(db.conn):
            if not (store_vectors.vector_table_exists(db.conn) and store_vectors.get_meta(db.conn,
                                                                                          "fingerprint") == current):
                embedder = self.embedder
                store_vectors.reset_vector_table(db.conn, embedder.dims, current, embedder.name)
        return True

    def vectors_writable(self) -> bool:
        """Vector rows of changed chunks must be dropped too, which needs sqlite-vec loaded here."""
        return self.db.vec_available and store_vectors.vector_table_exists(self.db.conn)


def _shrink(conn: Any) -> None:
    """Give the emptied file's pages back: VACUUM of an index holding only its schema writes a few KB,
    and the rebuild then appends to a small file instead of filling the old one's free pages (what the
    new index did not need stayed in the file as free space: 2.1 MB of 92 MB at 10,000 notes). An
    optimisation: a reader that holds the WAL open only delays the truncation."""
    try:
        conn.execute("VACUUM")
    except Exception as exc:  # e.g. another connection mid-write: the rebuild fills the free pages instead
        log.debug("could not shrink the emptied index: %s", exc)


"""brain.db opened for one configuration: created, migrated, repaired and rebuilt as needed.

The index is derived from the markdown and disposable, so a file that is not a readable SQLite
database, or has a schema this pinky does not know, is moved aside and rebuilt — but only when it
is named or shaped like an index: a note or any other file passed as the index is refused.
The indexer, search and entries modules all work through an `Index`.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

from pinky.config import Config
from pinky.errors import IndexUnavailable, InvalidInput, NotInProject, PinkyError
from pinky.store import migrations as mig
from pinky.store import vectors as vq
from pinky.store.connect import Database, open_database, write_transaction

log = logging.getLogger("pinky")

_CORRUPT_MARKERS = ("file is not a database", "malformed", "unsupported file format", "not a database")
_INDEX_SUFFIXES = (".db", ".sqlite", ".sqlite3")


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


def is_corruption(exc: Exception) -> bool:
    return any(marker in str(exc).lower() for marker in _CORRUPT_MARKERS)


class Index:
    """The SQLite index of one brain, opened lazily, plus what searching and indexing need to know
    about it: the markdown roots, the embedder and whether vectors can be used."""

    def __init__(self, config: Config, *, cache_vectors: bool = False) -> None:
        """`cache_vectors`: keep vectors in memory between searches (long-running processes)."""
        self.config = config
        self._db: Database | None = None
        self.vector_cache: Any = None
        if cache_vectors:
            from pinky.vectors import VectorCache

            self.vector_cache = VectorCache()
        self.rebuilt_reason: str | None = None  # set when a corrupt/unknown index was replaced

    # --- the file ---------------------------------------------------------------------------------

    @property
    def db(self) -> Database:
        if self._db is None:
            self._db = self._open()
        return self._db

    @property
    def conn(self) -> Any:
        return self.db.conn

    def close(self) -> None:
        if self._db is not None:
            self._db.close()
            self._db = None

    def drop(self) -> None:
        """Delete the index (a full rebuild follows); the markdown is untouched."""
        self.close()
        path = self.config.db_path
        for suffix in ("", "-wal", "-shm"):
            path.with_name(path.name + suffix).unlink(missing_ok=True)

    def _open(self) -> Database:
        path = self.config.db_path
        if path.suffix.lower() in (".md", ".markdown"):
            # A corrupt index is moved aside and rebuilt; a note passed by mistake must never be.
            raise IndexUnavailable(f"{path} is a markdown file, not an index; pass a path like brain.db")
        try:
            db = open_database(path)
        except Exception as exc:
            if not is_corruption(exc):
                raise IndexUnavailable(f"cannot open the index {path}: {exc}") from exc
            return self._rebuild(f"{path.name} was not a readable SQLite database ({exc})")
        try:
            if mig.is_unknown_schema(db.conn):
                db.close()
                return self._rebuild(f"{path.name} has a schema this pinky does not know")
            mig.migrate(db.conn)
            mig.check_readable(db.conn)
        except Exception as exc:
            db.close()
            if isinstance(exc, PinkyError) or not is_corruption(exc):
                raise IndexUnavailable(f"cannot use the index {path}: {exc}") from exc
            return self._rebuild(f"{path.name} is corrupt ({exc})")
        return db

    def _rebuild(self, reason: str) -> Database:
        """The index is disposable: move the bad file aside and start a fresh one."""
        path = self.config.db_path
        if not looks_like_an_index(path):
            raise IndexUnavailable(f"{path} is not a SQLite index and not named like one (.db); "
                                   "refusing to replace it: pass a path like brain.db")
        log.warning("%s; rebuilding it from the markdown", reason)
        for suffix in ("-wal", "-shm"):
            path.with_name(path.name + suffix).unlink(missing_ok=True)
        if path.exists():
            path.replace(path.with_name(path.name + ".corrupt"))
        db = open_database(path)
        mig.migrate(db.conn)
        self.rebuilt_reason = reason
        return db

    # --- the markdown roots -------------------------------------------------------------------------

    def root_dir(self, root: str) -> Path:
        try:
            return self.config.roots()[root]
        except KeyError:
            raise NotInProject() from None

    def display_path(self, root: str, rel: str) -> str:
        """Project notes relative to the repository (citable); global notes absolute."""
        if root == "project" and self.config.save_dir is not None:
            base, top = self.config.save_dir, self.config.project_root
            folder = base.relative_to(top) if top is not None and base.is_relative_to(top) else Path(base.name)
            return (folder / rel).as_posix()
        return (self.config.global_dir / rel).as_posix()

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
        from pinky.embedding import get_embedder

        return get_embedder(self.config)

    def fingerprint(self) -> str:
        from pinky.embedding import fingerprint

        embedder = self.embedder
        return fingerprint(embedder.name, embedder.dims, self.config.chunk_words)

    def vector_status(self) -> tuple[bool, str]:
        """Whether vector search can run now, and why not."""
        db = self.db
        if not db.vec_available:
            return False, db.vec_error or "sqlite-vec is not loaded"
        stored = vq.get_meta(db.conn, "fingerprint")
        if not vq.vector_table_exists(db.conn) or stored is None:
            return False, "no vectors yet: run `pinky reindex`"
        if stored != self.fingerprint():
            return False, "the embedder or chunker changed since the vectors were built: run `pinky reindex`"
        return True, "ok"

    def prepare_vectors(self) -> bool:
        """Make sure a vector table for the current embedder exists; False where vectors cannot load."""
        db = self.db
        if not db.vec_available:
            return False
        current = self.fingerprint()
        if vq.vector_table_exists(db.conn) and vq.get_meta(db.conn, "fingerprint") == current:
            return True
        with write_transaction(db.conn):
            if not (vq.vector_table_exists(db.conn) and vq.get_meta(db.conn, "fingerprint") == current):
                embedder = self.embedder
                vq.reset_vector_table(db.conn, embedder.dims, current, embedder.name)
        return True

    def vectors_writable(self) -> bool:
        """Vector rows of changed chunks must be dropped too, which needs sqlite-vec loaded here."""
        return self.db.vec_available and vq.vector_table_exists(self.db.conn)

"""What a user said about a project's notes while it was read-only to them, carried back once it is not.

In a read-only project the index a user writes is a copy in their cache folder
(`pinky.base.locations.cache_index_path`); their feedback (`useful`, which keeps a note out of
`pinky-brain prune`, `wrong`, `outdated`) is kept there. When the same project opens writable again for
that user, the feedback the project's index lacks is copied into it and the cache copy, derived
otherwise, is removed, so it is carried once.

Finding the cache folder costs ~0.1 s (platformdirs) when PINKY_CACHE_DIR is unset, so an open of a
writable project looks first for the mark a read-only open left in the user's state folder
(`<PINKY_HOME>/state/read-only/<project>-<hash>`): one stat, and nothing more for most projects.
"""

from __future__ import annotations

import logging
import os
from pathlib import Path
from typing import Any

from pinky.base.locations import cache_dir, cache_index_path
from pinky.base.private import write_private
from pinky.config import Config
from pinky.store import hygiene_queries
from pinky.store.connect import write_transaction

log = logging.getLogger("pinky")
_COPY_FILES = ("", "-wal", "-shm", "-files")


def _mark(config: Config, index: Path) -> Path:
    """The mark that this user read the project while it was read-only (named like its cache folder)."""
    root = os.fspath(config.project_root or ".")
    name = os.path.basename(os.path.dirname(cache_index_path("", root, os.fspath(index))))
    return config.state_dir / "read-only" / name


def remember_read_only(config: Config) -> None:
    """Leave the mark `carry_back` looks for: this project's index is a copy in the user's cache now."""
    if config.db_moved_from is None or config.project_root is None:
        return
    mark = _mark(config, config.db_moved_from)
    if not mark.exists():
        try:
            write_private(mark, b"", config.state_dir)
        except OSError as exc:  # a home that cannot be written: the feedback stays in the copy
            log.info("cannot mark %s as read: %s", mark, exc)


def cached_copy(config: Config) -> Path | None:
    """The cache copy a read-only time left for this project's index, if there is one."""
    if config.db_moved_from is not None or config.project_root is None:
        return None
    if not _mark(config, config.db_path).exists():
        return None
    root = os.fspath(config.project_root)
    cached = Path(cache_index_path(cache_dir(os.environ, root), root, os.fspath(config.db_path)))
    return cached if cached.is_file() and cached != config.db_path else None


def carry_back(config: Config, conn: Any) -> int:
    """Copy the feedback of this project's cache copy into its own index (`conn`), then remove the copy;
    how many rows were carried. Never fails the open it runs in: a problem is logged and left."""
    try:
        cached = cached_copy(config)
        if cached is None:
            if config.project_root is not None:
                _mark(config, config.db_path).unlink(missing_ok=True)
            return 0
        rows = hygiene_queries.feedback_in(os.fspath(cached))
        with write_transaction(conn):
            added = hygiene_queries.add_feedback_missing(conn, rows)
        for suffix in _COPY_FILES:
            Path(f"{cached}{suffix}").unlink(missing_ok=True)
        _mark(config, config.db_path).unlink(missing_ok=True)
    except Exception as exc:  # the index opens all the same; the copy stays for the next open
        log.info("could not carry back the feedback kept while %s was read-only: %s", config.project_root, exc)
        return 0
    if added:
        log.warning("carried back %d feedback verdict(s) given while %s was read-only", added, config.project_root)
    return added

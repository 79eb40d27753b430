"""Find `Brain: <slug>` breadcrumbs in the project's code, so an entry knows which code depends on it.

Run by every reindex of a pinky project. Files are compared by size and modification time, so a
re-run reads only what changed. The walk skips hidden folders (.git, .venv), dependency and build
folders and the knowledge folders, reads at most 512 KB of a file, skips binary files, special
files (a FIFO would block the scan) and links that lead out of the project, and stops
after a file-count and time budget: a project root that turns out to be a home folder costs
little, and the next reindex carries on where the budget ran out.
"""

from __future__ import annotations

import os
import stat as st
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pinky.base import fileio
from pinky.base.global_signature import stamp_of
from pinky.indexing.linkresolve import resolve_links
from pinky.store import link_queries
from pinky.store.connect import write_transaction
from pinky.text.breadcrumbs import breadcrumbs_by_line

SKIP_DIRS = frozenset({"node_modules", "__pycache__", "venv", "env", "build", "dist", "target", "site-packages",
                       "vendor", "third_party"})
MAX_BYTES = 512 * 1024
MAX_FILES = 50_000
BUDGET_S = 3.0


@dataclass
class ScanReport:
    files: int = 0
    read: int = 0
    breadcrumbs: int = 0
    complete: bool = True


def _walk(root: Path, excluded: set[Path], deadline: float) -> tuple[list[tuple[str, Path, os.stat_result]], bool]:
    files: list[tuple[str, Path, os.stat_result]] = []
    for dirpath, dirnames, filenames in os.walk(root):
        here = Path(dirpath)
        dirnames[:] = sorted(d for d in dirnames
                             if not d.startswith(".") and d not in SKIP_DIRS and (here / d) not in excluded)
        for name in sorted(filenames):
            path = here / name
            try:
                stat = path.lstat()
                if st.S_ISLNK(stat.st_mode) and fileio.outside(path, root) is None:
                    stat = path.stat()  # a link inside the project: read what it names
            except OSError:
                continue
            if not st.S_ISREG(stat.st_mode) or stat.st_size == 0 or fileio.temp_writer(name) is not None:
                continue  # pinky's own temporary files (a killed `pinky mv` may leave one) are not code
            files.append((path.relative_to(root).as_posix(), path, stat))
            if len(files) >= MAX_FILES or time.monotonic() > deadline:
                return files, False
    return files, True


def scan_code(conn: Any, root: Path, excluded: list[Path], skip_prefix: str = "") -> ScanReport:
    """Bring the breadcrumb tables up to date with the code under `root`.

    Walks and reads first, then writes in one short transaction, so other writers are not held
    up by the walk. `skip_prefix`: file names to leave out (the index's own files).
    """
    report = ScanReport()
    deadline = time.monotonic() + BUDGET_S
    files, report.complete = _walk(root, {p.resolve() for p in excluded}, deadline)
    if skip_prefix:
        files = [f for f in files if not f[1].name.startswith(skip_prefix)]
    known = link_queries.scanned_code_files(conn)
    report.files = len(files)
    changed: list[tuple[str, os.stat_result, list[tuple[int, str]]]] = []
    for rel, path, stat in files:
        if known.get(rel) == stamp_of(stat):
            continue
        if time.monotonic() > deadline:
            report.complete = False
            break
        try:
            data = fileio.read_regular(path, limit=MAX_BYTES)
        except OSError:
            continue
        changed.append((rel, stat, [] if b"\0" in data[:1024] else breadcrumbs_by_line(data)))
    report.read = len(changed)
    gone = set(known) - {rel for rel, _, _ in files} if report.complete else set()  # only a full walk proves it
    if changed or gone:
        with write_transaction(conn):
            for rel, stat, crumbs in changed:
                link_queries.store_breadcrumbs(conn, rel, stamp_of(stat), crumbs)
            for rel in gone:
                link_queries.forget_code_file(conn, rel)
            resolve_links(conn, files=[rel for rel, _, _ in changed])
    report.breadcrumbs = link_queries.breadcrumb_count(conn)
    return report

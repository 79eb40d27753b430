"""Writing markdown notes safely: slugs, frontmatter rendering, atomic and collision-free files.

Markdown is the source of truth, so every write lands whole or not at all (temp file + rename),
and a new note never overwrites another one, even when two processes save the same title at once.
"""

from __future__ import annotations

import contextlib
import os
import re
import tempfile
import unicodedata
from collections.abc import Iterator
from pathlib import Path

from pinky.errors import InvalidInput

MAX_STEM = 60
_NON_SLUG = re.compile(r"[^a-z0-9]+")


def slugify(text: str) -> str:
    """ASCII file stem for a title: 'El pool de PG se cuelga' -> 'el-pool-de-pg-se-cuelga'."""
    ascii_text = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode()
    stem = _NON_SLUG.sub("-", ascii_text.lower()).strip("-")[:MAX_STEM].strip("-")
    return stem or "entry"


def inside(root: Path, path: Path) -> Path:
    """`path` resolved, refusing anything that escapes `root` (../, absolute paths, symlinks)."""
    resolved = path.resolve()
    if not resolved.is_relative_to(root.resolve()):
        raise InvalidInput(f"{path} is outside {root}")
    return resolved


def _temp_file(directory: Path, data: bytes) -> Path:
    fd, name = tempfile.mkstemp(dir=directory, prefix=".pinky-", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(name)
        raise
    return Path(name)


def write_new(directory: Path, stem: str, text: str) -> Path:
    """Create `<directory>/<stem>.md` (or -2, -3, … if taken) atomically; never overwrites."""
    directory.mkdir(parents=True, exist_ok=True)
    temp = _temp_file(directory, text.encode("utf-8"))
    try:
        for n in range(1, 10_000):
            target = directory / (f"{stem}.md" if n == 1 else f"{stem}-{n}.md")
            try:
                os.link(temp, target)  # atomic create-if-absent, unlike rename
                return target
            except FileExistsError:
                continue
        raise InvalidInput(f"too many notes named {stem!r} in {directory}")
    finally:
        with contextlib.suppress(OSError):
            os.unlink(temp)


def replace_file(path: Path, text: str) -> None:
    """Overwrite `path` atomically: readers see the old or the new file, never half of one."""
    path.parent.mkdir(parents=True, exist_ok=True)
    temp = _temp_file(path.parent, text.encode("utf-8"))
    try:
        os.replace(temp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temp)
        raise


@contextlib.contextmanager
def file_lock(lock_path: Path) -> Iterator[None]:
    """An exclusive advisory lock between processes (read-check-write of one note)."""
    lock_path.parent.mkdir(parents=True, exist_ok=True)
    with open(lock_path, "a+") as handle:
        try:
            import fcntl
        except ImportError:  # Windows: no advisory locks; the version check still catches most races
            yield
            return
        fcntl.flock(handle.fileno(), fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle.fileno(), fcntl.LOCK_UN)

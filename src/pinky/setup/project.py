"""`pinky init`: make a folder a pinky project. Idempotent: only adds what is missing.

What it writes, all meant to be committed except the index:
- `pinky.toml` at the project root: the marker every command finds by walking up (see
  `pinky.base.locations`), with the settings it may hold, commented out;
- the knowledge folder (`documentation/`), with note templates in `documentation/_templates/`
  (the `_` keeps them out of the index);
- `.gitignore` lines for the derived index (`brain.db`, its WAL files and locks, a moved-aside corrupt
  copy) and for the edit locks in the knowledge folder (`documentation/.pinky/`);
- `.gitattributes`: diaries merge as a line union, so two branches appending to the same day
  never conflict.

Each file inside the project is written through `pinky.base.repofiles`: a checkout's link that leads out of it, or
a FIFO, is refused in one line (`inside_repository`) instead of being written through.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path

from pinky.base import repofiles
from pinky.base.fileio import atomic_write, unwritable
from pinky.base.layout import DIARY_DIR, ENTRY_TYPES
from pinky.base.locations import DEFAULT_INDEX, DEFAULT_SAVE_DIR, MARKER, find_project_root
from pinky.errors import InvalidInput, ReadOnlyFolder

TEMPLATES_DIR = "_templates"
INDEX_COMMENT = "# pinky-brain index (derived from the markdown; rebuild: pinky-brain reindex) and edit locks"
LOCAL_DIR = ".pinky"  # inside the knowledge folder: per-machine files (edit locks), never committed
MARKER_TEXT = f"""# pinky-brain: this folder is a pinky project. Every pinky command run in it or in any
# subfolder finds it by walking up to this file, like git finds .git.
# Knowledge is markdown under {DEFAULT_SAVE_DIR}/ (commit it with the code); {DEFAULT_INDEX} is a derived,
# disposable index (git-ignored; `pinky-brain reindex` rebuilds it). Settings, relative to this folder:
# save_dir = "{DEFAULT_SAVE_DIR}"
# index = "{DEFAULT_INDEX}"
# project = "<this folder's name>"
"""


@dataclass
class InitReport:
    root: Path
    save_dir: Path
    created: list[str] = field(default_factory=list)  # paths relative to the root, or "path (+lines)"

    @property
    def changed(self) -> bool:
        return bool(self.created)


def default_root(start: Path) -> Path:
    """Where `pinky init` without a folder initialises: the project `start` is already in, else
    `start` itself, as `git init` does (a guess at a parent folder would surprise in a monorepo)."""
    found = find_project_root(str(start))
    return Path(found) if found else start.resolve()


def git_top(folder: Path) -> Path | None:
    """The top folder of the git repository `folder` is in, if any."""
    for candidate in (folder, *folder.parents):
        if (candidate / ".git").exists():
            return candidate
    return None


def _template(kind: str) -> str:
    return resources.files("pinky.templates").joinpath(f"{kind}.md").read_text(encoding="utf-8")


@contextmanager
def init_writes(root: Path) -> Iterator[None]:
    """`pinky init`'s writes: a folder it may not write is named in one line, never the temporary file or
    the subfolder whose creation failed."""
    try:
        yield
    except OSError as exc:
        if not unwritable(exc):
            raise
        folder = os.path.dirname(os.fspath(exc.filename)) if exc.filename else root
        reason = (exc.strerror or str(exc)).lower()
        raise ReadOnlyFolder(folder, f"{reason}; `pinky-brain init` writes pinky.toml, the knowledge folder and "
                             ".gitignore lines, so it needs a folder you can write") from None


@contextmanager
def inside_repository() -> Iterator[None]:
    """A file of the project that is a link out of it, or no regular file, is one line (InvalidInput)."""
    try:
        yield
    except repofiles.OutsideRepository as exc:
        raise InvalidInput(f"{exc}; pinky-brain writes only regular files inside the project and left it "
                           "alone") from None


def create_missing(root: Path, path: Path, text: str) -> bool:
    """Create `path` holding `text` unless it exists; True when this call created it. Inside `root` never through
    a link out of it (`repofiles`); elsewhere (a knowledge folder set outside the project) as any file."""
    if not path.is_relative_to(root):
        if path.exists():
            return False
        atomic_write(path, text)
        return True
    with inside_repository():
        return repofiles.rewrite(root, path.relative_to(root).as_posix(), lambda old: text if old is None else old)


def write_marker(root: Path) -> bool:
    """Create `<root>/pinky.toml` unless it exists; True when this call created it."""
    return create_missing(root, root / MARKER, MARKER_TEXT)


def init_project(root: Path, save_dir: Path, db_path: Path) -> InitReport:
    """Lay out `root` as a pinky project whose knowledge lives in `save_dir` (the marker first)."""
    report = InitReport(root, save_dir)
    if write_marker(root):
        report.created.append(MARKER)
    templates = save_dir / TEMPLATES_DIR
    for kind in ENTRY_TYPES:
        path = templates / f"{kind}.md"
        if create_missing(root, path, _template(kind)):
            report.created.append(_relative(path, root))
    report.created += _append_missing(root, ".gitignore", _ignore_lines(db_path, root, save_dir), INDEX_COMMENT)
    diary = _relative(save_dir / DIARY_DIR, root)
    report.created += _append_missing(root, ".gitattributes", [f"{diary}/** merge=union"],
                                      "# pinky-brain: diaries only ever get lines appended; keep both sides")
    return report


def _relative(path: Path, root: Path) -> str:
    try:
        return path.relative_to(root).as_posix()
    except ValueError:
        return str(path)


def _ignore_lines(db_path: Path, root: Path, save_dir: Path) -> list[str]:
    """An index inside the project is ignored by git; one outside it is nothing git would see. So is
    the knowledge folder's `.pinky/` (the edit locks)."""
    lines = []
    if db_path.is_relative_to(root):
        name = _relative(db_path, root)
        lines += [name, f"{name}-*", f"{name}.corrupt"]
    if save_dir.is_relative_to(root):
        lines.append(f"{_relative(save_dir, root)}/{LOCAL_DIR}/")
    return lines


def _append_missing(root: Path, name: str, wanted: list[str], comment: str) -> list[str]:
    """Add the lines `<root>/<name>` lacks, under a comment; returns what to report."""
    added: list[str] = []

    def change(old: str | None) -> str | None:
        text = old or ""
        present = {line.strip() for line in text.splitlines()}
        added[:] = [line for line in wanted if line not in present]
        if not added:
            return old
        lead = "" if not text else ("\n" if text.endswith("\n") else "\n\n")
        return text + lead + "\n".join([comment, *added]) + "\n"

    with inside_repository():
        repofiles.rewrite(root, name, change)
    return [f"{name} (+{', '.join(added)})"] if added else []

"""The journal of a rename in progress (`pinky mv`): what is left to do, kept on disk until it is done.

A rename moves one file, then rewrites every note and code file that named it by its old name:
thousands of files for a note many others link to. The journal is written, durably, before the file
moves and removed once the last link is rewritten, so a rename cut short (kill -9, a power cut,
Ctrl-C) is finished by the next `pinky mv`, `pinky reindex` or `pinky doctor --fix` instead of
leaving links on a name that no longer exists. Every step of a rename can run twice (a link already
rewritten no longer names the old name), so finishing a journal again is harmless.

Journals live in the moved note's root under `.pinky/moves/` (hidden, so never a note, and
git-ignored with the rest of `.pinky/`). Stdlib only.
"""

from __future__ import annotations

import json
import os
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from pinky.base.fileio import atomic_write
from pinky.errors import InvalidInput

JOURNAL_DIR = ".pinky/moves"
_FORMAT = 1


@dataclass
class Rename:
    """One rename: the note's root and its paths before and after, and the links to rewrite.

    `notes`: {"root", "path", "links": [{"kind", "target", "line"}]} for each note that named the old
    name; `code`: {"file", "crumbs": [{"line", "target"}]} for each code file with a breadcrumb to it
    (paths relative to `project_root`, the project the rename was made in)."""

    root: str
    old_rel: str
    new_rel: str
    old_slug: str
    project_root: str | None
    started: str
    notes: list[dict[str, Any]] = field(default_factory=list)
    code: list[dict[str, Any]] = field(default_factory=list)
    type_was: str | None = None  # the note's type before the move
    type: str | None = None  # and the one it has after: its new folder's when that is a type folder
    journal: Path | None = None  # where it is kept (not part of the file)

    def as_json(self) -> str:
        data = {key: value for key, value in asdict(self).items() if key != "journal"}
        return json.dumps({"format": _FORMAT, **data}, ensure_ascii=False)


def journal_dir(base: Path) -> Path:
    return base / JOURNAL_DIR


def write(base: Path, rename: Rename, name: str) -> Rename:
    """Keep `rename` in root `base` (durably: it must outlive a crash of the rename it describes)."""
    path = journal_dir(base) / f"{name}.json"
    atomic_write(path, rename.as_json())
    rename.journal = path
    return rename


def remove(rename: Rename) -> None:
    if rename.journal is not None:
        rename.journal.unlink(missing_ok=True)


def pending(roots: dict[str, Path]) -> tuple[list[Rename], list[str]]:
    """The renames not finished yet in these roots (oldest first), and the journals that cannot be
    read (each with why)."""
    found: list[Rename] = []
    problems: list[str] = []
    for base in roots.values():
        folder = journal_dir(base)
        for path in sorted(folder.glob("*.json")) if folder.is_dir() else []:
            try:
                found.append(_load(path))
            except (OSError, ValueError, InvalidInput) as exc:
                problems.append(f"{path}: {exc}")
    return sorted(found, key=lambda rename: rename.started), problems


def _load(path: Path) -> Rename:
    data = json.loads(path.read_bytes())
    if not isinstance(data, dict) or data.get("format") != _FORMAT:
        raise InvalidInput("not a rename journal this pinky writes")
    data.pop("format")
    try:
        rename = Rename(**data)
    except TypeError as exc:
        raise InvalidInput(f"not a rename journal this pinky writes ({exc})") from None
    for rel in (rename.old_rel, rename.new_rel):
        if not isinstance(rel, str) or rel.startswith("/") or ".." in rel.split("/"):
            raise InvalidInput(f"names a path outside its root: {rel!r}")
    rename.journal = path
    return rename


def belongs_here(rename: Rename, project_root: Path | None) -> bool:
    """Whether the rename can be finished from a process whose project is `project_root`: one that
    touches a project (its note, notes or code files) only from that project."""
    touches_project = (rename.root == "project" or bool(rename.code)
                       or any(note.get("root") == "project" for note in rename.notes))
    if not touches_project:
        return True
    return (project_root is not None and rename.project_root is not None
            and os.path.realpath(rename.project_root) == os.path.realpath(project_root))

"""The locks of a knowledge root, in `<root>/.pinky/locks/`: the one every edit of a note takes, and the
named ones a whole root takes (a rename's `moves`).

They live beside the notes, not in PINKY_HOME, so every process and every PINKY_HOME that edits the same
folder shares them; the folder is hidden (never a note) and ignores itself in git.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from pinky.base.fileio import FileLock, create_new, file_lock
from pinky.base.layout import entry_id

if TYPE_CHECKING:
    from pinky.indexing.index import Index

LOCK_DIR = ".pinky/locks"  # inside each knowledge root: hidden (never a note), git-ignored


def edit_lock(index: Index, root: str, rel: str) -> FileLock:
    """The lock every edit of the note `rel` takes, beside it, so every process and every PINKY_HOME
    editing this folder shares it. Sixteen per root, by entry id: unrelated edits rarely wait.
    The folder ignores itself in git, also in projects set up before `pinky init` said so. Reentrant in
    a thread: a compound edit (an undo in `pinky.hygiene.curation`) holds the locks of all its notes while
    it calls `update` and `restore`, which take them again."""
    return edit_lock_at(index.root_dir(root), root, rel)


def edit_lock_at(root_dir: Path, root: str, rel: str) -> FileLock:
    """`edit_lock` of the note `rel` in the folder `root_dir` of root `root`, without an index (what sync
    takes while it replaces a file of the global brain)."""
    return root_lock_at(root_dir, f"edit-{entry_id(root, rel)[0]}", reentrant=True)


def root_lock(index: Index, root: str, name: str, *, blocking: bool = True, reentrant: bool = False) -> FileLock:
    """The lock `name` of a knowledge root, in `<root>/.pinky/locks/` (created, git-ignored, if need be)."""
    return root_lock_at(index.root_dir(root), name, blocking=blocking, reentrant=reentrant)


def root_lock_at(root_dir: Path, name: str, *, blocking: bool = True, reentrant: bool = False) -> FileLock:
    """`root_lock` of the knowledge folder `root_dir`."""
    folder = root_dir / LOCK_DIR
    if not folder.is_dir():
        folder.mkdir(parents=True, exist_ok=True)
        create_new(folder.parent / ".gitignore", "# pinky's local files (locks, journals): never committed\n*\n")
    return file_lock(folder / f"{name}.lock", blocking=blocking, reentrant=reentrant)

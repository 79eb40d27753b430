"""Has the global brain changed since an index last took it in? A stat walk, or a few folder stats.

Every project's index holds its own copy of the global brain's rows, and the global brain is written by
other processes: a save in another project or outside any, `pinky-brain sync`, a hand edit. So each index
records, in its `meta` table, what the global brain looked like when it last brought those rows up to
date: `global_signature` (how many notes, and the sum of a checksum of each note's relative path, size, mtime,
change time and inode)
and `global_folders` (each folder's mtime and inode). Anyone reading the index compares:

- `walk` (a stat per note, ~3 ms per 1,000 notes) catches everything, an edit made in place included, and
  one that puts the size and mtime back (`cp -p`, `rsync -t`, `tar`, `touch -r`, two same-size notes swapped):
  no tool can set the change time (the kernel does, on every write) and a rename brings another inode;
- `folders_moved` (a stat per folder, microseconds) catches notes created, deleted or renamed, and every
  write made by replacing the file (pinky's own, `pinky-brain sync`'s, most editors'), but not an edit
  written into the same file.

A long-running `pinky-mcp` does neither while its change feed runs (`pinky.indexing.change_feed`: the OS
reports every change). Everyone else walks while the global brain has at most a limit of notes
(HOOK_WALK_LIMIT for the per-prompt hook, ONE_SHOT_WALK_LIMIT for the rest) and looks at the folders beyond.

Builtins only (not even `zlib`, a shared library to load: ~0.2 ms of the hook's budget): the per-prompt hook
calls this.
"""

from __future__ import annotations

import os

SIGNATURE_KEY = "global_signature"
FOLDERS_KEY = "global_folders"
HOOK_WALK_LIMIT = 2000  # notes up to which the per-prompt hook walks them all (~6 ms); beyond, folders only
ONE_SHOT_WALK_LIMIT = 20_000  # the same for the CLI, the session-start hook and a server without a change feed
_PRIME = (1 << 61) - 1  # a note's line read as one number modulo this prime is its checksum


def stamp_of(info: os.stat_result) -> tuple[int, int, int, int]:
    """What says a file changed: (mtime_ns, size, ctime_ns, inode). Size and mtime alone miss an edit whose
    tool restores them (`cp -p`, `rsync -t`, `tar`, `touch -r`, a swap of two same-size notes): the change
    time is the kernel's to set and a swap by rename brings another inode."""
    return info.st_mtime_ns, info.st_size, info.st_ctime_ns, info.st_ino


def walk(root: str) -> tuple[str, str]:
    """(signature, folders) of the notes under `root` now, as `meta` keeps them (see the module). The
    signature sums each note's checksum (its line's bytes as a number, modulo a prime: a hash in base 256),
    so it does not depend on the order the folders list their files in."""
    number = int.from_bytes
    total = count = 0
    folders: list[str] = []
    stack = [("", root)]
    while stack:
        prefix, folder = stack.pop()
        try:
            info = os.stat(folder)
            listing = os.scandir(folder)
        except OSError:
            folders.append(f"0 0 {prefix}")  # missing (no global brain yet) or unreadable: its creation shows
            continue
        folders.append(f"{info.st_mtime_ns} {info.st_ino} {prefix}")
        with listing:
            for item in listing:
                name = item.name
                if not name or name[0] in "._":  # = layout.is_skipped: .git, .archive, .pinky, _templates
                    continue
                if item.is_dir(follow_symlinks=False):
                    stack.append((prefix + name + "/", item.path))
                elif name.lower().endswith(".md"):
                    try:
                        stat = item.stat(follow_symlinks=False)
                    except OSError:
                        continue
                    line = f"{prefix}{name}\0{stat.st_size}\0{stat.st_mtime_ns}\0{stat.st_ctime_ns}\0{stat.st_ino}"
                    total += number(line.encode("utf-8", "surrogateescape"), "little") % _PRIME
                    count += 1
    folders.sort()
    return f"{count}:{total & 0xFFFFFFFFFFFF:x}", "\n".join(folders)


class Tally:
    """`walk(root)`'s answer, taken by a scan that lists the same folders and stats the same files (the indexer's
    full reindex: `pinky.indexing.sources.scan`), so a reindex of 100,000 notes stats each once, not twice (~0.5 s).
    The scan tells it each folder as walk sees it (`folder`: its stat, or None when it cannot be listed) and each
    name walk counts (`note`: a `.md` that is not a folder, links included, with its own lstat)."""

    def __init__(self, root: str) -> None:
        self.root, self.total, self.count = root, 0, 0
        self.folders: list[str] = []

    def folder(self, prefix: str, info: os.stat_result | None) -> None:
        self.folders.append(f"{info.st_mtime_ns} {info.st_ino} {prefix}" if info is not None else f"0 0 {prefix}")

    def note(self, rel: str, info: os.stat_result) -> None:  # walk's line, walk's checksum
        line = f"{rel}\0{info.st_size}\0{info.st_mtime_ns}\0{info.st_ctime_ns}\0{info.st_ino}"
        self.total += int.from_bytes(line.encode("utf-8", "surrogateescape"), "little") % _PRIME
        self.count += 1

    def state(self) -> tuple[str, str]:
        """(signature, folders) as `walk` gives them; a root the scan never listed (none there) is walked."""
        if not self.folders:
            return walk(self.root)
        return f"{self.count}:{self.total & 0xFFFFFFFFFFFF:x}", "\n".join(sorted(self.folders))


def folders_moved(folders: str, root: str) -> bool:
    """Whether any folder recorded in `folders` changed (a note in it came, went or was replaced)."""
    return bool(moved_folders(folders, root))


def moved_folders(folders: str, root: str) -> dict[str, bool]:
    """The folders recorded in `folders` that changed, by relative path ('' for the root, else ending in '/'):
    True when it was replaced or is gone (another inode, or none: everything below it is in question), False when
    only its entries changed (a note in it came, went or was replaced). Each folder is looked up from the root's
    open descriptor where the OS can: its path is not walked again from `/` for each (600 folders of a 100,000-note
    brain: 2.3 -> 1.4 ms of the per-prompt hook)."""
    moved: dict[str, bool] = {}
    base = _open_folder(root)
    try:
        for line in folders.split("\n"):
            mtime, inode, rel = (line.split(" ", 2) + ["", ""])[:3]
            try:
                info = os.stat(rel or ".", dir_fd=base) if base is not None else os.stat(
                    os.path.join(root, rel) if rel else root)
            except OSError:
                if mtime != "0":
                    moved[rel] = True
                continue
            if str(info.st_ino) != inode:
                moved[rel] = True
            elif str(info.st_mtime_ns) != mtime:
                moved[rel] = False
    finally:
        if base is not None:
            os.close(base)
    return moved


def _open_folder(root: str) -> int | None:
    """A descriptor of the folder `root` to look paths up from; None where the OS cannot (or `root` is gone)."""
    if os.stat not in os.supports_dir_fd or not hasattr(os, "O_DIRECTORY"):
        return None
    try:
        return os.open(root, os.O_RDONLY | os.O_DIRECTORY)
    except OSError:
        return None


def changed(signature: str | None, folders: str | None, root: str, *, walk_limit: int | None = None) -> bool:
    """Whether the global brain under `root` may differ from what an index recorded (`signature`, `folders`
    from its meta; None when it never recorded them). The notes are walked when there are at most
    `walk_limit` of them (None: always), else only the folders are looked at."""
    if signature is None or folders is None:
        return os.path.isdir(root)
    count = signature.split(":", 1)[0]
    if walk_limit is None or not count.isdigit() or int(count) <= walk_limit:
        return walk(root)[0] != signature
    return folders_moved(folders, root)

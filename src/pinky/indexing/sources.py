"""The markdown files of the roots: which ones are notes, and reading them without being hurt.

Only regular files inside a root are read. The scan does not follow links to folders (as before),
and reports, without opening anything, a `.md` that is a FIFO, a device or a socket (a FIFO would
block the read for ever, `/dev/zero` would fill the memory) and a link whose target lies outside
its root (its text would leak into search). A note larger than `PINKY_MAX_NOTE_BYTES` is indexed
by its title and its first bytes, with a warning, so one huge file cannot stall a reindex.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import stat
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from pathlib import Path

from pinky.base import fileio
from pinky.base.global_signature import Tally
from pinky.base.layout import is_skipped
from pinky.base.locations import ENV_MAX_NOTE_BYTES
from pinky.base.shown import is_plain
from pinky.text.markdown import Document, content_hash, parse_text, unreadable

READ_BLOCK = 1 << 20
TOO_LARGE = "too large: "  # how the parse error of a cut note starts (doctor lists those apart)
ALSO = "; and: "  # before the note's other problem, if it has one
NEAR_LINE_END = 64 * 1024  # a cut note ends at a line break when one is this close to the limit


@dataclass(frozen=True)
class SourceFile:
    root: str
    rel: str
    location: str  # the file's path; a Path is made only when asked (100,000 of them cost ~0.5 s a scan)
    mtime_ns: int
    size: int
    problem: str | None = None  # why it is not read at all: a special file, a link out of its root
    ctime_ns: int = 0  # the change time and inode: what `cp -p`, `touch -r` or a swap by rename cannot restore
    inode: int = 0

    @property
    def path(self) -> Path:
        return Path(self.location)

    @property
    def stamp(self) -> tuple[int, int, int, int]:
        """(mtime_ns, size, ctime_ns, inode): equal to the one recorded, the file is taken as unchanged."""
        return self.mtime_ns, self.size, self.ctime_ns, self.inode


def _source(root_name: str, rel: str, path: str, info: os.stat_result, problem: str | None) -> SourceFile:
    return SourceFile(root_name, rel, path, info.st_mtime_ns, info.st_size, problem, info.st_ctime_ns, info.st_ino)


class Skipped(Exception):
    """A file named .md that is not a note (binary, not UTF-8, a FIFO, a link out of its root):
    reported with its reason, never indexed."""


# --- finding the notes -----------------------------------------------------------------------------


def scan(roots: dict[str, Path], tallies: dict[str, Tally] | None = None) -> Iterator[SourceFile]:
    """Every .md file under each root, with its stat: the notes, and the files that look like notes
    but must not be read (with `problem` set). Depth first, names sorted, like `os.walk`. `tallies`: a root's
    Tally, told every folder and file of it as `global_signature.walk` would see them."""
    for root_name, root in roots.items():
        if root.is_dir():
            yield from _scan_from(root_name, os.fspath(root), [("", os.fspath(root))],
                                  tally=(tallies or {}).get(root_name))


def scan_folders(root_name: str, root: Path, moved: dict[str, bool], known: set[str]) -> tuple[list[SourceFile],
                                                                                                list[str]]:
    """The notes directly in each folder of `moved` (pinky.base.global_signature.moved_folders: relative path ->
    replaced or gone), and in every folder below one that `known` (the folders recorded) does not hold or that lies
    in a replaced one; with the line (`mtime inode rel`) of each folder listed, stated before its listing."""
    replaced = [rel for rel, whole in moved.items() if whole]
    starts = [(rel, os.path.join(root, rel) if rel else os.fspath(root)) for rel in sorted(moved, reverse=True)
              if not any(rel != above and rel.startswith(above) for above in replaced)]  # else listed from above
    listed: list[str] = []
    sources = list(_scan_from(root_name, os.fspath(root), [(rel, path) for rel, path in starts if os.path.isdir(path)],
                              lambda rel: rel not in known or any(rel.startswith(above) for above in replaced),
                              listed))
    return sources, listed


def _scan_from(root_name: str, root: str, stack: list[tuple[str, str]], descend: Callable[[str], bool] | None = None,
               listed: list[str] | None = None, tally: Tally | None = None) -> Iterator[SourceFile]:
    """The notes of the folders on `stack` ((relative prefix, path)) and of those below them that `descend(rel)`
    allows (None: all); `listed` gets each listed folder's line (pinky.base.global_signature's `folders`), `tally`
    each folder and file as that module's `walk` sees them (a scan of a whole root)."""
    while stack:
        prefix, folder = stack.pop()
        if listed is not None or tally is not None:
            try:
                info: os.stat_result | None = os.stat(folder)
            except OSError:
                info = None
            if listed is not None:
                if info is None:
                    continue
                listed.append(f"{info.st_mtime_ns} {info.st_ino} {prefix}")
        try:
            with os.scandir(folder) as listing:
                items = sorted(listing, key=lambda item: item.name)
        except OSError as exc:  # said, not swallowed: the notes in it are neither read nor dropped
            if tally is not None:
                tally.folder(prefix, None)
            yield _unreadable_folder(root_name, prefix or "./", folder, exc)
            continue
        if tally is not None:
            tally.folder(prefix, info)
        folders = []
        for item in items:
            if is_skipped(item.name):
                continue
            rel = prefix + item.name
            if item.is_symlink():
                if tally is not None and item.name.lower().endswith(".md"):  # walk counts a link by its own stat
                    with contextlib.suppress(OSError):
                        tally.note(rel, item.stat(follow_symlinks=False))
                linked = _linked(root_name, root, rel, item.path)
                if linked is not None:
                    yield linked
            elif item.is_dir(follow_symlinks=False):
                if descend is None or descend(rel + "/"):
                    folders.append((rel + "/", item.path))
            elif item.name.lower().endswith(".md"):  # = layout.is_note, the folders checked above
                try:
                    info = item.stat(follow_symlinks=False)
                except OSError:
                    continue
                if tally is not None:
                    tally.note(rel, info)
                yield _source(root_name, rel, item.path, info, _name_problem(rel) or _special(info.st_mode))
        stack.extend(reversed(folders))


def _unreadable_folder(root_name: str, rel: str, folder: str, exc: OSError) -> SourceFile:
    """A folder the scan cannot list, as a SourceFile whose `rel` ends in '/': reported with the reason
    on every reindex, and the entries already indexed under it are kept (see `unreadable_prefix`)."""
    try:
        info = os.lstat(folder)
        mtime, size = info.st_mtime_ns, 0
    except OSError:
        mtime, size = 0, 0
    reason = f"folder not readable ({exc.strerror or exc}): the notes in it are not indexed or updated"
    return SourceFile(root_name, rel, folder, mtime, size, reason)


def unreadable_prefix(source: SourceFile) -> str | None:
    """The folder prefix of a SourceFile that stands for an unreadable folder, else None."""
    if not source.rel.endswith("/"):
        return None
    return "" if source.rel == "./" else source.rel


NAME_PROBLEM = ("its path holds a line break or another control character, which would become a line of "
                "its own in what the agent reads: not indexed (its text is kept as it is); rename it")


def _name_problem(rel: str) -> str | None:
    """Why a note's path cannot be indexed as it is named, or None: a name pinky would show the agent
    must be one line (`pinky.base.shown.plain`), so a file named `yak\\nIMPORTANT: ….md` is refused
    here, before its slug or path can reach any output, and reported (reindex, doctor) until renamed."""
    return None if is_plain(rel) else NAME_PROBLEM


def _special(mode: int) -> str | None:
    kind = fileio.file_kind(mode)
    return f"{kind}, not a regular file: never opened" if kind else None


def _linked(root_name: str, root: str, rel: str, path: str) -> SourceFile | None:
    """A symbolic link met by the scan: a note when it leads to a regular .md file inside the root;
    reported, unread, when it leads out of the root; else left alone (a link to a folder inside is
    not followed, a dangling link has nothing to read)."""
    why = fileio.outside(path, root)
    try:
        info = os.lstat(path) if why else os.stat(path)
    except OSError:
        return None
    if why:
        what = "folder" if os.path.isdir(path) else "file"
        if what == "file" and not rel.lower().endswith(".md"):
            return None
        problem: str | None = f"a symbolic link to a {what} outside the knowledge folder ({why}): not followed"
    elif stat.S_ISDIR(info.st_mode) or not rel.lower().endswith(".md"):
        return None
    else:
        problem = _special(info.st_mode)
    return _source(root_name, rel, os.fspath(path), info, _name_problem(rel) or problem)


def source_at(root_name: str, root: Path, rel: str, path: Path) -> SourceFile | None:
    """The SourceFile of one note path (for indexing it alone); None when there is no file there."""
    if path.is_symlink():
        return _linked(root_name, os.fspath(root), rel, os.fspath(path))
    try:
        info = path.stat()
    except FileNotFoundError:
        return None
    return _source(root_name, rel, os.fspath(path), info, _name_problem(rel) or _special(info.st_mode))


# --- reading one note ------------------------------------------------------------------------------


def read_note(source: SourceFile, max_bytes: int) -> tuple[bytes, str, int]:
    """(the bytes to parse, the content hash of the whole file, its size in bytes).

    Reads at most `max_bytes` (+1) into memory; the rest of a larger file is only hashed."""
    if source.problem:
        raise Skipped(source.problem)
    try:
        handle = fileio.open_regular(source.path)
    except fileio.UnsafeFile as exc:  # swapped for a special file since the scan
        raise Skipped(str(exc).rsplit(": ", 1)[-1]) from None
    with handle:
        raw = handle.read(max_bytes + 1)
        if len(raw) <= max_bytes:
            return raw, content_hash(raw), len(raw)
        hasher, size = hashlib.sha256(raw), len(raw)
        while block := handle.read(READ_BLOCK):
            hasher.update(block)
            size += len(block)
    return _cut(raw, max_bytes), hasher.hexdigest()[:16], size


def file_hash(source: SourceFile) -> str:
    """The content hash of a note file (the version `parse_file` gives), reading it in blocks."""
    return read_note(source, READ_BLOCK)[1]


def _cut(raw: bytes, max_bytes: int) -> bytes:
    """The first `max_bytes`, ending at a line break when one is near, never inside a UTF-8 character."""
    head = raw[:max_bytes]
    newline = head.rfind(b"\n", max(0, max_bytes - NEAR_LINE_END))
    if newline >= 0:
        return head[: newline + 1]
    for back in range(1, min(4, len(head)) + 1):
        byte = head[-back]
        if byte < 0x80:
            break  # ASCII: the last character is whole
        if byte >= 0xC0:  # the lead byte of the last character: is it complete?
            need = 2 if byte < 0xE0 else 3 if byte < 0xF0 else 4
            return head[:-back] if need > back else head
    return head


def parse_file(source: SourceFile, max_bytes: int) -> Document:
    """The note in a file; raises Skipped when the file is not a note, OSError when it cannot be read."""
    raw, digest, size = read_note(source, max_bytes)
    reason = unreadable(raw)
    if reason:
        raise Skipped(reason)
    text = raw.decode("utf-8-sig")
    if size <= max_bytes:
        return parse_text(text, source.rel, raw)
    doc = parse_text(text, source.rel, b"")
    cut = (f"{TOO_LARGE}{size:,} bytes, over the {max_bytes:,}-byte limit ({ENV_MAX_NOTE_BYTES}): indexed by "
           f"its title and its first {len(raw):,} bytes only")
    return replace(doc, content_hash=digest, parse_error=ALSO.join(filter(None, (cut, doc.parse_error))))


def read_in_root(roots: dict[str, Path], root: str, rel: str, limit: int) -> bytes:
    """The bytes of a regular file inside a root (an image a note shows), at most `limit` of them.

    Refused, with NotFound and nothing read, for an unknown root, an absolute path or one with `..`,
    a hidden or `_` part (`.git`, `.archive`, `.pinky/locks`, `_templates`), a link that leads out of
    the root, a special file and a folder; a file larger than `limit` is refused too (InvalidInput)."""
    from pinky.errors import InvalidInput, NotFound

    base = roots.get(root)
    parts = rel.replace("\\", "/").split("/")
    if base is None or not rel or rel.startswith("/") or any(not p or p == ".." or is_skipped(p) for p in parts):
        raise NotFound(f"no file {rel!r} in the {root!r} knowledge folder")
    try:
        data = fileio.read_regular(base.joinpath(*parts), base, limit + 1)
    except (OSError, ValueError):  # missing, a folder, a special file, a link out (UnsafeFile)
        raise NotFound(f"no file {rel!r} in the {root!r} knowledge folder") from None
    if len(data) > limit:
        raise InvalidInput(f"{rel} is larger than {limit:,} bytes")
    return data

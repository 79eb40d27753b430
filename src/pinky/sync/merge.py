"""How sync merges the brain, file by file: pure rules over path -> (mode, blob) snapshots.

No dulwich here (only its `ObjectID` type, for the checker): blob contents come and go through
the small `Blobs` interface the repository side provides, so the rules read on their own.
Conflict markers are never written: a file edited on both sides is either unioned (diaries and
`append_only: true` notes), kept as ours (rollups, which are regenerated), or kept as ours with
theirs saved beside it as a conflict copy.
"""

from __future__ import annotations

import re
from datetime import time as Time
from pathlib import Path
from typing import TYPE_CHECKING, Protocol, TypeAlias

from pinky.diary import bullet_time, is_bullet
from pinky.layout import DIARY_DIR
from pinky.markdown import split_frontmatter
from pinky.rollup import FOLDERS

if TYPE_CHECKING:
    from dulwich.objects import ObjectID

Entry: TypeAlias = tuple[int, "ObjectID"]  # (mode, blob sha) of one file in a tree
Snapshot: TypeAlias = dict[str, Entry]  # relative posix path -> entry

ROLLUP_DIRS = tuple(f"{DIARY_DIR}/{folder}/" for folder in FOLDERS.values())
_CONFLICT_RE = re.compile(r"\.conflict-[0-9a-f]{7,40}(\.[^./]+)?$")


class Blobs(Protocol):
    """Blob access for the merge rules, which otherwise only see path -> (mode, sha) maps."""

    def read(self, sha: ObjectID) -> bytes: ...

    def write(self, data: bytes) -> ObjectID: ...


def merge_snapshots(
    base: Snapshot, ours: Snapshot, theirs: Snapshot, blobs: Blobs, short_sha: str
) -> tuple[Snapshot, list[str]]:
    """Per-file 3-way merge; returns the merged snapshot and the conflict copies it added.

    One side changed: take it. Deleted vs modified: keep the modified one. Append-only files:
    line union. Other files changed on both sides: keep ours, add theirs as a conflict copy.
    """
    merged: Snapshot = {}
    conflicts: list[str] = []
    for path in sorted(set(base) | set(ours) | set(theirs)):
        b, o, t = base.get(path), ours.get(path), theirs.get(path)
        if o == t or t == b:
            chosen = o
        elif o == b or o is None:
            chosen = t
        elif t is None:
            chosen = o
        else:
            chosen = _both_changed(path, o, t, blobs, short_sha, merged, conflicts)
        if chosen is not None:
            merged[path] = chosen
    return merged, conflicts


def _both_changed(
    path: str, o: Entry, t: Entry, blobs: Blobs, short: str, merged: Snapshot, conflicts: list[str]
) -> Entry:
    """Resolve a file edited differently on both sides without conflict markers."""
    if path.startswith(ROLLUP_DIRS):
        return o  # rollups are regenerated from the (unioned) diaries: ours is as good
    ours_data, theirs_data = blobs.read(o[1]), blobs.read(t[1])
    if is_append_only(path, ours_data, theirs_data):
        text = union_merge(ours_data.decode("utf-8"), theirs_data.decode("utf-8"))
        return (o[0], blobs.write(text.encode("utf-8")))
    copy = conflict_copy_name(path, short)
    merged[copy] = t
    conflicts.append(copy)
    return o


def is_append_only(path: str, ours: bytes, theirs: bytes) -> bool:
    """Diary files, or any text whose frontmatter declares ``append_only: true``."""
    try:
        texts = [ours.decode("utf-8"), theirs.decode("utf-8")]
    except UnicodeDecodeError:
        return False
    if path.startswith(f"{DIARY_DIR}/"):
        return True
    return any(split_frontmatter(text)[0].get("append_only") == "true" for text in texts)


# --- conflict copies ---------------------------------------------------------------------------


def conflict_copy_name(path: str, short_sha: str) -> str:
    """``notes/a.md`` -> ``notes/a.conflict-1a2b3c4d.md``: obvious, and still markdown."""
    head, _, name = path.rpartition("/")
    stem, dot, suffix = name.rpartition(".")
    if not dot or not stem:
        stem, suffix = name, ""
    new = f"{stem}.conflict-{short_sha}" + (f".{suffix}" if suffix else "")
    return f"{head}/{new}" if head else new


def list_conflicts(brain_dir: Path) -> list[Path]:
    """Conflict copies (``<stem>.conflict-<sha>.md``) left by sync, for ``pinky doctor``."""
    root = Path(brain_dir)
    if not root.is_dir():
        return []
    found = [
        p
        for p in root.rglob("*.conflict-*")
        if p.is_file() and ".git" not in p.relative_to(root).parts and _CONFLICT_RE.search(p.name)
    ]
    return sorted(found)


# --- union merge ---------------------------------------------------------------------------------


def union_merge(ours: str, theirs: str) -> str:
    """Merge two versions of an append-only file: ours' header, every bullet once, by HH:MM.

    Why: diary lines are self-contained and only ever appended, so the union of both sides
    is the right result; ordering by time is stable (ours first on ties).
    """
    header, ours_blocks = _split_blocks(ours)
    _, theirs_blocks = _split_blocks(theirs)
    seen = {text for _, text in ours_blocks}
    merged = list(ours_blocks)
    for key, text in theirs_blocks:
        if text not in seen:
            seen.add(text)
            merged.append((key, text))
    merged.sort(key=lambda block: (block[0] is not None, block[0] or Time.min))  # untimed first
    body = "\n".join(text for _, text in merged)
    if not body:
        return header
    if header and not header.endswith("\n"):
        header += "\n"
    return header + body + "\n"


def _split_blocks(text: str) -> tuple[str, list[tuple[Time | None, str]]]:
    """Split into (header, [(time, bullet block)]); untimed bullets inherit the last time.

    The header is the frontmatter and whatever precedes the first bullet after it (a YAML list
    in the frontmatter is not a diary line). A block is a bullet and its continuation lines."""
    body = split_frontmatter(text)[1]
    lines = body.splitlines()
    start = next((i for i, line in enumerate(lines) if is_bullet(line)), len(lines))
    header = text[: len(text) - len(body)] + "".join(line + "\n" for line in lines[:start])
    blocks: list[list[str]] = []
    for line in lines[start:]:
        if is_bullet(line) or not blocks:
            blocks.append([line])
        else:
            blocks[-1].append(line)
    keyed: list[tuple[Time | None, str]] = []
    last: Time | None = None
    for block in blocks:
        joined = "\n".join(block).rstrip()
        if joined:
            last = bullet_time(block[0]) or last
            keyed.append((last, joined))
    return header, keyed

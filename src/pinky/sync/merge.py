"""How sync merges the brain, file by file: pure rules over path -> (mode, blob) snapshots.

No dulwich here (only its `ObjectID` type, for the checker): blob contents come and go through
the small `Blobs` interface the repository side provides, so the rules read on their own.
Conflict markers are never written: a file edited on both sides is either unioned (diaries and
`append_only: true` notes), kept as ours (rollups, which are regenerated), or kept as ours with
theirs saved beside it as a conflict copy.
"""

from __future__ import annotations

import re
from collections import Counter
from datetime import time as Time
from pathlib import Path
from typing import TYPE_CHECKING, Protocol, TypeAlias

from pinky.base.layout import DIARY_DIR
from pinky.capture.diary import bullet_time, is_bullet
from pinky.capture.rollup import FOLDERS
from pinky.config import DEFAULT_MAX_NOTE_BYTES
from pinky.text.markdown import render, split_frontmatter

if TYPE_CHECKING:
    from dulwich.objects import ObjectID

Entry: TypeAlias = tuple[int, "ObjectID"]  # (mode, blob sha) of one file in a tree
Snapshot: TypeAlias = dict[str, Entry]  # relative posix path -> entry

UNION_LIMIT_BYTES = DEFAULT_MAX_NOTE_BYTES  # larger append-only files are not unioned (PINKY_MAX_NOTE_BYTES)
ROLLUP_DIRS = tuple(f"{DIARY_DIR}/{folder}/" for folder in FOLDERS.values())
_CONFLICT_RE = re.compile(r"\.conflict-[0-9a-f]{7,40}(\.[^./]+)?$")


class Blobs(Protocol):
    """Blob access for the merge rules, which otherwise only see path -> (mode, sha) maps."""

    def read(self, sha: ObjectID) -> bytes: ...

    def write(self, data: bytes) -> ObjectID: ...


def merge_snapshots(
    base: Snapshot, ours: Snapshot, theirs: Snapshot, blobs: Blobs, short_sha: str, *, related: bool = True,
    union_limit: int = UNION_LIMIT_BYTES,
) -> tuple[Snapshot, list[str]]:
    """Per-file 3-way merge; returns the merged snapshot and the conflict copies it added.

    One side changed: take it. Deleted vs modified: keep the modified one. Append-only files:
    line union. Other files changed on both sides: keep ours, add theirs as a conflict copy.
    ``related``: the two histories share a merge base (``base``); False for a first merge of
    histories started apart (a brain folder copied to a second machine before its first sync).
    ``union_limit``: an append-only file larger than this on either side is not unioned line by
    line (a 50 MB diary took 1.5 GB and 20 s): it is treated like any other file changed on both.
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
            base_data = blobs.read(b[1]) if b is not None else (b"" if related else None)
            chosen = _both_changed(path, o, t, base_data, blobs, merged, conflicts, short=short_sha, limit=union_limit)
        if chosen is not None:
            merged[path] = chosen
    return merged, conflicts


def _both_changed(
    path: str, o: Entry, t: Entry, base: bytes | None, blobs: Blobs, merged: Snapshot, conflicts: list[str],
    *, short: str, limit: int,
) -> Entry:
    """Resolve a file edited differently on both sides without conflict markers.

    ``base``: the file at the merge base; b"" when it did not exist there; None when the
    histories share no base at all. An append-only file over ``limit`` bytes gets a conflict copy."""
    if path.startswith(ROLLUP_DIRS):
        return o  # rollups are regenerated from the (unioned) diaries: ours is as good
    ours_data, theirs_data = blobs.read(o[1]), blobs.read(t[1])
    small = max(len(ours_data), len(theirs_data), len(base or b"")) <= limit
    if small and is_append_only(path, ours_data, theirs_data):
        base_text = base.decode("utf-8", "replace") if base is not None else None
        text = union_merge(ours_data.decode("utf-8"), theirs_data.decode("utf-8"), base_text)
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


def union_merge(ours: str, theirs: str, base: str | None = None) -> str:
    """Merge two versions of an append-only file: both sides' additions, ordered by HH:MM.

    Why: diary lines are self-contained and only ever appended. A line in the merge base is one
    event both sides share: it is kept once (or dropped, if a side deleted it). A line added after
    the base is an event of the side that added it, so the same text added on both machines is
    kept twice: two machines cannot write the same diary line (the Stop hook's lines carry the
    session tag and the minute), so identical additions are two hand-written events. With no
    base at all (``base`` None: histories started apart, e.g. a copied brain folder) identical
    lines are the same event, seen twice, and kept once. Ties in time keep ours first.
    The header (frontmatter and text before the first bullet) is merged from the base too, so
    text added on either side survives (see ``merge_header``).
    """
    header, ours_blocks = _split_blocks(ours)
    theirs_header, theirs_blocks = _split_blocks(theirs)
    base_header, base_blocks = _split_blocks(base) if base is not None else (None, None)
    merged = _merge_blocks(ours_blocks, theirs_blocks, base_blocks)
    merged.sort(key=lambda block: (block[0] is not None, block[0] or Time.min))  # untimed first
    header = merge_header(header, theirs_header, base_header)
    body = "\n".join(text for _, text in merged)
    if not body:
        return header
    if header and not header.endswith("\n"):
        header += "\n"
    return header + body + "\n"


Block: TypeAlias = tuple["Time | None", str]


def appended_form(path: str, ours: bytes, merged: bytes) -> bytes | None:
    """``ours`` followed by the blocks of ``merged`` it lacks: the union merge's result, as an append to the
    file on disk (for a file another process holds open and keeps appending to, which must not be replaced).
    None when ``path`` is not append-only or the merge changed the header."""
    if not is_append_only(path, ours, merged):
        return None
    header, own = _split_blocks(ours.decode("utf-8"))
    merged_header, blocks = _split_blocks(merged.decode("utf-8"))
    if header != merged_header:
        return None
    missing = Counter(text for _, text in blocks) - Counter(text for _, text in own)
    added = []
    for _, text in blocks:
        if missing[text] > 0:
            missing[text] -= 1
            added.append(text)
    if not added:
        return ours
    joint = b"" if not ours or ours.endswith(b"\n") else b"\n"
    return ours + joint + "\n".join(added).encode("utf-8") + b"\n"


def _merge_blocks(ours: list[Block], theirs: list[Block], base: list[Block] | None) -> list[Block]:
    """Each block as many times as the base had it plus what each side added (never below 0)."""
    o, t = Counter(text for _, text in ours), Counter(text for _, text in theirs)
    if base is None:
        wanted = o | t  # no common history: a block on both sides is one event
    else:
        b = Counter(text for _, text in base)
        wanted = Counter({text: o[text] + t[text] - b[text] for text in o | t})
    out = []
    for block in (*ours, *theirs):
        if wanted[block[1]] > 0:
            wanted[block[1]] -= 1
            out.append(block)
    return out


def merge_header(ours: str, theirs: str, base: str | None) -> str:
    """A 3-way merge of the header: a side that did not change it yields to the other; when both
    did, frontmatter keys are merged one by one (lists unioned, ours on a clash) and theirs' new
    lines before the first bullet are added. Without a base, ours is kept."""
    if ours == theirs or theirs == base or base is None:
        return ours
    if ours == base:
        return theirs
    (o_front, o_rest), (t_front, t_rest), (b_front, b_rest) = map(_split_header, (ours, theirs, base))
    return _merge_front(o_front, t_front, b_front) + _merge_lines(o_rest, t_rest, b_rest)


def _split_header(header: str) -> tuple[str, str]:
    body = split_frontmatter(header)[1]
    return header[: len(header) - len(body)], body


def _merge_front(ours: str, theirs: str, base: str) -> str:
    if ours == theirs or theirs == base:
        return ours
    if ours == base:
        return theirs
    o, t, b = (split_frontmatter(text + "\n")[0] for text in (ours, theirs, base))
    merged = dict(o)
    for key in [*o, *(k for k in t if k not in o)]:
        if key not in t:
            if b.get(key) == o.get(key):
                merged.pop(key, None)  # theirs deleted it, ours left it alone
        elif key not in o:
            if key not in b:
                merged[key] = t[key]  # theirs added it
        elif o[key] != t[key] and o[key] == b.get(key):
            merged[key] = t[key]
        elif o[key] != t[key] and isinstance(o[key], list) and isinstance(t[key], list):
            merged[key] = [*o[key], *(v for v in t[key] if v not in o[key])]
    if merged == o:
        return ours
    text = render(merged, "x")
    return text[: text.rindex("x")].rstrip("\n") + "\n"


def _merge_lines(ours: str, theirs: str, base: str) -> str:
    """Ours, plus the lines theirs added (not in the base, not already ours), before ours' blank end."""
    if ours == theirs or theirs == base:
        return ours
    if ours == base:
        return theirs
    o_lines, b_lines = ours.rstrip("\n").split("\n"), set(base.split("\n"))
    added = [line for line in theirs.rstrip("\n").split("\n") if line.strip() and line not in b_lines
             and line not in o_lines]
    return "\n".join(o_lines + added) + ours[len(ours.rstrip("\n")) :] if added else ours


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

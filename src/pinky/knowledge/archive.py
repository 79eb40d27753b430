"""The soft-delete archive: `delete` moves a note into its root's `.archive/`, `restore` brings one back.

No archived copy is ever written over another. Each is named after its note and the moment it was
archived, `.archive/<folder>/<name>.<YYYY-MM-DDTHHMMSSZ>.md` (`...Z-2.md` for a second one in the
same second: an exclusive create), so a note deleted, saved again and deleted again leaves both
copies, and the folder lists them oldest first. A copy archived before this scheme (`.archive/<path>`
itself) is one more version, dated by its `archived_at`.

A copy is the note's bytes with `archived_at` and `archive_reason` added to its frontmatter (those two
lines only: `pinky.text.frontmatter_edit`), and `restore` takes them out again, so the note restored is the
note deleted, byte for byte. `versions` lists the copies, numbered per entry from 1 (its oldest);
`restore` of a slug with several copies does not guess: `SeveralVersions` lists them, and the caller
picks one by number or by its name (`--version 2`, `--version 2026-11-27T101500Z`). The others stay.

Supersession: deleting the current version of a fact or status (it `supersedes` another, and nothing
supersedes it) makes the version it superseded current again: its `superseded_by`, and the
`valid_until` that supersession wrote, are removed. Restoring it supersedes that version again. The
markdown says so, so `pinky reindex` and a full rebuild keep it.
"""

from __future__ import annotations

import datetime as dt
import posixpath
import re
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any

from pinky.base.dates import now_utc, parse_moment
from pinky.base.fileio import create_new, ensure_inside, read_regular, write_numbered
from pinky.base.layout import ARCHIVE_DIR, slug_for
from pinky.base.redact import redact
from pinky.base.validate import clean_text
from pinky.errors import Conflict, InvalidInput, NotFound
from pinky.indexing import healing
from pinky.indexing.index import Index
from pinky.knowledge import edit_locks, entries
from pinky.knowledge.entries import Entry
from pinky.store import entries as store_entries
from pinky.text.frontmatter_edit import rewrite
from pinky.text.markdown import parse_text, split_frontmatter

MAX_REASON_CHARS = 2000
STAMP = "%Y-%m-%dT%H%M%SZ"
ARCHIVE_FIELDS = ("archived_at", "archive_reason")
# `<name>.<stamp>[-n].md`: the note `<name>.md` archived at that moment (the n-th copy of that second)
_COPY = re.compile(r"\A(?P<stem>.+)\.(?P<label>(?P<stamp>\d{4}-\d\d-\d\dT\d{6}Z)(?:-(?P<n>\d+))?)(?P<ext>\.md)",
                   re.IGNORECASE)


@dataclass(frozen=True)
class ArchivedCopy:
    """One archived copy of an entry."""

    slug: str  # the entry's slug, which it gets back
    scope: str
    title: str
    type: str
    archived_at: str | None
    reason: str | None
    path: str  # the copy, as citable as an entry's path
    rel: str  # where the note lived, relative to its root: restore puts it back there
    name: str  # the copy's path inside .archive/
    label: str  # what its file name adds to the note's (the archiving moment), '' for an older copy
    root: str
    file: Path
    moment: str  # when it was archived (UTC, ISO): the order of the versions
    version: int = 0  # 1 = the entry's oldest archived copy
    versions: int = 0

    @property
    def restore(self) -> str:
        """The command that brings this copy back."""
        return f"pinky-brain restore {self.slug}" + (f" --version {self.version}" if self.versions > 1 else "")

    def as_dict(self) -> dict[str, Any]:
        data = asdict(self)
        for name in ("rel", "name", "root", "file", "moment"):
            del data[name]
        return {**data, "restore": self.restore}


class SeveralVersions(InvalidInput):
    """A restore that must choose: the entry has several archived copies (`copies`, oldest first)."""

    def __init__(self, copies: list[ArchivedCopy]) -> None:
        listed = "; ".join(f"{c.version}: archived {c.archived_at or c.moment}" + (f", {_short(c.reason)}" if c.reason
                                                                                   else "") for c in copies)
        super().__init__(f"{copies[0].slug} has {len(copies)} archived versions ({listed}); choose one: "
                         f"pinky-brain restore {copies[0].slug} --version N")
        self.copies = copies


def _short(text: str, limit: int = 60) -> str:
    return text if len(text) <= limit else text[:limit - 1] + "…"


# --- delete ------------------------------------------------------------------------------------------------


def delete(index: Index, slug: str, reason: str) -> Path:
    """Soft delete: move the note into a new copy in its root's .archive/, with the reason; it leaves
    search. Returns the copy's path."""
    reason = redact(clean_text(reason, "reason", MAX_REASON_CHARS))
    row = entries.find(index, slug)
    path, base = entries.file_of(index, row["slug"]), index.root_dir(row["root"])
    folder = Path(ensure_inside(base / ARCHIVE_DIR / posixpath.dirname(row["path"]), base))
    name, moment = posixpath.basename(row["path"]), now_utc()
    with edit_locks.edit_lock(index, row["root"], row["path"]):
        try:
            raw = read_regular(path, base)
        except FileNotFoundError:
            raise NotFound(f"entry {row['slug']!r} was deleted or moved meanwhile; search for it again") from None
        meta, data = _with_reason(raw, moment, " ".join(reason.split()))
        archived = Path(write_numbered(folder, f"{name[:-3]}.{moment.strftime(STAMP)}", data, suffix=name[-3:]))
        path.unlink()
        healing.after_write(index, path, lambda _: None, embed=False)
    if meta is not None:
        _reinstate(index, meta, row["slug"])
    return archived


def _with_reason(raw: bytes, moment: dt.datetime, reason: str) -> tuple[dict[str, Any] | None, bytes | str]:
    """The note's frontmatter, and its text with `archived_at` and `archive_reason` added; a note whose
    frontmatter cannot be read is archived as it is (None, its bytes)."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        return None, raw
    meta, _, _, error = split_frontmatter(text)
    if error:
        return None, raw
    return meta, rewrite(text, {**meta, "archived_at": moment.isoformat(), "archive_reason": reason})


def _reinstate(index: Index, meta: dict[str, Any], slug: str) -> None:
    """`slug`, just archived, was the current version of a fact: the versions it superseded are current
    again (their `superseded_by`, and the `valid_until` supersession gave them, are removed)."""
    if meta.get("superseded_by"):
        return  # not the current version: the chain's current one stays current
    day = meta.get("valid_from")

    def change(old: dict[str, Any]) -> bool:
        if old.get("superseded_by") != slug:
            return False
        del old["superseded_by"]
        if day and old.get("valid_until") == day:
            del old["valid_until"]
        return True

    for row in _rows(index, meta.get("supersedes")):
        try:
            entries.edit_meta(index, row, change)
        except (NotFound, InvalidInput):
            continue


def _rows(index: Index, slugs: Any) -> list[Any]:
    """The index rows of the entries a `supersedes` value names (one slug or a list)."""
    names = slugs if isinstance(slugs, list) else [slugs] if slugs else []
    found = (store_entries.resolve_slug(index.conn, str(name)) for name in names if str(name).strip())
    return [rows[0] for rows in found if len(rows) == 1]


# --- the copies --------------------------------------------------------------------------------------------


def versions(index: Index, slug: str | None = None, *, scope: str | None = None,
             type: str | None = None) -> list[ArchivedCopy]:
    """The archived copies of the entry `slug` names (by slug, path or copy name), or of every entry;
    by entry, oldest first, numbered per entry. `scope`: 'global' or 'project'."""
    if scope not in (None, "global", "project"):
        raise InvalidInput(f"scope {scope!r} must be 'global' or 'project' for archived entries")
    query = slug.strip() if slug else None
    found: dict[tuple[str, str], list[tuple[Path, str, str, str]]] = {}
    for root, base in index.config.roots().items():
        archive = base / ARCHIVE_DIR
        if scope in (None, root) and archive.is_dir():
            for file in archive.rglob("*"):
                name = file.relative_to(archive).as_posix()
                if name.lower().endswith(".md") and not file.name.startswith(".") and file.is_file():
                    rel, label = _original(name)
                    found.setdefault((root, rel), []).append((file, name, label, root))
    copies = []
    for (root, rel), files in sorted(found.items()):
        if query is None or _names_note(query, root, rel) or any(_names_copy(query, root, f[1]) for f in files):
            read = sorted((_read(index, root, rel, *f[:3]) for f in files),
                          key=lambda c: (c.moment, len(c.label), c.label))  # a copy's -10 after its -9
            copies += [replace(c, version=n, versions=len(read)) for n, c in enumerate(read, 1)]
    return [c for c in copies if type is None or c.type == type]


def restore_command(index: Index, archived: Path) -> str:
    """The command that brings back the copy at `archived` (`--version N` when its entry has several)."""
    for root, base in index.config.roots().items():
        if archived.is_relative_to(base / ARCHIVE_DIR):
            rel = _original(archived.relative_to(base / ARCHIVE_DIR).as_posix())[0]
            copies = versions(index, slug_for(root, rel))
            return next((c.restore for c in copies if c.file == archived), f"pinky-brain restore {slug_for(root, rel)}")
    raise NotFound(f"{archived} is not in an archive of this brain")


def _original(name: str) -> tuple[str, str]:
    """The note's path an archived copy's name stands for, and the label its name adds."""
    folder, base = posixpath.split(name)
    found = _COPY.fullmatch(base)
    if found is None:
        return name, ""
    return posixpath.join(folder, found["stem"] + found["ext"]), found["label"]


def _names_note(query: str, root: str, rel: str) -> bool:
    full = slug_for(root, rel)
    return query in (full, rel, rel[:-3]) or full.endswith("/" + query)


def _names_copy(query: str, root: str, name: str) -> bool:
    return query in (name, name[:-3], slug_for(root, name))


def _read(index: Index, root: str, rel: str, file: Path, name: str, label: str) -> ArchivedCopy:
    try:
        text = read_regular(file, index.root_dir(root)).decode("utf-8", errors="replace")
    except OSError:
        text = ""
    doc = parse_text(text, rel)
    at, reason = (doc.meta.get(field) for field in ARCHIVE_FIELDS)
    stamp = _COPY.fullmatch(posixpath.basename(name))
    when = (dt.datetime.strptime(stamp["stamp"].upper(), STAMP).replace(tzinfo=dt.UTC) if stamp
            else parse_moment(str(at)) if at else None)
    if when is None:
        when = dt.datetime.fromtimestamp(file.stat().st_mtime if file.exists() else 0, dt.UTC)
    return ArchivedCopy(
        slug=slug_for(root, rel), scope="global" if root == "global" else f"project:{index.config.project}",
        title=doc.title, type=doc.type, archived_at=str(at) if at else None, reason=str(reason) if reason else None,
        path=index.display_path(root, f"{ARCHIVE_DIR}/{name}"), rel=rel, name=name, label=label, root=root, file=file,
        moment=when.astimezone(dt.UTC).isoformat())


# --- restore -----------------------------------------------------------------------------------------------


def restore(index: Index, slug: str, version: int | str | None = None) -> Entry:
    """Bring an archived note back to where it was. `slug` names the entry (or one copy by its name);
    with several copies, `version` picks one: its number (1 = the oldest) or its label."""
    copies = versions(index, slug)
    if not copies:
        raise NotFound(f"no archived entry {slug!r}")
    named = [c for c in copies if _names_copy(slug.strip(), c.root, c.name)]
    notes = sorted({c.slug for c in named or copies})
    if len(notes) > 1:
        raise InvalidInput(f"{slug!r} names archived copies of {len(notes)} entries ({', '.join(notes[:5])}); "
                           "give the whole slug")
    mine = [c for c in copies if c.slug == notes[0]]
    if version is not None:
        chosen = _pick(mine, version)
    elif named or len(mine) == 1:
        chosen = (named or mine)[0]
    else:
        raise SeveralVersions(mine)
    return _restore(index, chosen)


def _pick(copies: list[ArchivedCopy], version: int | str) -> ArchivedCopy:
    wanted = str(version).strip()
    if wanted.isdigit() and 1 <= int(wanted) <= len(copies):
        return copies[int(wanted) - 1]
    found = [c for c in copies if wanted and wanted in (c.label, posixpath.basename(c.name))]
    if len(found) == 1:
        return found[0]
    labels = ", ".join(f"{c.version}" + (f" ({c.label})" if c.label else "") for c in copies)
    raise NotFound(f"{copies[0].slug} has no archived version {wanted!r}; its versions: {labels}")


def _restore(index: Index, copy: ArchivedCopy) -> Entry:
    base = index.root_dir(copy.root)
    target = base / copy.rel
    for path in (copy.file, target):
        ensure_inside(path, base, done="read or moved")
    meta: dict[str, Any] | None = None
    with edit_locks.edit_lock(index, copy.root, copy.rel):
        try:
            data: bytes | str = read_regular(copy.file, base)
        except FileNotFoundError:
            raise NotFound(f"{copy.file} was restored or removed meanwhile") from None
        meta, data = _without_reason(data)
        if not create_new(target, data):  # never over a note saved there since
            raise Conflict(f"{target} exists again; move or rename it before restoring")
        copy.file.unlink()
        restored = healing.after_write(index, target, lambda _: entries.get(index, copy.slug))
    if meta and meta.get("supersedes") and not meta.get("superseded_by"):
        day = str(meta.get("valid_from") or now_utc().date().isoformat())
        entries.mark_superseded(index, _rows(index, meta["supersedes"]), restored.slug, day, True)
    return restored


def _without_reason(raw: bytes | str) -> tuple[dict[str, Any] | None, bytes | str]:
    """An archived copy's frontmatter without the archive's fields, and its text without their lines."""
    try:
        text = raw.decode("utf-8") if isinstance(raw, bytes) else raw
    except UnicodeDecodeError:
        return None, raw
    meta, _, _, error = split_frontmatter(text)
    if error:
        return None, raw
    kept = {key: value for key, value in meta.items() if key not in ARCHIVE_FIELDS}
    return kept, rewrite(text, kept) if len(kept) < len(meta) else text

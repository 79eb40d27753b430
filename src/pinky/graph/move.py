"""Renaming a note: `pinky mv`, which rewrites every link that named it by its old name.

`move` renames a note and rewrites every link that named it by its old
name: `[[wikilinks]]`, relative `.md` links and typed links in other notes, and `Brain:`
breadcrumbs in the project's code, so a rename leaves no broken link. A note moved into another
type folder takes that folder's type (`pinky mv gotcha/x decision/x` makes it a decision, as
`pinky save` puts decisions in decision/), and one moved out of type folders keeps the type it had.
Each file is written atomically under the note's edit lock, then indexed; the journal that lets a rename
cut short be finished is `pinky.graph.renames`.
"""

from __future__ import annotations

import contextlib
import logging
import os
import posixpath
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

from pinky.base.dates import now_utc
from pinky.base.fileio import atomic_write, create_new, ensure_inside, read_regular, sweep_temps, unwritable
from pinky.base.layout import GLOBAL_PREFIX, entry_id, folder_type, is_note, slug_for
from pinky.errors import Conflict, InvalidInput, NotFound, PinkyError
from pinky.graph import renames
from pinky.graph.linkedit import typed_links
from pinky.indexing import healing, indexer
from pinky.indexing.index import Index
from pinky.indexing.linkresolve import resolve_crumb, resolve_link
from pinky.knowledge import edit_locks, entries
from pinky.store import entries as store_entries
from pinky.store import link_queries
from pinky.text.frontmatter_edit import BOM, rewrite
from pinky.text.linkrefs import rewrite_body_target
from pinky.text.markdown import parse_text, split_frontmatter

log = logging.getLogger("pinky.graph.move")


def _new_rel(row: Any, new: str) -> str:
    """The path (in the same root) a note moves to: `NEW` names a slug; without a folder, it stays in its own."""
    name = new.strip().removesuffix(".md").strip("/")
    if row["root"] == "global":
        name = name.removeprefix(GLOBAL_PREFIX)
    elif name.startswith(GLOBAL_PREFIX):
        raise InvalidInput(f"cannot move {row['slug']} into the global brain: pinky-brain mv renames within one root")
    if "/" not in name and "/" in row["path"]:
        name = f"{posixpath.dirname(row['path'])}/{name}"
    rel = posixpath.normpath(name) + ".md"
    if not name or rel.startswith(("../", "/")) or not is_note(rel):
        raise InvalidInput(f"cannot move to {new!r}: give a slug like gotcha/new-name (no hidden or `_` parts)")
    return rel


def move(index: Index, old: str, new: str) -> dict[str, Any]:
    """Rename a note (same root), then rewrite the links that named it by its old name.

    A journal of what is left to rewrite is kept until the last link is done (`pinky.graph.renames`): a
    rename cut short is finished by the next move (before its own), reindex or `doctor --fix`.
    Renames run one at a time in a brain."""
    with contextlib.ExitStack() as held:
        for root in sorted(index.config.roots()):  # always in this order: two renames never deadlock
            held.enter_context(edit_locks.root_lock(index, root, "moves"))
        finished = _finish_pending(index)
        try:
            row = entries.find(index, old)
        except NotFound as missing:
            again = [done for done in finished if _names(done["old"], old)]
            if again:  # `pinky mv` run again after a kill: the first call's work, now complete
                return again[-1]
            return _already_moved(index, old, new, missing)
        return _finish(index, _start(index, row, _new_rel(row, new)))


def _start(index: Index, row: Any, rel: str) -> renames.Rename:
    """Journal the rename of `row` to `rel`, then move the file; the journal, for `_finish`."""
    base = index.root_dir(row["root"])
    source, target = entries.file_of(index, row["slug"]), Path(ensure_inside(base / rel, base))
    if target.exists():
        raise Conflict(f"{target} exists; choose another name")
    inbound = link_queries.links_to(index.conn, [row["id"]], None, -1)  # every one: LIMIT -1
    rename = renames.write(base, renames.Rename(
        root=row["root"], old_rel=row["path"], new_rel=rel, old_slug=row["slug"],
        project_root=None if index.config.project_root is None else str(index.config.project_root),
        started=now_utc().isoformat(), notes=_journal_notes(index, inbound), code=_journal_code(inbound),
        type_was=row["type"], type=_type_after(row, rel),
    ), row["id"])
    try:
        with edit_locks.edit_lock(index, row["root"], row["path"]):
            if not source.exists():
                raise NotFound(f"entry {row['slug']!r} was deleted or moved meanwhile")
            if not create_new(target, read_regular(source)):
                raise Conflict(f"{target} exists; choose another name")
            source.unlink()
    except PinkyError:
        renames.remove(rename)  # nothing moved
        raise
    return rename


def _type_after(row: Any, rel: str) -> str:
    """The type a note has at `rel`: the one its new folder names when the move changed its type folder,
    else the one it had."""
    folder = folder_type(rel)
    return folder if folder is not None and folder != folder_type(row["path"]) else row["type"]


def _retype(index: Index, rename: renames.Rename, target: Path) -> dict[str, str] | None:
    """Give the moved note the type its journal says (its `type:` field, only when the file read at its
    new place has another); {"was", "now"} when the move changed its type."""
    if rename.type is None:  # a journal of a pinky before types followed folders
        return None
    with edit_locks.edit_lock(index, rename.root, rename.new_rel):
        text = read_regular(target).decode("utf-8", errors="replace")
        meta, _, _, error = split_frontmatter(text.removeprefix(BOM))
        if not error and parse_text(text, rename.new_rel).type != rename.type:
            atomic_write(target, rewrite(text, {**meta, "type": rename.type}))
        elif error:
            log.warning("%s keeps its type: its frontmatter cannot be edited (%s)", target, error)
            return None
    return {"was": rename.type_was, "now": rename.type} if rename.type_was not in (None, rename.type) else None


def _already_moved(index: Index, old: str, new: str, missing: NotFound) -> dict[str, Any]:
    """`pinky mv OLD NEW` once OLD is gone and NEW is there (run twice, or again after it completed):
    nothing to do, said as such. Otherwise `missing`, the NotFound for OLD."""
    try:
        there = entries.find(index, new)
    except NotFound:
        raise missing from None
    return {"old": old, "new": there["slug"], "path": index.display_path(there["root"], there["path"]),
            "rewrote_notes": [], "rewrote_code": [], "retyped": None, "already": True}


def _names(slug: str, name: str) -> bool:
    bare = name.strip().removesuffix(".md").strip("/")
    return bool(bare) and (slug == bare or slug.endswith("/" + bare))


def _journal_notes(index: Index, inbound: list[Any]) -> list[dict[str, Any]]:
    """The notes that link to the moved one, grouped, each with its links as written."""
    by_note: dict[str, list[Any]] = {}
    for link_row in inbound:
        if link_row["source_id"]:
            by_note.setdefault(link_row["source_id"], []).append(link_row)
    notes = []
    for source_id, links in by_note.items():
        note = store_entries.entry_by(index.conn, "id", source_id)
        if note is not None:
            notes.append({"root": note["root"], "path": note["path"],
                          "links": [{"kind": r["kind"], "target": r["target"], "line": r["line"]} for r in links]})
    return notes


def _journal_code(inbound: list[Any]) -> list[dict[str, Any]]:
    by_file: dict[str, list[dict[str, Any]]] = {}
    for link_row in inbound:
        if link_row["source_file"]:
            by_file.setdefault(link_row["source_file"], []).append(
                {"line": link_row["line"], "target": link_row["target"]})
    return [{"file": file, "crumbs": crumbs} for file, crumbs in sorted(by_file.items())]


def finish_moves(index: Index) -> list[dict[str, Any]]:
    """Finish every rename a killed or interrupted `pinky mv` left half done in this brain's roots;
    returns what each one did. A root where a rename is running is left to it, and the renames of
    another project to that project. A root this user cannot write (a read-only checkout or mount)
    leaves its renames to someone who can: reading it never needs them finished."""
    roots = index.config.roots()
    if not any(any(renames.journal_dir(base).glob("*.json")) for base in roots.values()
               if renames.journal_dir(base).is_dir()):
        return []  # the usual case (no journal, or only the empty folder a finished rename leaves), decided
        # without taking a lock: a read-only checkout's `.pinky/locks/` cannot hold one
    with contextlib.ExitStack() as held:
        for root in sorted(roots):
            try:
                held.enter_context(edit_locks.root_lock(index, root, "moves", blocking=False))
            except BlockingIOError:
                return []  # a rename is running: it finishes what is pending first
            except OSError as exc:
                if not unwritable(exc):
                    raise
                return []  # a read-only root: its pending rename waits for a user who can write it
        return _finish_pending(index)


def finished_moves(index: Index) -> list[str]:
    """`finish_moves`, said in one line per rename finished (for a reindex's report)."""
    return [f"finished the interrupted rename of {done['old']} to {done['new']} ({len(done['rewrote_notes'])} "
            f"notes, {len(done['rewrote_code'])} code files rewritten)" for done in finish_moves(index) if done["new"]]


def _finish_pending(index: Index) -> list[dict[str, Any]]:
    pending, problems = renames.pending(index.config.roots())
    for problem in problems:
        log.warning("a rename journal cannot be read, so that rename cannot be finished: %s", problem)
    return [_finish(index, rename) for rename in pending
            if renames.belongs_here(rename, index.config.project_root)]


def pending_moves(index: Index) -> tuple[list[renames.Rename], list[str]]:
    """Renames not finished yet (for pinky doctor), and the journals that cannot be read."""
    return renames.pending(index.config.roots())


REWRITE_BATCH = 500  # notes rewritten between two index writes (one transaction each)
REWRITE_THREADS = 8  # durable writes in flight at once: each mostly waits for its fsync


def _finish(index: Index, rename: renames.Rename) -> dict[str, Any]:
    """Complete a rename: the file in its new place, every link that named the old name rewritten,
    the index told; then the journal goes. Safe to run again at any point."""
    root, base = rename.root, index.root_dir(rename.root)
    source = Path(ensure_inside(base / rename.old_rel, base))
    target = Path(ensure_inside(base / rename.new_rel, base))
    with edit_locks.edit_lock(index, root, rename.old_rel):
        if source.exists() and not target.exists():  # cut short before the file moved
            create_new(target, read_regular(source))
            source.unlink()
        elif source.exists() and read_regular(source) == read_regular(target):  # cut short between the two
            source.unlink()
    if not target.exists():  # deleted or moved again before the rename could be finished
        log.warning("the rename of %s to %s cannot be finished: %s is gone", rename.old_slug, rename.new_rel, target)
        renames.remove(rename)
        return {"old": rename.old_slug, "new": None, "path": None, "rewrote_notes": [], "rewrote_code": [],
                "retyped": None}
    retyped = _retype(index, rename, target)
    indexer.index_file(index, source, embed=False)
    new_slug = healing.after_write(index, target, lambda slug: slug or slug_for(root, rename.new_rel))
    moved = entry_id(root, rename.new_rel)
    _sweep(index, rename)
    notes = _rewrite_notes(index, rename, new_slug, moved)
    code = _rewrite_code(index, rename, new_slug, moved)
    if code:
        indexer.scan_code(index)
    renames.remove(rename)
    return {"old": rename.old_slug, "new": new_slug, "path": index.display_path(root, rename.new_rel),
            "rewrote_notes": notes, "rewrote_code": code, "retyped": retyped}


def _sweep(index: Index, rename: renames.Rename) -> None:
    """Remove the temporary files a killed rename left beside the files it was rewriting."""
    folders = {posixpath.dirname(posixpath.join(rename.root, rename.new_rel))}
    folders |= {posixpath.dirname(posixpath.join(note["root"], note["path"])) for note in rename.notes}
    for folder in folders:
        root, _, rel = folder.partition("/")
        sweep_temps(index.root_dir(root) / rel)
    project = index.config.project_root
    if project is not None:
        for folder in {posixpath.dirname(item["file"]) for item in rename.code}:
            sweep_temps(project / folder)


def _still_names(index: Index, moved: str) -> Callable[[str, str, str], bool]:
    """Whether a link `target` written in note `path` of `root` still reaches the moved note (a title,
    a short name the move kept): then it is left as written. Answers are kept per name: thousands of
    notes usually name the moved note the same way."""
    known: dict[tuple[str, str, str], bool] = {}

    def reaches(root: str, path: str, target: str) -> bool:
        relative = target.strip().lower().endswith(".md")
        key = (root, posixpath.dirname(path) if relative else "", target)
        if key not in known:
            hit = resolve_link(index.conn, root, path, target)
            known[key] = hit is not None and hit["id"] == moved
        return known[key]

    return reaches


def _rewrite_notes(index: Index, rename: renames.Rename, new_slug: str, moved: str) -> list[str]:
    """Point each journalled note's links at the moved note; returns the notes rewritten.

    Which links to rewrite is decided here (the index is not shared between threads); the files are
    rewritten by a few threads, since each durable write waits for the disk, and indexed a batch at
    a time, so a rename cut short has what it rewrote indexed up to its last batch."""
    from concurrent.futures import ThreadPoolExecutor

    def rewrite(job: tuple[dict[str, Any], list[dict[str, Any]]]) -> Path | None:
        note, links = job
        return _rewrite_note(index, note["root"], note["path"], links, new_slug, rename.root, rename.new_rel)

    reaches = _still_names(index, moved)
    done: list[str] = []
    with ThreadPoolExecutor(REWRITE_THREADS, thread_name_prefix="pinky-mv") as pool:
        for start in range(0, len(rename.notes), REWRITE_BATCH):
            jobs = [(note, [link for link in note["links"]
                            if not reaches(note["root"], note["path"], link["target"])])
                    for note in rename.notes[start : start + REWRITE_BATCH]]
            written = [(note, path) for (note, _), path in zip(jobs, pool.map(rewrite, jobs), strict=True) if path]
            if written:
                _index_notes(index, [path for _, path in written])
                done += [slug_for(note["root"], note["path"]) for note, _ in written]
    return done


def _index_notes(index: Index, paths: list[Path]) -> None:
    batch = list(paths)  # the caller reuses its list
    healing.heal(index, lambda: indexer.index_files(index, batch))


def _rewrite_note(index: Index, note_root: str, note_rel: str, links: list[dict[str, Any]], new_slug: str,
                  root: str, rel: str) -> Path | None:
    """Rewrite the links of one note (under its edit lock); the file when it changed."""
    if not links:
        return None
    base = index.root_dir(note_root)
    path = Path(ensure_inside(base / note_rel, base))
    with edit_locks.edit_lock(index, note_root, note_rel):
        try:
            text = read_regular(path).decode("utf-8")
        except FileNotFoundError:
            return None  # deleted since: nothing left to point elsewhere
        lines = text.split("\n")
        typed = set()
        for link in links:
            kind, old = link["kind"], link["target"]
            if kind == "typed":
                typed.add(old)
                continue
            if kind == "md" and note_root != root:
                continue  # a .md link only reaches notes of its own root
            new = new_slug if kind == "wiki" else _relative(note_rel, rel)
            at = (link["line"] or 1) - 1
            if 0 <= at < len(lines) and (changed := rewrite_body_target(lines[at], kind, old, new)) != lines[at]:
                lines[at] = changed
            else:  # the note changed since it was indexed: rewrite it wherever it is written
                lines = rewrite_body_target("\n".join(lines), kind, old, new).split("\n")
        new_text = "\n".join(lines)
        if typed:
            meta, _, _, error = split_frontmatter(new_text)
            if not error:
                meta["links"] = [({**item, "to": new_slug} if isinstance(item, dict) and item.get("to") in typed
                                  else new_slug if isinstance(item, str) and item in typed else item)
                                 for item in typed_links(meta)]
                new_text = rewrite(new_text, meta)
        if new_text == text:
            return None
        atomic_write(path, new_text)
    return path


def _relative(source_rel: str, target_rel: str) -> str:
    return posixpath.relpath(target_rel, posixpath.dirname(source_rel) or ".")


def _rewrite_code(index: Index, rename: renames.Rename, new_slug: str, moved: str) -> list[str]:
    """Rewrite `Brain: <old>` breadcrumbs in the project's code; returns the files changed."""
    project = index.config.project_root
    if project is None:
        return []
    changed: list[str] = []
    for item in rename.code:
        path = Path(ensure_inside(project / item["file"], project))
        try:
            text = read_regular(path).decode("utf-8", errors="surrogateescape")
        except FileNotFoundError:
            continue
        lines = text.split("\n")
        for crumb in item["crumbs"]:
            at = crumb["line"] - 1
            if 0 <= at < len(lines) and not _crumb_reaches(index, crumb["target"], moved):
                pattern = re.compile(r"(?<=[\s,:])" + re.escape(crumb["target"]) + r"(?=$|[\s,;:)])")
                lines[at] = pattern.sub(new_slug, lines[at])
        new_text = "\n".join(lines)
        if new_text != text:
            mode = os.stat(path).st_mode & 0o777
            atomic_write(path, new_text.encode("utf-8", errors="surrogateescape"), mode=mode)
            changed.append(item["file"])
    return changed


def _crumb_reaches(index: Index, name: str, moved: str) -> bool:
    hit = resolve_crumb(index.conn, name)
    return hit is not None and hit["id"] == moved

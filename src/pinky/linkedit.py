"""Editing links in the markdown: `pinky link`, `pinky unlink` and `pinky mv`.

Typed links live in the source note's frontmatter (`links: [{to, rel, since, until}]`): `link`
adds one from today, `unlink` closes it by setting `until` (nothing is deleted: the history stays
readable with `--at`). `move` renames a note and rewrites every link that named it by its old
name: `[[wikilinks]]`, relative `.md` links and typed links in other notes, and `Brain:`
breadcrumbs in the project's code, so a rename leaves no broken link. Each file is written
atomically under the note's edit lock, then indexed.
"""

from __future__ import annotations

import os
import posixpath
import re
from pathlib import Path
from typing import Any

from pinky import entries, healing, indexer
from pinky.dates import now_utc, valid_day
from pinky.errors import Conflict, InvalidInput, NotFound
from pinky.fileio import atomic_write, create_new, ensure_inside, read_regular
from pinky.frontmatter_edit import rewrite
from pinky.index import Index
from pinky.layout import GLOBAL_PREFIX, entry_id, is_note, slug_for
from pinky.linkrefs import rewrite_body_target, valid_relation
from pinky.linkresolve import resolve_link
from pinky.markdown import split_frontmatter
from pinky.store import entries as eq
from pinky.store import graph as gq


def _typed(meta: dict[str, Any]) -> list[Any]:
    value = meta.get("links")
    return list(value) if isinstance(value, list) else [] if value in (None, "") else [value]


def _same_target(index: Index, row: Any, item: Any, target: Any) -> bool:
    to = item.get("to") if isinstance(item, dict) else item
    hit = resolve_link(index.conn, row["root"], row["path"], str(to)) if to else None
    return hit is not None and hit["id"] == target["id"]


def link(index: Index, source: str, target: str, *, rel: str = "relates", since: str | None = None) -> dict[str, Any]:
    """Add a typed link from `source` to `target`, holding from `since` (default today)."""
    name = valid_relation(rel)
    if name is None:
        raise InvalidInput(f"rel {rel!r} is not a relation name: a lowercase word like depends_on")
    me, other = entries.find(index, source), entries.find(index, target)
    if me["id"] == other["id"]:
        raise InvalidInput(f"{me['slug']} cannot link to itself")
    day = valid_day(since, "since") if since else now_utc().date().isoformat()

    def change(meta: dict[str, Any]) -> None:
        items = _typed(meta)
        for item in items:
            if (isinstance(item, dict) and (item.get("rel") or "relates") == name and not item.get("until")
                    and _same_target(index, me, item, other)):
                raise Conflict(f"{me['slug']} already {name} {other['slug']} (since {item.get('since') or 'ever'})")
        meta["links"] = [*items, {"to": other["slug"], "rel": name, "since": day}]

    entries.edit_meta(index, me, change)
    return {"source": me["slug"], "target": other["slug"], "rel": name, "since": day}


def unlink(index: Index, source: str, target: str, *, rel: str | None = None,
           until: str | None = None) -> dict[str, Any]:
    """Close the open typed links from `source` to `target` (of relation `rel`, else all): `until` = today."""
    me, other = entries.find(index, source), entries.find(index, target)
    day = valid_day(until, "until") if until else now_utc().date().isoformat()
    closed: list[str] = []

    def change(meta: dict[str, Any]) -> None:
        items = _typed(meta)
        for n, item in enumerate(items):
            item = {"to": item} if isinstance(item, str) else item
            wanted = rel is None or (item.get("rel") or "relates") == rel if isinstance(item, dict) else False
            if wanted and not item.get("until") and _same_target(index, me, item, other):
                items[n] = {**item, "until": day}
                closed.append(str(item.get("rel") or "relates"))
        if not closed:
            raise NotFound(f"{me['slug']} has no open typed link{f' {rel}' if rel else ''} to {other['slug']} "
                           "(a [[link]] in the text is removed by editing the note)")
        meta["links"] = items

    entries.edit_meta(index, me, change)
    return {"source": me["slug"], "target": other["slug"], "closed": closed, "until": day}


def _new_rel(row: Any, new: str) -> str:
    """The path (in the same root) a note moves to: `NEW` names a slug; without a folder, it stays in its own."""
    name = new.strip().removesuffix(".md").strip("/")
    if row["root"] == "global":
        name = name.removeprefix(GLOBAL_PREFIX)
    elif name.startswith(GLOBAL_PREFIX):
        raise InvalidInput(f"cannot move {row['slug']} into the global brain: pinky mv renames within one root")
    if "/" not in name and "/" in row["path"]:
        name = f"{posixpath.dirname(row['path'])}/{name}"
    rel = posixpath.normpath(name) + ".md"
    if not name or rel.startswith(("../", "/")) or not is_note(rel):
        raise InvalidInput(f"cannot move to {new!r}: give a slug like gotcha/new-name (no hidden or `_` parts)")
    return rel


def move(index: Index, old: str, new: str) -> dict[str, Any]:
    """Rename a note (same root), then rewrite the links that named it by its old name."""
    row = entries.find(index, old)
    rel = _new_rel(row, new)
    base = index.root_dir(row["root"])
    source, target = entries.file_of(index, row["slug"]), Path(ensure_inside(base / rel, base))
    inbound = gq.links_to(index.conn, [row["id"]], None, 100_000)
    with entries.edit_lock(index, row["root"], row["path"]):
        if not source.exists():
            raise NotFound(f"entry {row['slug']!r} was deleted or moved meanwhile")
        if not create_new(target, read_regular(source)):
            raise Conflict(f"{target} exists; choose another name")
        source.unlink()
    indexer.index_file(index, source, embed=False)
    new_slug = healing.after_write(index, target, lambda slug: slug or slug_for(row["root"], rel))
    still = dict(gq.link_targets(index.conn, [r["id"] for r in inbound]))
    moved = entry_id(row["root"], rel)
    broken = [r for r in inbound if still.get(r["id"]) != moved]  # unresolved now, or naming another entry
    notes = _rewrite_notes(index, broken, new_slug, row["root"], rel)
    code = _rewrite_code(index, [r for r in broken if r["source_file"]], new_slug)
    if code:
        indexer.scan_code(index)
    return {"old": row["slug"], "new": new_slug, "path": index.display_path(row["root"], rel),
            "rewrote_notes": notes, "rewrote_code": code}


def _rewrite_notes(index: Index, broken: list[Any], new_slug: str, root: str, rel: str) -> list[str]:
    """Point the broken inbound links of each note at the moved note; returns the notes rewritten."""
    by_note: dict[str, list[Any]] = {}
    for link_row in broken:
        if link_row["source_id"]:
            by_note.setdefault(link_row["source_id"], []).append(link_row)
    done: list[str] = []
    for links in by_note.values():
        note = eq.entry_by(index.conn, "id", links[0]["source_id"])
        if note is not None and _rewrite_note(index, note, links, new_slug, root, rel):
            done.append(note["slug"])
    return done


def _rewrite_note(index: Index, note: Any, links: list[Any], new_slug: str, root: str, rel: str) -> bool:
    path = entries.file_of(index, note["slug"])
    with entries.edit_lock(index, note["root"], note["path"]):
        text = read_regular(path).decode("utf-8")
        lines = text.split("\n")
        typed = set()
        for link_row in links:
            if link_row["kind"] == "typed":
                typed.add(link_row["target"])
                continue
            new = new_slug if link_row["kind"] == "wiki" else _relative(note["path"], rel)
            if link_row["kind"] == "md" and note["root"] != root:
                continue  # a .md link only reaches notes of its own root
            at = (link_row["line"] or 1) - 1
            kind, old = link_row["kind"], link_row["target"]
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
                                 for item in _typed(meta)]
                new_text = rewrite(new_text, meta)
        if new_text == text:
            return False
        atomic_write(path, new_text)
    healing.after_write(index, path, lambda slug: slug, embed=False)
    return True


def _relative(source_rel: str, target_rel: str) -> str:
    return posixpath.relpath(target_rel, posixpath.dirname(source_rel) or ".")


def _rewrite_code(index: Index, crumbs: list[Any], new_slug: str) -> list[str]:
    """Rewrite `Brain: <old>` breadcrumbs in the project's code; returns the files changed."""
    project = index.config.project_root
    if project is None:
        return []
    changed: list[str] = []
    for file in sorted({r["source_file"] for r in crumbs}):
        path = Path(ensure_inside(project / file, project))
        text = read_regular(path).decode("utf-8", errors="surrogateescape")
        lines = text.split("\n")
        for crumb in (r for r in crumbs if r["source_file"] == file):
            at = crumb["line"] - 1
            if 0 <= at < len(lines):
                pattern = re.compile(r"(?<=[\s,:])" + re.escape(crumb["target"]) + r"(?=$|[\s,;:)])")
                lines[at] = pattern.sub(new_slug, lines[at])
        new_text = "\n".join(lines)
        if new_text != text:
            mode = os.stat(path).st_mode & 0o777
            atomic_write(path, new_text.encode("utf-8", errors="surrogateescape"), mode=mode)
            changed.append(file)
    return changed

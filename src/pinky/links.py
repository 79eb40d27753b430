"""What an entry is connected to: the entries it links to, the entries linking to it, and its code.

Links are kept as written (`[[slug]]`, `[[Title]]`, `../gotcha/x.md`) and resolved when read, so a
link written before its target exists starts working as soon as the target is saved.
"""

from __future__ import annotations

import posixpath
from typing import Any

from pinky import entries
from pinky.index import Index
from pinky.layout import names_of
from pinky.store import entries as eq
from pinky.store import graph as gq


def related(index: Index, slug: str) -> dict[str, Any]:
    """Outgoing links (resolved to slugs where possible), backlinks, and code references of an entry."""
    me = entries.find(index, slug)
    links: list[dict[str, Any]] = []
    for target in gq.outgoing_links(index.conn, me["id"]):
        hit = resolve_link(index.conn, me["root"], me["path"], target)
        links.append({"target": target, "slug": hit["slug"] if hit else None, "title": hit["title"] if hit else None,
                      "path": index.display_path(hit["root"], hit["path"]) if hit else None})
    code: list[dict[str, Any]] = [{"file": f, "line": None, "repo": None, "source": "frontmatter"}
            for f in gq.listed_files(index.conn, me["id"])]
    code += [{"file": f, "line": line, "repo": None, "source": "breadcrumb"}
             for f, line in gq.breadcrumbs_naming(index.conn, names_of(me["slug"], me["path"]))]
    return {"slug": me["slug"], "title": me["title"], "path": index.display_path(me["root"], me["path"]),
            "links": links, "backlinks": backlinks(index, me), "code": code}


def backlinks(index: Index, me: Any) -> list[dict[str, Any]]:
    """Entries whose links resolve to this one, by slug."""
    stem = posixpath.splitext(posixpath.basename(me["path"]))[0]
    seen: dict[str, dict[str, Any]] = {}
    for row in gq.link_candidates(index.conn, me["id"], stem, me["title"]):
        hit = resolve_link(index.conn, row["root"], row["path"], row["target"])
        if hit is not None and hit["id"] == me["id"] and row["slug"] not in seen:
            seen[row["slug"]] = {"slug": row["slug"], "title": row["title"],
                                 "path": index.display_path(row["root"], row["path"])}
    return list(seen.values())


def resolve_link(conn: Any, root: str, source_path: str, target: str) -> Any:
    """The entry row a link in `source_path` points at: a relative .md path, a slug, or a title."""
    target = target.strip()
    if target.lower().endswith(".md"):
        rel = posixpath.normpath(posixpath.join(posixpath.dirname(source_path), target))
        row = eq.entry_at(conn, root, rel)
        if row is not None:
            return row
        target = target[:-3]
    found = eq.resolve_slug(conn, target.strip("./"), limit=2)
    if len(found) == 1:
        return found[0]
    titled = eq.entries_titled(conn, target)
    return titled[0] if len(titled) == 1 else None

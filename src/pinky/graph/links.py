"""What an entry is connected to: the entries it links to, the entries linking to it, and its code.

Every answer is a lookup in the link table (resolved when written, see `pinky.indexing.linkresolve`):
no note is read and no text is scanned. Typed links hold from `since` until `until`; by default
only the links that hold today are shown, `at` asks for another day.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from pinky.base.dates import now_utc, valid_day
from pinky.base.shown import shown
from pinky.errors import InvalidInput
from pinky.indexing.index import Index
from pinky.indexing.linkresolve import resolve_link
from pinky.knowledge import entries
from pinky.store import link_queries
from pinky.text.linkrefs import valid_relation

__all__ = ["day_of", "related", "relations", "resolve_link"]

MAX_LINKS = 500


def day_of(at: str | None) -> str:
    """The day links are read at: `at` (a date), else today (UTC)."""
    return valid_day(at, "at") if at else now_utc().date().isoformat()


def relations(rels: Sequence[str] | None) -> set[str] | None:
    """The relation filter, checked: None keeps every link."""
    if not rels:
        return None
    checked = {valid_relation(r) for r in rels}
    if None in checked:
        raise InvalidInput(f"rel {', '.join(map(repr, rels))}: a relation is a lowercase word like depends_on")
    return {r for r in checked if r}


def related(index: Index, slug: str, *, rels: Sequence[str] | None = None, at: str | None = None,
            limit: int = MAX_LINKS) -> dict[str, Any]:
    """Outgoing links (with the entry each resolves to), backlinks, and the code of an entry: from at
    most `limit` links each way."""
    me = entries.find(index, slug)
    day, wanted = day_of(at), relations(rels)
    conn = index.conn
    out = [r for r in link_queries.links_from(conn, [me["id"]], day, limit) if wanted is None or r["rel"] in wanted]
    into = [r for r in link_queries.links_to(conn, [me["id"]], day, limit) if wanted is None or r["rel"] in wanted]
    nodes = link_queries.entry_nodes(conn, list({r["target_id"] for r in out if r["target_id"]}
                                                | {r["source_id"] for r in into if r["source_id"]}))
    links, seen = [], set()
    for row in out:
        if row["kind"] == "files" or (row["kind"], row["target"], row["rel"]) in seen:
            continue
        seen.add((row["kind"], row["target"], row["rel"]))
        hit = nodes.get(row["target_id"])
        links.append({"target": row["target"], "slug": hit["slug"] if hit else None,
                      "title": shown(hit["title"]) if hit else None,
                      "path": index.display_path(hit["root"], hit["path"]) if hit else None, **_how(row)})
    backlinks: dict[tuple[str, str], dict[str, Any]] = {}
    for row in into:
        hit = nodes.get(row["source_id"])
        if hit is not None and (hit["slug"], row["rel"]) not in backlinks:
            backlinks[(hit["slug"], row["rel"])] = {"slug": hit["slug"], "title": shown(hit["title"]),
                                                    "path": index.display_path(hit["root"], hit["path"]), **_how(row)}
    code = [{"file": r["target_file"], "line": None, "repo": None, "source": "frontmatter"}
            for r in out if r["kind"] == "files"]
    code += [{"file": r["source_file"], "line": r["line"], "repo": None, "source": "breadcrumb"}
             for r in into if r["kind"] == "breadcrumb"]
    return {"slug": me["slug"], "title": shown(me["title"]), "path": index.display_path(me["root"], me["path"]),
            "at": day, "links": links, "backlinks": list(backlinks.values()), "code": code}


def _how(row: Any) -> dict[str, Any]:
    return {"kind": row["kind"], "rel": row["rel"], "line": row["line"], "since": row["since"], "until": row["until"]}

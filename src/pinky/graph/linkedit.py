"""Editing typed links in the markdown: `pinky link` and `pinky unlink` (`pinky mv` is `pinky.graph.move`).

Typed links live in the source note's frontmatter (`links: [{to, rel, since, until}]`): `link`
adds one from today, `unlink` closes it by setting `until` (nothing is deleted: the history stays
readable with `--at`). The note is edited under its edit lock (`pinky.knowledge.entries.edit_meta`).
"""

from __future__ import annotations

from typing import Any

from pinky.base.dates import now_utc, valid_day
from pinky.errors import Conflict, InvalidInput, NotFound
from pinky.indexing.index import Index
from pinky.indexing.linkresolve import resolve_link
from pinky.knowledge import entries
from pinky.text.linkrefs import valid_relation


def typed_links(meta: dict[str, Any]) -> list[Any]:
    """The typed links a note's frontmatter holds, as a list whatever way it was written."""
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
        items = typed_links(meta)
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
        items = typed_links(meta)
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

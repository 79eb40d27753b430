"""What changed lately, and what an entry is connected to: read-only views over the index.

`briefing` answers "what happened since T?" at the start of a session: new and updated entries
(from `created` and the file mtime the indexer stored) plus the diary lines the hooks appended.
`related` answers "what else should I read?": the entry's links, its backlinks and the code it
names. Both only read; the diary is read from disk because hooks append to it without reindexing.
"""

from __future__ import annotations

import datetime as dt
import json
import posixpath
import re
from typing import TYPE_CHECKING, Any

from pinky.diary import read_diary
from pinky.errors import InvalidInput

if TYPE_CHECKING:
    from pinky.kb import KnowledgeBase

COMPACT_ITEMS = 50
FULL_ITEMS = 500
COMPACT_DIARY_LINES = 60
FULL_DIARY_LINES = 1000
SUMMARY_CHARS = 300
_DURATION = re.compile(r"^\s*(\d{1,5})\s*([mhdw])\s*$", re.IGNORECASE)
_UNITS = {"m": "minutes", "h": "hours", "d": "days", "w": "weeks"}


def parse_since(since: str, now: dt.datetime | None = None) -> dt.datetime:
    """An aware datetime from ISO-8601 ('2026-11-20', '2026-11-20T09:00Z') or a span back ('36h', '7d').

    A time without a zone is taken as local time, like the diary's HH:MM.
    """
    if not isinstance(since, str) or not since.strip():
        raise InvalidInput("since must be an ISO-8601 date or time, e.g. 2026-11-20T09:00 (or a span like 24h, 7d)")
    now = now or dt.datetime.now().astimezone()
    span = _DURATION.match(since)
    if span:
        return now - dt.timedelta(**{_UNITS[span.group(2).lower()]: int(span.group(1))})
    try:
        moment = dt.datetime.fromisoformat(since.strip().replace("Z", "+00:00").replace("z", "+00:00"))
    except ValueError:
        raise InvalidInput(
            f"since={since[:60]!r} is not an ISO-8601 date or time; use e.g. 2026-11-20T09:00Z, 2026-11-20 or 24h"
        ) from None
    return moment if moment.tzinfo else moment.astimezone()


def _parse_created(value: str | None) -> dt.datetime | None:
    if not value:
        return None
    try:
        moment = dt.datetime.fromisoformat(value.strip().replace("Z", "+00:00"))
    except ValueError:
        return None
    return moment if moment.tzinfo else moment.astimezone()


def _iso(moment: dt.datetime) -> str:
    return moment.astimezone(dt.UTC).replace(microsecond=0).isoformat().replace("+00:00", "Z")


def briefing(kb: KnowledgeBase, since: str, compact: bool = True) -> dict[str, Any]:
    """New and updated entries since `since`, and the diary lines written since then (newest first)."""
    moment = parse_since(since)
    since_ns = max(-(2**63), min(2**63 - 1, int(moment.timestamp() * 1_000_000_000)))
    rows = kb.db.conn.execute(
        "SELECT slug, root, path, title, type, scope, project, tags, created, mtime_ns, body FROM entry "
        "WHERE type != 'diary' AND (mtime_ns >= ? OR created >= ?)",
        (since_ns, moment.astimezone(dt.UTC).date().isoformat()[:10]),
    ).fetchall()
    new: list[tuple[dt.datetime, dict[str, Any]]] = []
    updated: list[tuple[dt.datetime, dict[str, Any]]] = []
    for row in rows:
        created = _parse_created(row["created"])
        changed = dt.datetime.fromtimestamp(row["mtime_ns"] / 1e9, dt.UTC)
        item = _briefing_item(kb, row, created, changed, compact)
        if created is not None and created >= moment:
            new.append((created, item))
        elif changed >= moment:
            updated.append((changed, item))
    cap = COMPACT_ITEMS if compact else FULL_ITEMS
    diary = diary_lines(kb, moment)
    line_cap = COMPACT_DIARY_LINES if compact else FULL_DIARY_LINES
    return {
        "since": _iso(moment),
        "until": _iso(dt.datetime.now(dt.UTC)),
        "counts": {"new": len(new), "updated": len(updated), "diary_lines": len(diary)},
        "new": [item for _, item in sorted(new, key=lambda p: p[0], reverse=True)[:cap]],
        "updated": [item for _, item in sorted(updated, key=lambda p: p[0], reverse=True)[:cap]],
        "diary": diary[:line_cap],
        "truncated": len(new) > cap or len(updated) > cap or len(diary) > line_cap,
    }


def _briefing_item(kb: KnowledgeBase, row: Any, created: dt.datetime | None, changed: dt.datetime,
                   compact: bool) -> dict[str, Any]:
    item: dict[str, Any] = {
        "slug": row["slug"], "title": row["title"], "type": row["type"],
        "path": kb.display_path(row["root"], row["path"]),
        "created": _iso(created) if created else None, "modified": _iso(changed),
    }
    if not compact:
        body = " ".join(row["body"].split())
        item.update(scope=row["scope"], project=row["project"], tags=json.loads(row["tags"]),
                    summary=body[:SUMMARY_CHARS] + ("…" if len(body) > SUMMARY_CHARS else ""))
    return item


def diary_lines(kb: KnowledgeBase, moment: dt.datetime) -> list[dict[str, Any]]:
    """The diary lines of every root written since `moment`, newest first (ties keep file order)."""
    lines = [line for root in kb.config.roots().values() for line in read_diary(root, since=moment)]
    lines.sort(key=lambda line: (line.day, line.time), reverse=True)
    return [{"date": line.day.isoformat(), "time": f"{line.time:%H:%M}", "session": line.session,
             "kind": line.kind, "text": line.text} for line in lines]


# --- related -------------------------------------------------------------------------------------


def related(kb: KnowledgeBase, slug: str) -> dict[str, Any]:
    """Outgoing links (resolved to slugs where possible), backlinks, and code references of an entry."""
    entry = kb.get(slug)
    conn = kb.db.conn
    me = conn.execute("SELECT id, root, path, title FROM entry WHERE slug = ?", (entry.slug,)).fetchone()
    links = []
    for (target,) in conn.execute("SELECT target FROM entry_link WHERE entry_id = ? ORDER BY rowid", (me["id"],)):
        hit = resolve_link(conn, me["root"], me["path"], target)
        links.append({"target": target, "slug": hit["slug"] if hit else None,
                      "title": hit["title"] if hit else None,
                      "path": kb.display_path(hit["root"], hit["path"]) if hit else None})
    code = [{"file": f, "line": None, "repo": None, "source": "frontmatter"}
            for (f,) in conn.execute("SELECT path FROM entry_file WHERE entry_id = ? ORDER BY rowid", (me["id"],))]
    from pinky.codescan import slug_candidates

    names = slug_candidates(entry.slug, me["path"])
    code += [{"file": r[0], "line": r[1], "repo": None, "source": "breadcrumb"} for r in conn.execute(
        f"SELECT file_path, line FROM breadcrumb WHERE slug IN ({','.join('?' * len(names))}) "
        "ORDER BY file_path, line", names)]
    return {"slug": entry.slug, "title": entry.title, "path": entry.path, "links": links,
            "backlinks": _backlinks(kb, me), "code": code}


def _backlinks(kb: KnowledgeBase, me: Any) -> list[dict[str, Any]]:
    conn = kb.db.conn
    stem = posixpath.splitext(posixpath.basename(me["path"]))[0]
    rows = conn.execute(
        "SELECT DISTINCT e.slug, e.root, e.path, e.title, l.target FROM entry_link l "
        "JOIN entry e ON e.id = l.entry_id WHERE e.id != ? AND (l.target LIKE ? ESCAPE '\\' "
        "OR lower(l.target) = lower(?)) ORDER BY e.slug",
        (me["id"], "%" + _like_escape(stem) + "%", me["title"]),
    ).fetchall()
    seen: dict[str, dict[str, Any]] = {}
    for row in rows:
        hit = resolve_link(conn, row["root"], row["path"], row["target"])
        if hit is not None and hit["id"] == me["id"] and row["slug"] not in seen:
            seen[row["slug"]] = {"slug": row["slug"], "title": row["title"],
                                 "path": kb.display_path(row["root"], row["path"])}
    return list(seen.values())


def _like_escape(text: str) -> str:
    return text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")


_LINK_COLUMNS = "SELECT id, slug, root, path, title FROM entry"


def resolve_link(conn: Any, root: str, source_path: str, target: str) -> Any:
    """The entry row a link in `source_path` points at: a relative .md path, a slug, or a title."""
    target = target.strip()
    if target.lower().endswith(".md"):
        rel = posixpath.normpath(posixpath.join(posixpath.dirname(source_path), target))
        row = conn.execute(f"{_LINK_COLUMNS} WHERE root = ? AND path = ?", (root, rel)).fetchone()
        if row is not None:
            return row
        target = target[:-3]
    name = target.strip("./")
    for candidate in (name, f"global/{name}"):
        row = conn.execute(f"{_LINK_COLUMNS} WHERE slug = ?", (candidate,)).fetchone()
        if row is not None:
            return row
    rows = conn.execute(f"{_LINK_COLUMNS} WHERE slug LIKE ? ESCAPE '\\' LIMIT 2",
                        ("%/" + _like_escape(name),)).fetchall()
    if len(rows) == 1:
        return rows[0]
    rows = conn.execute(f"{_LINK_COLUMNS} WHERE lower(title) = lower(?) LIMIT 2", (target,)).fetchall()
    return rows[0] if len(rows) == 1 else None

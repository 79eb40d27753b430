"""What changed lately: the answer to "what happened since T?" at the start of a session.

New and updated entries (from `created` and the file mtime the indexer stored), plus the diary
lines the hooks appended. Read-only; the diary is read from disk because hooks append to it
without reindexing.
"""

from __future__ import annotations

import datetime as dt
import json
import re
from pathlib import Path
from typing import Any

from pinky.dates import iso_utc, parse_moment, parse_since, to_ns
from pinky.index import Index
from pinky.store import entries as eq

COMPACT_ITEMS = 50
FULL_ITEMS = 500
COMPACT_DIARY_LINES = 60
FULL_DIARY_LINES = 1000
SUMMARY_CHARS = 300
_DIARY_FILE = re.compile(r"^(\d{4})-(\d{2})-(\d{2})\.md$")
_DIARY_LINE = re.compile(r"^- (\d{2}):(\d{2}) \[([^\]\s]+)\] (\w+): (.*)$")


def briefing(index: Index, since: str, compact: bool = True) -> dict[str, Any]:
    """New and updated entries since `since`, and the diary lines written since then (newest first)."""
    moment = parse_since(since)
    rows = eq.changed_since(index.conn, to_ns(moment), moment.astimezone(dt.UTC).date().isoformat())
    new: list[tuple[dt.datetime, dict[str, Any]]] = []
    updated: list[tuple[dt.datetime, dict[str, Any]]] = []
    for row in rows:
        created = parse_moment(row["created"])
        changed = dt.datetime.fromtimestamp(row["mtime_ns"] / 1e9, dt.UTC)
        item = _briefing_item(index, row, created, changed, compact)
        if created is not None and created >= moment:
            new.append((created, item))
        elif changed >= moment:
            updated.append((changed, item))
    cap = COMPACT_ITEMS if compact else FULL_ITEMS
    diary = diary_lines(index, moment)
    line_cap = COMPACT_DIARY_LINES if compact else FULL_DIARY_LINES
    return {
        "since": iso_utc(moment),
        "until": iso_utc(dt.datetime.now(dt.UTC)),
        "counts": {"new": len(new), "updated": len(updated), "diary_lines": len(diary)},
        "new": [item for _, item in sorted(new, key=lambda p: p[0], reverse=True)[:cap]],
        "updated": [item for _, item in sorted(updated, key=lambda p: p[0], reverse=True)[:cap]],
        "diary": diary[:line_cap],
        "truncated": len(new) > cap or len(updated) > cap or len(diary) > line_cap,
    }


def _briefing_item(index: Index, row: Any, created: dt.datetime | None, changed: dt.datetime,
                   compact: bool) -> dict[str, Any]:
    item: dict[str, Any] = {
        "slug": row["slug"], "title": row["title"], "type": row["type"],
        "path": index.display_path(row["root"], row["path"]),
        "created": iso_utc(created) if created else None, "modified": iso_utc(changed),
    }
    if not compact:
        body = " ".join(row["body"].split())
        item.update(scope=row["scope"], project=row["project"], tags=json.loads(row["tags"]),
                    summary=body[:SUMMARY_CHARS] + ("…" if len(body) > SUMMARY_CHARS else ""))
    return item


def diary_lines(index: Index, moment: dt.datetime) -> list[dict[str, Any]]:
    """Parsed `- HH:MM [session] kind: text` lines from diary/YYYY-MM-DD.md files, newest first."""
    first_day = moment.astimezone().date()
    found: list[tuple[dt.datetime, dict[str, Any]]] = []
    for root in index.config.roots().values():
        folder = root / "diary"
        if not folder.is_dir():
            continue
        for path in folder.iterdir():
            day = _diary_day(path)
            if day is None or day < first_day:
                continue
            found.extend(_read_diary(path, day, moment))
    found.sort(key=lambda p: p[0], reverse=True)
    return [line for _, line in found]


def _diary_day(path: Path) -> dt.date | None:
    match = _DIARY_FILE.match(path.name)
    if not match:
        return None
    try:
        return dt.date(*(int(g) for g in match.groups()))
    except ValueError:
        return None


def _read_diary(path: Path, day: dt.date, moment: dt.datetime) -> list[tuple[dt.datetime, dict[str, Any]]]:
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return []
    out = []
    for line in text.splitlines():
        match = _DIARY_LINE.match(line)
        if not match:
            continue
        hour, minute, session, kind, rest = match.groups()
        if int(hour) > 23 or int(minute) > 59:
            continue
        when = dt.datetime(day.year, day.month, day.day, int(hour), int(minute)).astimezone()
        if when < moment.replace(second=0, microsecond=0):
            continue
        out.append((when, {"date": day.isoformat(), "time": f"{hour}:{minute}", "session": session,
                           "kind": kind, "text": rest}))
    return out

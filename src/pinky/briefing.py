"""What changed lately: the answer to "what happened since T?" at the start of a session.

New and updated entries (from `created` and the file mtime the indexer stored), plus the diary
lines the hooks appended. Read-only; the diary is read from disk because hooks append to it
without reindexing.
"""

from __future__ import annotations

import datetime as dt
import json
from typing import Any

from pinky.base.dates import iso_utc, parse_moment, parse_since, to_ns
from pinky.base.shown import shown
from pinky.capture.diary import read_diary
from pinky.hygiene.review import needs_review
from pinky.indexing.index import Index
from pinky.store import entries as store_entries

# A page holds at most this many of each list (new, updated, diary lines): the same for all three, so
# the next page starts at one offset for every list.
COMPACT_ITEMS = 60
FULL_ITEMS = 500
SUMMARY_CHARS = 300


def briefing(index: Index, since: str, compact: bool = True, offset: int = 0) -> dict[str, Any]:
    """New and updated entries since `since`, and the diary lines written since then (newest first);
    `offset` skips that many of each list (the next page), `truncated` says more follow."""
    moment = parse_since(since)
    rows = store_entries.changed_since(index.conn, to_ns(moment), moment.astimezone(dt.UTC).date().isoformat())
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
    return {
        "since": iso_utc(moment),
        "until": iso_utc(dt.datetime.now(dt.UTC)),
        "counts": {"new": len(new), "updated": len(updated), "diary_lines": len(diary)},
        "new": [item for _, item in sorted(new, key=lambda p: p[0], reverse=True)[offset:offset + cap]],
        "updated": [item for _, item in sorted(updated, key=lambda p: p[0], reverse=True)[offset:offset + cap]],
        "diary": diary[offset:offset + cap],
        "truncated": max(len(new), len(updated), len(diary)) > offset + cap,
        "needs_review": needs_review(index, 5 if compact else 50),
        "candidates": past_candidates(index, 5 if compact else 50),
    }


def past_candidates(index: Index, limit: int) -> list[dict[str, Any]]:
    """What `pinky-brain import-sessions` saw past sessions of this project learn, not saved nor dismissed yet:
    newest first, each with its evidence (pinky.capture.candidates)."""
    from pinky.capture.candidates import candidates_path, load_candidates

    config = index.config
    if config.save_dir is None:
        return []
    found = load_candidates(candidates_path(str(config.state_dir), str(config.save_dir)))
    return [{key: item[key] for key in ("id", "kind", "type", "evidence", "prompt", "when", "session")}
            for item in found[:limit]]


def _briefing_item(index: Index, row: Any, created: dt.datetime | None, changed: dt.datetime,
                   compact: bool) -> dict[str, Any]:
    item: dict[str, Any] = {
        "slug": row["slug"], "title": shown(row["title"]), "type": row["type"],
        "path": index.display_path(row["root"], row["path"]),
        "created": iso_utc(created) if created else None, "modified": iso_utc(changed),
    }
    if not compact:
        body = " ".join(row["body"].split())
        item.update(scope=row["scope"], project=row["project"], tags=json.loads(row["tags"]),
                    summary=body[:SUMMARY_CHARS] + ("…" if len(body) > SUMMARY_CHARS else ""))
    return item


def diary_lines(index: Index, moment: dt.datetime) -> list[dict[str, Any]]:
    """The diary lines of every root written since `moment`, newest first (ties keep file order)."""
    lines = [line for root in index.config.roots().values() for line in read_diary(root, since=moment)]
    lines.sort(key=lambda line: (line.day, line.time), reverse=True)
    return [{"date": line.date_text, "time": f"{line.time:%H:%M}", "session": line.session,
             "kind": line.kind, "text": line.text} for line in lines]

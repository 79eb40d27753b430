"""Review: confirming an entry still holds (`pinky verify`), what people and agents said about hits
(`pinky feedback`, brain_feedback), and pruning what nobody uses (`pinky prune`).

Feedback is telemetry kept in the index (like `usage`): `PINKY_TELEMETRY=0` turns it off, and a full
rebuild of the index forgets it (the markdown never depended on it). A `wrong` or `outdated` verdict
flags the entry for review in `pinky doctor` and the briefing until the note is edited or verified
after it.
"""

from __future__ import annotations

import datetime as dt
from typing import Any

from pinky import entries
from pinky.dates import now_utc
from pinky.entries import Entry
from pinky.index import Index
from pinky.staleness import age_days
from pinky.store import hygiene as hq


def verify(index: Index, slug: str) -> Entry:
    """Set the entry's `last_verified` to today: someone checked it still holds (it is no longer stale)."""
    current = entries.get(index, slug)
    return entries.update(index, current.slug, current.version, last_verified=now_utc().date().isoformat())


def needs_review(index: Index, limit: int = 10) -> dict[str, Any]:
    """What to check before relying on it: stale entries (past their type's threshold, longest unverified
    first) and entries flagged wrong or outdated since they last changed."""
    today = now_utc().date()
    cutoffs = {kind: (today - dt.timedelta(days=days)).isoformat()
               for kind, days in index.config.stale_days.items() if days is not None}
    count, rows = hq.stale_entries(index.conn, cutoffs, limit)
    stale = [{"slug": r["slug"], "title": r["title"], "type": r["type"],
              "path": index.display_path(r["root"], r["path"]),
              "age_days": age_days(r["last_verified"], r["created"], today)} for r in rows]
    flagged = [{"slug": r["slug"], "title": r["title"], "type": r["type"],
                "path": index.display_path(r["root"], r["path"]), "verdict": r["verdict"], "at": r["at"],
                "query": r["query"]} for r in hq.flagged_entries(index.conn, limit)]
    return {"stale_count": count, "stale": stale, "flagged": flagged}

"""Entries without a query: every entry, or those a filter keeps, newest first."""

from __future__ import annotations

import datetime as dt
import json
from typing import Any

from pinky.base.dates import iso_utc
from pinky.base.shown import shown
from pinky.base.staleness import age_days, is_stale
from pinky.errors import InvalidInput
from pinky.indexing.index import Index
from pinky.store import entries as store_entries
from pinky.store import retrieval

MAX_LIST = 10_000


def summaries(index: Index, limit: int) -> list[dict[str, Any]]:
    """Slug, title, type, scope and citable path of the newest `limit` entries."""
    return [{"slug": r["slug"], "title": shown(r["title"]), "type": r["type"], "scope": r["scope"],
             "path": index.display_path(r["root"], r["path"])}
            for r in store_entries.recent_entries(index.conn, limit)]


def list_entries(index: Index, filters: retrieval.Filters, limit: int = 50) -> list[dict[str, Any]]:
    """Every entry the filters keep, most recently changed first; no query, no ranking."""
    if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= MAX_LIST:
        raise InvalidInput(f"limit must be a whole number from 1 to {MAX_LIST:,}, got {limit!r}")
    today = dt.datetime.now(dt.UTC).date()
    return [{"slug": r["slug"], "title": shown(r["title"]), "type": r["type"], "scope": r["scope"],
             "project": r["project"], "tags": json.loads(r["tags"]), "path": index.display_path(r["root"], r["path"]),
             "created": r["created"], "last_verified": r["last_verified"],
             "modified": iso_utc(dt.datetime.fromtimestamp(r["mtime_ns"] / 1e9, dt.UTC)),
             "superseded_by": json.loads(r["meta"]).get("superseded_by"),
             "age_days": (age := age_days(r["last_verified"], r["created"], today)),
             "stale": is_stale(r["type"], age, index.config.stale_days)}
            for r in retrieval.filtered_entries(index.conn, filters, limit)]

"""Entries without a query: every entry, or those a filter keeps, newest first."""

from __future__ import annotations

from typing import Any

from pinky.index import Index
from pinky.store import entries as eq


def summaries(index: Index, limit: int) -> list[dict[str, Any]]:
    """Slug, title, type, scope and citable path of the newest `limit` entries."""
    return [{"slug": r["slug"], "title": r["title"], "type": r["type"], "scope": r["scope"],
             "path": index.display_path(r["root"], r["path"])}
            for r in eq.recent_entries(index.conn, limit)]

"""What a caller asks of search, list and export, as the store filters by it. The request types themselves
(`Selection`, `SearchRequest`) are declared with their fields' limits and descriptions in
`pinky.base.operations`, where the front ends derive their options and arguments from them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from pinky.base.dates import freshness, now_utc, valid_day
from pinky.base.operations import SearchRequest, Selection
from pinky.base.validate import normalise_tag, resolve_scope, validate_tags, validate_type
from pinky.store import retrieval

if TYPE_CHECKING:
    from pinky.indexing.index import Index

__all__ = ["SearchRequest", "Selection", "filters_for"]


def filters_for(index: Index, selection: Selection | None = None) -> retrieval.Filters:
    """The store's filters for a selection. By default only current entries (not superseded, not expired);
    `at` (a date) keeps what was valid then instead, `include_superseded` everything."""
    chosen = selection or Selection()
    day = None if chosen.at is None or chosen.at == "" else valid_day(chosen.at, "at")
    current = None if chosen.include_superseded or day else now_utc().date().isoformat()
    return retrieval.Filters(scope=resolve_scope(chosen.scope, chosen.project, index.config.project),
                             type=validate_type(chosen.type) if chosen.type else None,
                             tags=tuple(normalise_tag(t) for t in validate_tags(chosen.tags)),
                             fresh_since=freshness(chosen.since), at=day, current_on=current)

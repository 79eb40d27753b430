"""What a caller asks of search, list and export: one value, built once by each front end (`pinky search`,
`brain_search`, `KnowledgeBase.search`) and read by the core, instead of the same arguments re-declared at
every layer.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import KW_ONLY, dataclass
from typing import TYPE_CHECKING

from pinky.base.dates import freshness, now_utc, valid_day
from pinky.base.validate import normalise_tag, resolve_scope, validate_tags, validate_type
from pinky.store import retrieval

if TYPE_CHECKING:
    from pinky.indexing.index import Index


@dataclass(frozen=True, kw_only=True)
class Selection:
    """Which entries: a scope or project, a type, tags (all must match), freshness (`since`: an ISO date/time or
    a span like 30d), and which versions: the current ones (default), those valid `at` a day, or all of them
    (`include_superseded`)."""

    scope: str | None = None
    project: str | None = None
    type: str | None = None
    tags: Sequence[str] | None = None
    since: str | None = None
    at: str | None = None
    include_superseded: bool = False


@dataclass(frozen=True)
class SearchRequest(Selection):
    """One search. `mode`: hybrid, bm25 (keyword) or vector (semantic). `context_file`: the file being worked
    on; entries linked to it rank higher. `hypothetical`: a draft answer whose embedding joins the query's on
    the vector side (HyDE by the calling agent). `record_usage`: count the hits as retrieved (telemetry).
    `explain`: each hit carries `parts`, its score and rank on each side (`pinky.search.hybrid.explain_parts`)."""

    query: str
    _: KW_ONLY
    limit: int = 10
    mode: str = "hybrid"
    context_file: str | None = None
    hypothetical: str | None = None
    record_usage: bool = False
    explain: bool = False


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

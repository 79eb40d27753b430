"""brain_briefing and brain_list in one place: the tools, their output models and their text.

The core answers both in plain dicts (`KnowledgeBase.briefing`, `list_entries`); a listed entry starts with the
core's `EntryHead`, the rest of each model is declared here.
No `from __future__ import annotations`: the SDK and pydantic read these annotations at runtime.
"""

from typing import Annotated, Any

from mcp_types import CallToolResult
from pydantic import BaseModel, Field

from pinky.kb import EntryHead, Selection
from pinky.mcp.budget import Pages
from pinky.mcp.common import Format, ListOffset, Offset, ResultOut, State, result, run_core, tool
from pinky.mcp.declared import result_model, signature_from
from pinky.mcp.text import one_line


class BriefingItemOut(BaseModel):
    slug: str
    title: str
    type: str
    path: str
    created: str | None = None
    modified: str
    scope: str | None = None
    project: str | None = None
    tags: list[str] | None = None
    summary: str | None = None


class DiaryLineOut(BaseModel):
    date: str
    time: str
    session: str
    kind: str
    text: str


class BriefingOut(ResultOut):
    since: str
    until: str
    counts: dict[str, int]
    new: list[BriefingItemOut]
    updated: list[BriefingItemOut]
    diary: list[DiaryLineOut]
    truncated: bool = Field(description="True when more entries or diary lines follow this page (page.next_offset).")
    needs_review: dict[str, Any] = Field(default_factory=dict, description=(
        "stale (unverified past their type's threshold: check, then brain_update verified=true) and flagged "
        "(marked wrong or outdated with brain_feedback): fix or verify these before relying on them."))
    candidates: list[dict[str, Any]] = Field(default_factory=list, description=(
        "What past sessions learned (pinky-brain import-sessions), never saved: brain_save the ones worth a note."))


class ListedOut(result_model(EntryHead)):  # type: ignore[misc]  # slug, path, title, type, scope, project, tags
    created: str | None = None
    last_verified: str | None = None
    modified: str = Field(description="When the file last changed (UTC).")
    superseded_by: str | None = Field(None, description="Set when a newer entry replaced this one.")
    age_days: int | None = None
    stale: bool = False


class ListOut(ResultOut):
    count: int
    entries: list[ListedOut] = Field(description="Most recently changed first.")


@tool("read", "What changed lately")
async def brain_briefing(
    state: State,
    since: Annotated[str, Field(max_length=100, description="ISO date/time or a span back: 90m, 36h, 7d, 2w.")]
    = "24h",
    format: Annotated[Format, Field(description="full: adds summaries.")] = "compact",
    offset: Offset = 0,
) -> Annotated[CallToolResult, BriefingOut]:
    """Catch up at the start of a session: entries created or changed since a time, and the diary
    (asks, files touched, commits) since then."""
    out = BriefingOut(**await run_core(state.runtime, lambda kb: kb.briefing(since, compact=format == "compact",
                                                                             offset=offset)))
    return result(state, briefing_text, out, drop_none=("scope", "project", "tags", "summary"),
                  pages=Pages(("new", "updated", "diary"), offset, more=out.truncated, tool="brain_briefing"))


@tool("read", "List entries")
@signature_from(Selection)
async def brain_list(
    state: State,
    limit: Annotated[int, Field(ge=1, le=500)] = 50,
    offset: ListOffset = 0,
    **selection: Any,
) -> Annotated[CallToolResult, ListOut]:
    """List entries without a query, latest changes first (by type, tag or date). To find something,
    use brain_search.

    Signature rewritten by @signature_from: the SDK serves Selection's fields as keyword arguments.
    """
    found = (await run_core(state.runtime, lambda kb: kb.list_entries(limit=offset + limit, **selection)))[offset:]
    out = ListOut.model_validate({"count": len(found), "entries": found})
    return result(state, list_text, out, drop_none=("project", "created", "last_verified", "superseded_by"),
                  pages=Pages(("entries",), offset, tool="brain_list"))


def briefing_text(out: BriefingOut) -> str:
    lines = [f"Since {out.since}: {out.counts['new']} new, {out.counts['updated']} updated, "
             f"{out.counts['diary_lines']} diary lines."]
    for label, items in (("New", out.new), ("Updated", out.updated)):
        if items:
            lines.append(f"{label}:")
            lines += [f"- {i.title} [{i.type}] — {i.path} (slug: {i.slug})" for i in items]
    if out.diary:
        lines.append("Diary:")
        lines += [f"- {d.date} {d.time} [{d.session}] {d.kind}: {one_line(d.text, 200)}" for d in out.diary]
    review = out.needs_review
    if review.get("flagged"):
        lines.append("Flagged wrong or outdated (fix, or brain_update verified=true):")
        lines += [f"- {i['slug']}: {i['verdict']} since {i['at'][:10]}" for i in review["flagged"]]
    if review.get("stale"):
        lines.append(f"Needs re-verification ({review['stale_count']} stale; check, then brain_update verified=true):")
        lines += [f"- {i['slug']} ({i['age_days']} days)" for i in review["stale"]]
    if out.candidates:
        lines.append("Learned in past sessions, not saved (brain_save candidate=ID what is worth a note; "
                     "pinky-brain import-sessions --dismiss ID drops the rest):")
        lines += [f"- {c['id']} {c['when'][:10]} [{c['session']}] {c['kind']} (a {c['type']}?): "
                  f"{one_line(c['evidence'], 300)}" for c in out.candidates]
    return "\n".join(lines)


def list_text(out: ListOut) -> str:
    if not out.entries:
        return "No entries match. Drop a filter, or save knowledge with brain_save."
    lines = [f"{out.count} entr{'y' if out.count == 1 else 'ies'}, most recently changed first:"]
    lines += [f"- {e.modified[:10]} {e.slug} [{e.type}, {e.scope}] {one_line(e.title, 120)} — {e.path}"
              for e in out.entries]
    return "\n".join(lines)

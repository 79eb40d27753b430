"""The brain's MCP tools: module-level functions, each a thin adapter over KnowledgeBase.

Each tool takes the server's state (the shared Runtime and the tier) as its first parameter,
filled by the SDK from the server's lifespan (`Resolve(lifespan_state)`), so the tool can also
be called directly: `await brain_search(state, query="pool")`. The SDK reads the other
parameters for the input schema and the return annotation for the outputSchema; the docstring,
joined into one paragraph, is the description. `TOOL_TIERS` says which tier brings which tool.

Every tool answers with a readable text block and structuredContent (Claude Code shows the model
the structured part; other clients read the text). Core errors (PinkyError) are raised as
ToolError, so the result carries `isError: true` and a message that says what to fix.
No `from __future__ import annotations`: the SDK reads these signatures at runtime.
"""

import json
from dataclasses import replace
from typing import Annotated, Any, Literal

from mcp.server.mcpserver.exceptions import ResourceError, ToolError
from mcp_types import CallToolResult
from pydantic import Field

from pinky.base.operations import UpdateRequest
from pinky.base.secret_words import explain
from pinky.base.shown import shown_all
from pinky.kb import KnowledgeBase, SaveRequest, SearchRequest, Selection
from pinky.mcp import graph_tools as mcp_graph
from pinky.mcp import text as mcp_text
from pinky.mcp.budget import Pages
from pinky.mcp.common import (
    BodyOffset,
    ListOffset,
    Offset,
    RankOffset,
    Slug,
    State,
    run_core,
)
from pinky.mcp.common import ServerState as ServerState  # re-exported: the server and tests import it from here
from pinky.mcp.common import result as _result
from pinky.mcp.declared import takes
from pinky.mcp.models import (
    BriefingOut,
    DeleteOut,
    EntryMetaOut,
    EntryOut,
    HitOut,
    ListOut,
    ReindexOut,
    RelatedOut,
    SavedOut,
    SearchOut,
    SimilarOut,
    StatsOut,
    SyncOut,
)
from pinky.runtime.process import Runtime

Format = Literal["compact", "full"]


def _entry_meta(entry: Any) -> EntryMetaOut:
    fields = {k: getattr(entry, k) for k in EntryMetaOut.model_fields if k not in ("redactions", "page")}
    return EntryMetaOut(**fields, redactions=explain(entry.redacted))


# --- read tools ---------------------------------------------------------------------------------



@takes(SearchRequest)
async def brain_search(
    state: State,
    offset: RankOffset = 0,
    format: Annotated[Format, Field(description="full: whole bodies instead of snippets.")] = "compact",
    **fields: Any,
) -> Annotated[CallToolResult, SearchOut]:
    """Search the project's and global memory (gotchas, patterns, decisions, guides, notes, diary).
    Use it first: before debugging an error (paste it), changing unfamiliar code or a design choice. Cite
    a hit's path; check a stale hit before relying on it."""

    asked = SearchRequest(**fields)
    request = replace(asked, limit=min(100, offset + asked.limit), record_usage=True)

    def work(kb: KnowledgeBase) -> SearchOut:
        result = kb.search(request)
        found = result.hits[offset:]
        room = state.runtime.config.max_result_chars // 3  # whole bodies: once in the text, once structured
        bodies, truncated = ({}, False) if format != "full" else \
            mcp_text.full_bodies(lambda slug: kb.get(slug).body, [h.slug for h in found], room)
        hits = [HitOut(**hit.as_dict(), body=bodies.get(hit.slug)) for hit in found]
        return SearchOut(query=request.query, mode=result.mode, notice=result.notice, count=len(hits), hits=hits,
                         truncated=truncated)

    out = await run_core(state.runtime, work)
    return _result(state, mcp_text.search_text, out, drop_none=("body", "why", "superseded_by", "valid_until"),
                   pages=Pages(("hits",), offset, tool="brain_search"))


async def brain_get(state: State, slug: Slug, timeline: mcp_graph.WithTimeline = False,
                    offset: BodyOffset = 0) -> Annotated[CallToolResult, EntryOut]:
    """Read a whole entry by slug: body, metadata and the `version` that brain_update needs."""

    def work(kb: KnowledgeBase) -> Any:
        entry = kb.get(slug)
        kb.hygiene.opened(entry.slug)  # telemetry: a search hit read whole (pinky eval --from-usage)
        return entry, kb.graph.timeline(slug)["events"] if timeline else None

    entry, events = await run_core(state.runtime, work)
    out = EntryOut(**_entry_meta(entry).model_dump(), body=entry.body[offset:], meta=entry.meta, timeline=events)
    return _result(state, lambda shown: mcp_text.entry_text(shown, body=True) + mcp_graph.timeline_text(shown.timeline),
                   out, drop_none=("timeline",), pages=Pages(("body",), offset, tool="brain_get"))


async def brain_related(state: State, slug: Slug, depth: mcp_graph.Depth = 1, rel: mcp_graph.Rels = None,
                        at: mcp_graph.At = None, offset: Offset = 0) -> Annotated[CallToolResult, RelatedOut]:
    """An entry's links, backlinks and code files. Use it to explore around a hit, or to find the
    knowledge tied to a file."""
    found, more = await run_core(state.runtime, lambda kb: mcp_graph.related(kb, slug, depth, rel, at, offset))
    out = RelatedOut(**found)
    return _result(state, mcp_graph.related_text, out, drop_none=("graph",),
                   pages=Pages(mcp_graph.PAGED, offset, more=more, tool="brain_related"))


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
    return _result(state, mcp_text.briefing_text, out, drop_none=("scope", "project", "tags", "summary"),
                   pages=Pages(("new", "updated", "diary"), offset, more=out.truncated, tool="brain_briefing"))


@takes(Selection)
async def brain_list(
    state: State,
    limit: Annotated[int, Field(ge=1, le=500)] = 50,
    offset: ListOffset = 0,
    **selection: Any,
) -> Annotated[CallToolResult, ListOut]:
    """List entries without a query, latest changes first (by type, tag or date). To find something,
    use brain_search."""
    found = (await run_core(state.runtime, lambda kb: kb.list_entries(limit=offset + limit, **selection)))[offset:]
    out = ListOut.model_validate({"count": len(found), "entries": found})
    return _result(state, mcp_text.list_text, out, drop_none=("project", "created", "last_verified", "superseded_by"),
                   pages=Pages(("entries",), offset, tool="brain_list"))


async def brain_stats(state: State) -> Annotated[CallToolResult, StatsOut]:
    """Size and health of the index: entries, chunks, vectors (pending too), per type and scope,
    the embedder, the background catch-up."""

    def work(kb: KnowledgeBase) -> StatsOut:
        fields = {k: v for k, v in kb.stats().items() if k in StatsOut.model_fields}
        save_dir = str(kb.config.save_dir) if kb.config.save_dir is not None else None
        return StatsOut(**fields, save_dir=save_dir, global_dir=str(kb.config.global_dir),
                        tier=state.tier, background=dict(state.runtime.status))

    out = await run_core(state.runtime, work)
    return _result(state, mcp_text.stats_text, out)


# --- write tools --------------------------------------------------------------------------------


@takes(SaveRequest)
async def brain_save(state: State, **fields: Any) -> Annotated[CallToolResult, SavedOut]:
    """Save what a future session would otherwise rediscover: a non-obvious fix, a convention, a
    decision and why, a setup step. Searchable at once. Search first to avoid duplicates; brain_update
    changes an entry."""

    def work(kb: KnowledgeBase) -> Any:
        saved = kb.save(SaveRequest(**fields), embed=False, classify=True)
        return saved, kb.similar(saved.slug)

    entry, similar = await run_core(state.runtime, work)
    state.runtime.embed_soon()
    replaced = entry.meta.get("supersedes") or []
    out = SavedOut(**_entry_meta(entry).model_dump(), saved_to=mcp_text.saved_to(entry),
                   supersedes=replaced if isinstance(replaced, list) else [replaced],
                   similar=[SimilarOut(slug=h.slug, title=h.title, path=h.path, score=h.score) for h in similar],
                   **(entry.classification or {}))
    text = mcp_text.saved_text(entry, similar) + mcp_text.classified_text(entry.classification)
    text += "".join(f"\nSupersedes {slug} (it leaves default results)." for slug in out.supersedes)
    if fields.get("candidate"):
        text += f"\nCandidate {fields['candidate']} is settled: it leaves the past-session list."
    return _result(state, text, out)


@takes(UpdateRequest)
async def brain_update(state: State, **fields: Any) -> Annotated[CallToolResult, EntryMetaOut]:
    """Correct or refresh an entry (verified=true: you checked a stale one still holds). If it
    changed since the version you read, nothing is written: re-read it and reapply."""
    request = UpdateRequest(**fields)
    changes = request.changes()
    if all(value is None for value in changes.values()):
        raise ToolError("nothing to change: give at least one of title, body, tags, type, last_verified, verified, "
                        "questions")

    def work(kb: KnowledgeBase) -> Any:
        return kb.update(request.slug, request.expected_version or "", **changes)

    entry = await run_core(state.runtime, work)
    state.runtime.embed_soon()
    text = f"Updated {entry.slug} → {entry.path}; new version {entry.version}."
    if entry.redacted:
        text += "\n" + mcp_text.redacted_line(entry.redacted, written=True)
    return _result(state, text, _entry_meta(entry))


async def brain_delete(
    state: State,
    slug: Slug,
    reason: Annotated[str, Field(min_length=1, max_length=2000, description="Wrong, outdated, duplicate...")],
) -> Annotated[CallToolResult, DeleteOut]:
    """Archive a wrong, outdated or duplicate entry: it leaves search; the result says how to
    restore it."""

    def work(kb: KnowledgeBase) -> tuple[str, str, str]:
        resolved = kb.get(slug).slug
        archived = kb.delete(resolved, reason)
        return resolved, str(archived), kb.hygiene.restore_command(archived)

    resolved, archived, restore = await run_core(state.runtime, work)
    out = DeleteOut(slug=resolved, archived_to=archived, reason=reason, restore=restore)
    return _result(state, f"Archived {resolved} → {archived}. Undo with: {restore}", out)


# --- admin tools --------------------------------------------------------------------------------


async def brain_reindex(
    state: State,
    full: Annotated[bool, Field(description="Rebuild from scratch instead of catching up.")] = False,
) -> Annotated[CallToolResult, ReindexOut]:
    """Bring the index up to date with the markdown on disk (after edits by hand or a git pull);
    full=true rebuilds it from scratch. The server already catches up at start, so this is rarely needed."""
    report = await run_core(state.runtime, lambda kb: kb.reindex(full=full), exclusive=True)
    out = ReindexOut(**report.as_dict())
    return _result(state, mcp_text.reindex_text(out), out, pages=Pages(
        ("errors", "warnings"), narrower="`pinky-brain reindex` in a terminal lists every one."))


async def brain_sync(
    state: State,
    remote: Annotated[str | None, Field(description="Set the git remote (path, ssh or https URL).",
                                        max_length=2000)] = None,
) -> Annotated[CallToolResult, SyncOut]:
    """Synchronise the global brain (~/.pinky/brain) with its git remote: commit local notes, pull what
    other machines saved, push, and index what arrived. Entries edited on two machines are kept as
    `.conflict-…` copies and listed in `conflicts`."""
    from pinky.services.brain_sync import sync_global

    data = await run_core(state.runtime, lambda kb: sync_global(kb, remote), exclusive=True)
    out = SyncOut.model_validate({key: data.get(key) for key in SyncOut.model_fields})
    return _result(state, mcp_text.sync_text(out), out, pages=Pages(
        ("pulled_paths", "conflicts", "notes"), narrower="`pinky-brain sync` in a terminal lists every one."))


# --- resources (bound to the runtime by the server: a static resource cannot ask for the lifespan) ---


async def read_entries(runtime: Runtime) -> str:
    """Every indexed entry: slug, title, type, scope and path (at most 5,000, newest first)."""

    def work(kb: KnowledgeBase) -> list[dict[str, Any]]:
        return [{**item, "uri": f"pinky://entry/{item['slug']}"} for item in kb.entry_summaries(5000)]

    return json.dumps(shown_all(await run_core(runtime, work, error=ResourceError)), ensure_ascii=False)


async def read_entry(runtime: Runtime, slug: str) -> str:
    """One entry as markdown (frontmatter + body), e.g. pinky://entry/gotcha/pg-pool-timeout."""
    from pinky.text.markdown import render

    found = await run_core(runtime, lambda kb: kb.get(slug), error=ResourceError)
    return render(shown_all(found.meta), found.body)  # the body is shown redacted already

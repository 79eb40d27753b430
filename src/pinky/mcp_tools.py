"""The MCP surface of the brain: tools, prompts and resources, each a thin adapter over KnowledgeBase.

Every tool declares an outputSchema and answers with both a readable text block and
structuredContent (Claude Code shows the model the structured part; other clients read the text).
Core errors (PinkyError) become `isError: true` results whose message says what to fix.
No `from __future__ import annotations`: the SDK reads these signatures at runtime.
"""

import json
from collections.abc import Callable
from typing import Annotated, Any, Literal, TypeVar

import anyio
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ResourceError, ToolError
from mcp_types import CallToolRequestParams, CallToolResult, TextContent, ToolAnnotations
from pydantic import BaseModel, Field, ValidationError

from pinky import __version__
from pinky.errors import PinkyError
from pinky.kb import KnowledgeBase
from pinky.layout import ENTRY_TYPES
from pinky.mcp_models import (
    BriefingOut,
    DeleteOut,
    EntryMetaOut,
    EntryOut,
    HitOut,
    ReindexOut,
    RelatedOut,
    SavedOut,
    SearchOut,
    SimilarOut,
    StatsOut,
    SyncOut,
)
from pinky.mcp_server import SERVER_NAME, Brain
from pinky.validate import MAX_BODY_CHARS, MAX_QUERY_CHARS, MAX_TAGS, MAX_TITLE_CHARS

T = TypeVar("T")
EntryType = Literal[ENTRY_TYPES]  # type: ignore[valid-type]
Format = Literal["compact", "full"]
COMPACT_TEXT_BUDGET = 8_000
FULL_BODY_CHARS = 20_000
FULL_TEXT_BUDGET = 80_000

READ_TOOLS = ("brain_search", "brain_get", "brain_related", "brain_briefing", "brain_stats")
WRITE_TOOLS = ("brain_save", "brain_update", "brain_delete")
ADMIN_TOOLS = ("brain_reindex", "brain_sync")
TIER_TOOLS = {"read": READ_TOOLS, "write": READ_TOOLS + WRITE_TOOLS, "admin": READ_TOOLS + WRITE_TOOLS + ADMIN_TOOLS}

INSTRUCTIONS = (
    "pinky-brain is this project's long-term memory: gotchas, patterns, decisions, guides and notes "
    "kept as markdown. Search it (brain_search) before debugging an error, changing unfamiliar code "
    "or making a design choice; cite the `path` of what you use. Save (brain_save) what you learn "
    "that would save a future session time: a non-obvious fix, a convention, a decision and why."
)


# --- helpers ------------------------------------------------------------------------------------


def _result(text: str, model: BaseModel, *, drop_none: tuple[str, ...] = ()) -> CallToolResult:
    data = model.model_dump(mode="json")
    _drop_nones(data, drop_none)
    return CallToolResult(content=[TextContent(type="text", text=text)], structured_content=data)


def _drop_nones(data: Any, keys: tuple[str, ...]) -> None:
    if isinstance(data, dict):
        for key in keys:
            if key in data and data[key] is None:
                del data[key]
        for value in data.values():
            _drop_nones(value, keys)
    elif isinstance(data, list):
        for value in data:
            _drop_nones(value, keys)


async def _run(brain: Brain, fn: Callable[[KnowledgeBase], T], *, exclusive: bool = False,
               error: type[Exception] = ToolError) -> T:
    """Run a core call in a worker thread; turn core errors into messages the model can act on."""
    call = brain.call_exclusive if exclusive else brain.call
    try:
        return await anyio.to_thread.run_sync(call, fn)
    except PinkyError as exc:
        raise error(str(exc)) from exc
    except OSError as exc:
        where = f" ({exc.filename})" if exc.filename else ""
        raise error(f"file system error: {exc.strerror or exc}{where}") from exc


def _one_line(text: str, limit: int = 240) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def _entry_meta(entry: Any) -> EntryMetaOut:
    return EntryMetaOut(**{k: getattr(entry, k) for k in EntryMetaOut.model_fields})


def _entry_text(entry: Any, *, body: bool) -> str:
    lines = [f"{entry.title} [{entry.type}] — {entry.path}",
             f"slug: {entry.slug} · scope: {entry.scope} · version: {entry.version}"]
    if entry.tags:
        lines.append("tags: " + ", ".join(entry.tags))
    if entry.files:
        lines.append("files: " + ", ".join(entry.files))
    if entry.last_verified:
        lines.append(f"last verified: {entry.last_verified}")
    if body:
        lines += ["", entry.body.rstrip()]
    return "\n".join(lines)


def _search_text(out: SearchOut) -> str:
    if not out.hits:
        lines = [f'No entries match "{_one_line(out.query, 80)}".']
        if out.notice:
            lines.append(f"({out.notice})")
        lines.append("Try other words, drop filters, or save what you learn with brain_save.")
        return "\n".join(lines)
    lines = [f'{out.count} result(s) for "{_one_line(out.query, 80)}" ({out.mode}):']
    if out.notice:
        lines.append(f"({out.notice})")
    used = 0
    budget = FULL_TEXT_BUDGET if any(h.body is not None for h in out.hits) else COMPACT_TEXT_BUDGET
    for n, hit in enumerate(out.hits, 1):
        where = f"{hit.path}:{hit.line}" if hit.line else hit.path
        text = hit.body.strip() if hit.body is not None else _one_line(hit.snippet)
        block = f"{n}. {hit.title} [{hit.type}] — {where}  (slug: {hit.slug})\n   {text}"
        if used + len(block) > budget:
            lines.append(f"… {len(out.hits) - n + 1} more in structuredContent")
            break
        lines.append(block)
        used += len(block)
    return "\n".join(lines)


def _bodies(kb: KnowledgeBase, hits: list[Any]) -> tuple[dict[str, str], bool]:
    bodies: dict[str, str] = {}
    total, truncated = 0, False
    for hit in hits:
        try:
            body = kb.get(hit.slug).body
        except PinkyError:
            continue
        room = max(0, min(FULL_BODY_CHARS, FULL_TEXT_BUDGET - total))
        if len(body) > room:
            body, truncated = body[:room] + "\n…[truncated: read it whole with brain_get]", True
        bodies[hit.slug] = body
        total += len(body)
    return bodies, truncated


# --- tools --------------------------------------------------------------------------------------

Slug = Annotated[str, Field(min_length=1, max_length=500,
                            description="Entry slug from a search hit, e.g. 'gotcha/pg-pool-timeout'.")]
Tags = Annotated[list[str] | None, Field(max_length=MAX_TAGS, description=f"Tags, at most {MAX_TAGS}.")]

READ = ToolAnnotations(readOnlyHint=True, destructiveHint=False, idempotentHint=True, openWorldHint=False)


def _register_read_tools(app: MCPServer, brain: Brain) -> None:
    @app.tool(name="brain_search", title="Search the brain", annotations=READ, structured_output=True)
    async def brain_search(
        query: Annotated[str, Field(min_length=1, max_length=MAX_QUERY_CHARS, description=(
            f"What to look for: an error message, a topic, a question. At most {MAX_QUERY_CHARS:,} characters."))],
        limit: Annotated[int, Field(ge=1, le=100, description="Maximum results, 1-100.")] = 10,
        scope: Annotated[str | None, Field(description="Only 'global' or 'project:<name>' entries.")] = None,
        project: Annotated[str | None, Field(description="Only this project's entries (= scope 'project:<name>').")]
        = None,
        type: Annotated[EntryType | None, Field(description="Only entries of this type.")] = None,
        tags: Annotated[list[str] | None, Field(max_length=MAX_TAGS, description="Only entries with ALL these tags.")]
        = None,
        since: Annotated[str | None, Field(max_length=60, description=(
            "Only fresh entries: verified, created or changed since this ISO date/time or span (e.g. 30d)."))]
        = None,
        format: Annotated[Format, Field(description="compact: snippets (default); full: whole bodies.")] = "compact",
    ) -> Annotated[CallToolResult, SearchOut]:
        """Search the team's memory (gotchas, patterns, decisions, guides, notes, diary) with hybrid
        full-text + semantic ranking. Use it first: before debugging an error (paste the message),
        before changing unfamiliar code, before a design decision, and whenever asked what is known
        about something. Hits carry slug, path and line: cite the path; read a whole entry with
        brain_get, or pass format='full'. Records which entries were retrieved (usage telemetry)."""

        def work(kb: KnowledgeBase) -> SearchOut:
            result = kb.search(query, limit=limit, scope=scope, project=project, type=type, tags=tags,
                               since=since, record_usage=True)
            bodies, truncated = _bodies(kb, result.hits) if format == "full" else ({}, False)
            hits = [HitOut(**hit.as_dict(), body=bodies.get(hit.slug)) for hit in result.hits]
            return SearchOut(query=query, mode=result.mode, notice=result.notice, count=len(hits), hits=hits,
                             truncated=truncated)

        out = await _run(brain, work)
        return _result(_search_text(out), out, drop_none=("body",))

    @app.tool(name="brain_get", title="Read an entry", annotations=READ, structured_output=True)
    async def brain_get(slug: Slug) -> Annotated[CallToolResult, EntryOut]:
        """Read one whole entry by slug: body, metadata and `version`. Use it after brain_search when
        a snippet is not enough, and before brain_update (which needs the version)."""
        entry = await _run(brain, lambda kb: kb.get(slug))
        out = EntryOut(**_entry_meta(entry).model_dump(), body=entry.body, meta=entry.meta)
        return _result(_entry_text(entry, body=True), out)

    @app.tool(name="brain_related", title="Related entries and code", annotations=READ, structured_output=True)
    async def brain_related(slug: Slug) -> Annotated[CallToolResult, RelatedOut]:
        """What an entry is connected to: the entries it links to ([[slug]] or .md links), the entries
        linking to it (backlinks), and the code files it is about. Use it to explore around a hit
        before relying on it, or to find the knowledge attached to a file."""
        data = await _run(brain, lambda kb: kb.related(slug))
        out = RelatedOut(**data)
        lines = [f"{out.title} — {out.path} (slug: {out.slug})"]
        lines.append("links: " + (", ".join(lk.slug or f"{lk.target} (unresolved)" for lk in out.links) or "none"))
        lines.append("backlinks: " + (", ".join(b.slug for b in out.backlinks) or "none"))
        lines.append("code: " + (", ".join(c.file + (f":{c.line}" if c.line else "") for c in out.code) or "none"))
        return _result("\n".join(lines), out)

    @app.tool(name="brain_briefing", title="What changed lately", annotations=READ, structured_output=True)
    async def brain_briefing(
        since: Annotated[str, Field(max_length=100, description=(
            "ISO-8601 date or time (2026-11-20, 2026-11-20T09:00Z) or a span back: 90m, 36h, 7d, 2w."))] = "24h",
        format: Annotated[Format, Field(description="compact (default): titles and paths; full: adds summaries.")]
        = "compact",
    ) -> Annotated[CallToolResult, BriefingOut]:
        """Catch up at the start of a session: entries created or changed since a time, plus the
        diary lines (what was asked, files touched, commits) written since then, newest first."""
        data = await _run(brain, lambda kb: kb.briefing(since, compact=format == "compact"))
        out = BriefingOut(**data)
        return _result(_briefing_text(out), out, drop_none=("scope", "project", "tags", "summary"))

    @app.tool(name="brain_stats", title="Brain size and health", annotations=READ, structured_output=True)
    async def brain_stats() -> Annotated[CallToolResult, StatsOut]:
        """Size and health of the index: entries, chunks, vectors (and how many are still pending),
        entries per type and scope, the embedder, and the background catch-up state. No arguments."""

        def work(kb: KnowledgeBase) -> StatsOut:
            data = kb.stats()
            fields = {k: v for k, v in data.items() if k in StatsOut.model_fields}
            return StatsOut(**fields, save_dir=str(kb.config.save_dir), global_dir=str(kb.config.global_dir),
                            tier=brain.tier, background=dict(brain.status))

        out = await _run(brain, work)
        text = (f"{out.entries} entries, {out.chunks} chunks, {out.vectors} vectors "
                f"({out.pending_vectors} pending) · embedder {out.embedder} · index {out.db_path}")
        return _result(text, out)


def _briefing_text(out: BriefingOut) -> str:
    lines = [f"Since {out.since}: {out.counts['new']} new, {out.counts['updated']} updated, "
             f"{out.counts['diary_lines']} diary lines."]
    for label, items in (("New", out.new), ("Updated", out.updated)):
        if items:
            lines.append(f"{label}:")
            lines += [f"- {i.title} [{i.type}] — {i.path} (slug: {i.slug})" for i in items]
    if out.diary:
        lines.append("Diary:")
        lines += [f"- {d.date} {d.time} [{d.session}] {d.kind}: {_one_line(d.text, 200)}" for d in out.diary]
    if out.truncated:
        lines.append("(more in structuredContent or with format='full')")
    return "\n".join(lines)


def _register_write_tools(app: MCPServer, brain: Brain) -> None:
    @app.tool(name="brain_save", title="Save knowledge", structured_output=True, annotations=ToolAnnotations(
        readOnlyHint=False, destructiveHint=False, idempotentHint=False, openWorldHint=False))
    async def brain_save(
        title: Annotated[str, Field(min_length=1, max_length=MAX_TITLE_CHARS, description=(
            f"Short, specific title, one line, at most {MAX_TITLE_CHARS} characters."))],
        body: Annotated[str, Field(max_length=MAX_BODY_CHARS, description=(
            f"Markdown content, at most {MAX_BODY_CHARS:,} characters: the problem, the fix, why."))],
        type: Annotated[EntryType, Field(description=(
            "gotcha: a trap and its fix · pattern: how we do X · decision: a choice and why · "
            "guide: steps · diary: a log line · note: anything else."))] = "note",
        tags: Tags = None,
        project: Annotated[str | None, Field(description=(
            "Project the entry belongs to (scope project:<name>). Default: PINKY_PROJECT if set, else global."))]
        = None,
        scope: Annotated[str | None, Field(description="'global' to share across projects, or 'project:<name>'.")]
        = None,
        files: Annotated[list[str] | None, Field(max_length=MAX_TAGS, description=(
            "Code files (repo-relative paths) this knowledge is about."))] = None,
    ) -> Annotated[CallToolResult, SavedOut]:
        """Save new reusable knowledge as a markdown entry, indexed at once (the next brain_search
        finds it). Use it when you learned something a future session would otherwise rediscover:
        a non-obvious bug and its fix, a convention, a decision and its reasons, a setup step.
        Search first to avoid duplicates; to change an existing entry use brain_update."""

        def work(kb: KnowledgeBase) -> Any:
            target_scope, target_project = save_target(brain, scope, project)
            saved = kb.save(title, body, type=type, tags=tags, scope=target_scope, project=target_project,
                            files=files, embed=False)
            return saved, kb.similar(saved.slug)

        entry, similar = await _run(brain, work)
        brain.embed_soon()
        out = SavedOut(**_entry_meta(entry).model_dump(),
                       similar=[SimilarOut(slug=h.slug, title=h.title, path=h.path, score=h.score) for h in similar])
        text = (f"Saved {entry.slug} → {entry.path} (scope {entry.scope}, version {entry.version}).\n"
                f"Change it with brain_update(slug='{entry.slug}', expected_version='{entry.version}', ...).")
        if similar:
            text += ("\nNearly the same text already exists: " + "; ".join(f"{h.slug} ({h.score:.2f})" for h in similar)
                     + f". If this repeats one, update that entry instead and brain_delete {entry.slug}.")
        return _result(text, out)

    @app.tool(name="brain_update", title="Update an entry", structured_output=True, annotations=ToolAnnotations(
        readOnlyHint=False, destructiveHint=True, idempotentHint=False, openWorldHint=False))
    async def brain_update(
        slug: Slug,
        expected_version: Annotated[str, Field(min_length=1, max_length=100, description=(
            "The `version` from brain_get/brain_save; if the entry changed since, nothing is written."))],
        title: Annotated[str | None, Field(max_length=MAX_TITLE_CHARS, description="New title.")] = None,
        body: Annotated[str | None, Field(max_length=MAX_BODY_CHARS, description="New body (replaces it whole).")]
        = None,
        tags: Tags = None,
        type: Annotated[EntryType | None, Field(description="New type.")] = None,
        last_verified: Annotated[str | None, Field(max_length=40, description=(
            "Date you confirmed it still holds, e.g. 2026-11-25."))] = None,
    ) -> Annotated[CallToolResult, EntryMetaOut]:
        """Correct or refresh an existing entry: body, title, tags, type or last_verified. Optimistic
        concurrency: pass the `version` you read; if someone changed the entry since, you get a
        Conflict error and must re-read (brain_get) and reapply. Never overwrites silently."""
        if all(v is None for v in (title, body, tags, type, last_verified)):
            raise ToolError("nothing to change: give at least one of title, body, tags, type, last_verified")

        def work(kb: KnowledgeBase) -> Any:
            return kb.update(slug, expected_version, title=title, body=body, tags=tags, type=type,
                             last_verified=last_verified)

        entry = await _run(brain, work)
        brain.embed_soon()
        return _result(f"Updated {entry.slug} → {entry.path}; new version {entry.version}.", _entry_meta(entry))

    @app.tool(name="brain_delete", title="Archive an entry", structured_output=True, annotations=ToolAnnotations(
        readOnlyHint=False, destructiveHint=True, idempotentHint=False, openWorldHint=False))
    async def brain_delete(
        slug: Slug,
        reason: Annotated[str, Field(min_length=1, max_length=2000, description="Why: wrong, outdated, duplicate…")],
    ) -> Annotated[CallToolResult, DeleteOut]:
        """Remove a wrong, outdated or duplicate entry from search. Soft delete: the file moves to an
        archive folder with the reason recorded, and `pinky restore SLUG` brings it back."""

        def work(kb: KnowledgeBase) -> tuple[str, str]:
            resolved = kb.get(slug).slug
            return resolved, str(kb.delete(resolved, reason))

        resolved, archived = await _run(brain, work)
        out = DeleteOut(slug=resolved, archived_to=archived, reason=reason, restore=f"pinky restore {resolved}")
        return _result(f"Archived {resolved} → {archived}. Undo with: pinky restore {resolved}", out)


def save_target(brain: Brain, scope: str | None, project: str | None) -> tuple[str, str | None]:
    """The contract's rule: `project` wins; else scope; else PINKY_PROJECT when set; else global."""
    if project is not None:
        return f"project:{project}", project
    if scope:
        return scope, None
    if brain.config.project_explicit:
        return f"project:{brain.config.project}", None
    return "global", None


def _register_admin_tools(app: MCPServer, brain: Brain) -> None:
    @app.tool(name="brain_reindex", title="Reindex the brain", structured_output=True, annotations=ToolAnnotations(
        readOnlyHint=False, destructiveHint=False, idempotentHint=True, openWorldHint=False))
    async def brain_reindex(
        full: Annotated[bool, Field(description="Rebuild the index from scratch instead of catching up.")] = False,
    ) -> Annotated[CallToolResult, ReindexOut]:
        """Bring the index up to date with the markdown on disk (after edits by hand or a git pull);
        full=true rebuilds it from scratch. The server already catches up at start, so this is rarely needed."""
        report = await _run(brain, lambda kb: kb.reindex(full=full), exclusive=True)
        out = ReindexOut(**report.as_dict())
        text = (f"Reindexed in {out.seconds}s: {out.added} added, {out.updated} updated, {out.removed} removed, "
                f"{out.unchanged} unchanged, {out.chunks_embedded} chunks embedded.")
        if out.errors:
            text += "\nErrors:\n" + "\n".join(out.errors[:20])
        return _result(text, out)

    @app.tool(name="brain_sync", title="Sync the global brain", structured_output=True, annotations=ToolAnnotations(
        readOnlyHint=False, destructiveHint=False, idempotentHint=False, openWorldHint=True))
    async def brain_sync(
        remote: Annotated[str | None, Field(description="Set or change the git remote (a path, ssh or https URL). "
                                                        "Omit to use the one recorded by earlier syncs.",
                                            max_length=2000)] = None,
    ) -> Annotated[CallToolResult, SyncOut]:
        """Synchronise the global brain (~/.pinky/brain) with its git remote: commit local notes, pull what
        other machines saved, push, and index what arrived. Entries edited on two machines are kept as
        `.conflict-…` copies and listed in `conflicts`."""
        from pinky.brain_sync import sync_global

        data = await _run(brain, lambda kb: sync_global(kb, remote), exclusive=True)
        out = SyncOut(**{key: data.get(key) for key in SyncOut.model_fields})
        parts = [f"Synced {out.brain} with {out.remote or 'no remote'}:",
                 f"committed: {out.commit_message}" if out.committed else "nothing new to commit",
                 f"pulled {len(out.pulled_paths)} files, reindexed {out.reindexed}",
                 "pushed" if out.pushed else "not pushed"]
        parts += [f"CONFLICT: {path} (both versions kept; compare and delete the copy)" for path in out.conflicts]
        parts += out.notes
        return _result("\n".join(parts), out)


# --- prompts and resources ------------------------------------------------------------------------


def _register_prompts(app: MCPServer) -> None:
    @app.prompt(name="save_knowledge", title="When and how to save knowledge")
    def save_knowledge() -> str:
        """Guidance for deciding what is worth saving to the brain and how to write it."""
        return (
            "Review what we just did and decide whether something is worth remembering for a future session.\n"
            "Save (brain_save) only what would otherwise be rediscovered the hard way: a non-obvious bug and its "
            "fix (type gotcha), how this codebase does something (pattern), a choice and its reasons (decision), "
            "steps to set something up (guide). Do not save what the code or git log already says.\n"
            "First brain_search for it: if an entry exists, brain_get it and brain_update it with its version "
            "instead of saving a duplicate.\n"
            "Write a specific one-line title (the symptom or the rule), a body that states the problem, the fix "
            "and why, with the exact error message if any, 2-5 lowercase tags, and `files` for the code involved."
        )

    @app.prompt(name="session_briefing", title="Catch up on recent work")
    def session_briefing(since: str = "24h") -> str:
        """Summarise what changed in the brain and the diary since a time (default: the last 24 hours)."""
        return (
            f"Call brain_briefing with since='{since}'. Summarise in a few bullets what was learned (new and "
            "updated entries, with their paths) and what was worked on (the diary). Then, for the task at hand, "
            "brain_search the two or three most relevant topics and mention any gotcha that applies."
        )

    @app.prompt(name="research_topic", title="Research a topic across the brain")
    def research_topic(topic: str) -> str:
        """Gather everything the brain knows about a topic, with citations and gaps."""
        return (
            f"Research what the brain knows about: {topic}\n"
            "1. brain_search it with two or three phrasings (keywords, the likely error message, a question).\n"
            "2. brain_get the most relevant hits and brain_related them to follow links and backlinks.\n"
            "3. Answer with what is known, citing each entry's path; point out contradictions and entries "
            "whose last_verified is old.\n"
            "4. List what is missing, and offer to save new findings with brain_save."
        )


def _register_resources(app: MCPServer, brain: Brain) -> None:
    @app.resource("pinky://entries", name="entries", title="All entries", mime_type="application/json")
    async def entries() -> str:
        """Every indexed entry: slug, title, type, scope and path (at most 5,000, newest first)."""

        def work(kb: KnowledgeBase) -> list[dict[str, Any]]:
            return [{**item, "uri": f"pinky://entry/{item['slug']}"} for item in kb.entry_summaries(5000)]

        return json.dumps(await _run(brain, work, error=ResourceError), ensure_ascii=False)

    @app.resource("pinky://entry/{+slug}", name="entry", title="One entry", mime_type="text/markdown")
    async def entry(slug: str) -> str:
        """One entry as markdown (frontmatter + body), e.g. pinky://entry/gotcha/pg-pool-timeout."""
        from pinky.markdown import render

        found = await _run(brain, lambda kb: kb.get(slug), error=ResourceError)
        return render(found.meta, found.body)


# --- assembly -----------------------------------------------------------------------------------


def build_server(brain: Brain) -> MCPServer:
    """The MCPServer for `brain.tier`: read tools always, write tools from 'write', reindex at 'admin'."""
    app: MCPServer = MCPServer(SERVER_NAME, title="pinky-brain", version=__version__, instructions=INSTRUCTIONS,
                               log_level="WARNING")
    _register_read_tools(app, brain)
    if brain.tier in ("write", "admin"):
        _register_write_tools(app, brain)
    if brain.tier == "admin":
        _register_admin_tools(app, brain)
    _register_prompts(app)
    _register_resources(app, brain)
    _install_call_handler(app, brain)
    for tool in app._tool_manager.list_tools():  # noqa: SLF001 - docstrings -> one-paragraph descriptions
        tool.description = " ".join((tool.description or "").split())
    return app


def _install_call_handler(app: MCPServer, brain: Brain) -> None:
    """tools/call with messages that say what to fix (unknown tool, tier, bad arguments)."""
    manager = app._tool_manager  # noqa: SLF001 - no public lookup of a tool's argument model
    original = app._handle_call_tool  # noqa: SLF001

    async def call_tool(ctx: Any, params: CallToolRequestParams) -> Any:
        tool = manager.get_tool(params.name)
        if tool is None:
            return _error(_unknown_tool_message(params.name, brain.tier, [t.name for t in manager.list_tools()]))
        try:
            tool.fn_metadata.validate_arguments(params.arguments or {})
        except ValidationError as exc:
            return _error(f"invalid arguments for {params.name}: {_explain(exc)}. Fix them and call again.")
        return await original(ctx, params)

    app._lowlevel_server.add_request_handler("tools/call", CallToolRequestParams, call_tool)  # noqa: SLF001


def _error(message: str) -> CallToolResult:
    return CallToolResult(content=[TextContent(type="text", text=message)], is_error=True)


def _unknown_tool_message(name: str, tier: str, available: list[str]) -> str:
    for needed, names in (("write", WRITE_TOOLS), ("admin", ADMIN_TOOLS)):
        if name in names:
            return (f"{name} is not available: this server runs with PINKY_TIER={tier}; "
                    f"it needs PINKY_TIER={needed} or higher")
    return f"unknown tool {name[:100]!r}; available tools: {', '.join(available)}"


def _explain(exc: ValidationError) -> str:
    parts = []
    for err in exc.errors()[:5]:
        where = ".".join(str(p) for p in err["loc"]) or "arguments"
        got = err.get("input")
        shown = "" if err["type"] == "missing" or isinstance(got, dict) else f" (got {_short_repr(got)})"
        parts.append(f"{where}: {err['msg']}{shown}")
    return "; ".join(parts)


def _short_repr(value: Any) -> str:
    if isinstance(value, str) and len(value) > 40:
        return f"a string of {len(value):,} characters"
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."

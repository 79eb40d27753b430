"""MCP tools that keep the brain true, each in one place with its output model and its text: tags, gaps,
contradictions, feedback, export and import.

Thin adapters over `KnowledgeBase.hygiene` (documentation/HYGIENE.md says what each mechanism does), which
answers in plain dicts: the output models are declared here, but a difference's, which is the core's
`Difference`. No `from __future__ import annotations`: the SDK and pydantic read these annotations at runtime.
"""

import json
from pathlib import Path
from typing import Annotated, Any, Literal

import anyio
from mcp.server.mcpserver.exceptions import ToolError
from mcp_types import CallToolResult
from pydantic import BaseModel, Field

from pinky.base.fileio import create_new
from pinky.base.locations import ENV_MAX_RESULT_CHARS
from pinky.base.operations import EXPORT_SKIPS, Selection
from pinky.base.shown import shown_all
from pinky.hygiene.contradictions import MAX_CHECK_CHARS
from pinky.hygiene.differences import Difference
from pinky.kb import KnowledgeBase
from pinky.mcp.budget import NOTE_ROOM, Pages, size
from pinky.mcp.common import Offset, ResultOut, Slug, State, result, run_core, tool, writes
from pinky.mcp.declared import result_model, signature_from


class TagOut(BaseModel):
    tag: str
    count: int


class TagsOut(ResultOut):
    count: int
    tags: list[TagOut]


class GapOut(BaseModel):
    query: str | None = Field(default=None, description="The search's text (kept only with PINKY_LOG_QUERIES=1).")
    query_hash: str
    count: int = Field(description="How many searches asked it and found nothing good.")
    best_score: float | None = None
    first_seen: str
    last_seen: str
    closed_by: str | None = Field(default=None, description="The entry whose save answered it.")
    closed_at: str | None = None


class GapsOut(ResultOut):
    count: int
    gaps: list[GapOut]


class DifferenceOut(result_model(Difference)):  # type: ignore[misc]  # kind, a, b, context_a, context_b
    pass


class PairOut(BaseModel):
    a: str = Field(description="Slug of the first entry.")
    b: str
    a_path: str
    b_path: str
    reason: str = Field(description="Why they were compared: 'similar (0.93)', or the same key or subject.")
    differences: list[DifferenceOut]


class CheckOut(ResultOut):
    checked: int
    count: int
    pairs: list[PairOut]
    skipped: int = Field(0, description=f"Pairs not compared: one check compares {MAX_CHECK_CHARS:,} characters.")
    notice: str | None = None


class FeedbackOut(ResultOut):
    slug: str
    verdict: str
    recorded: bool = Field(description="False when telemetry is off (PINKY_TELEMETRY=0).")
    flagged: bool = Field(description="True for wrong/outdated: listed for review until the entry is fixed.")
    query: str | None = Field(default=None, description="The search the verdict is recorded against.")


class ExportOut(ResultOut):
    count: int
    file: str | None = Field(default=None, description="Where the JSON lines were written (when `file` was given).")
    jsonl: str | None = Field(default=None, description=(
        "The JSON lines themselves (when no `file` was given), credentials hidden as in every result; "
        "a `file` gets every note's exact text; a larger export needs `file`."))


class ImportOut(ResultOut):
    imported: list[str] = Field(description="Slugs of the notes written.")
    renamed: list[dict[str, str]] = Field(description=(
        "Notes written under another name: slug, new_slug, why (the path was taken, or was not one line)."))
    duplicates: list[dict[str, str]] = Field(description="Notes skipped: the same text is already in the brain.")
    redacted: list[dict[str, Any]] = Field(description="Always empty: an import never rewrites a note (see secrets).")
    secrets: list[dict[str, Any]] = Field(default_factory=list, description=(
        "Notes written as they are that hold a credential, with its kinds: hidden on display, held back by sync."))
    rescoped: list[dict[str, str]] = Field(description="Project notes now in this project's scope (another name).")
    errors: list[str] = Field(description="Lines refused, each as 'line N: why'; the others were imported.")


@tool("read", "Tag vocabulary")
async def brain_tags(state: State, offset: Offset = 0) -> Annotated[CallToolResult, TagsOut]:
    """Every tag with its count, most used first: reuse one when tagging instead of inventing a
    synonym."""
    found = await run_core(state.runtime, lambda kb: kb.hygiene.tags())
    out = TagsOut(count=len(found), tags=[TagOut(**item) for item in found[offset:]])
    return result(state, _tags_text, out, pages=Pages(("tags",), offset, tool="brain_tags"))


def _tags_text(out: TagsOut) -> str:
    return "\n".join(f"{item.count:>4}  {item.tag}" for item in out.tags) or "No tags yet."


@tool("read", "Knowledge gaps")
async def brain_gaps(
    state: State,
    include_closed: Annotated[bool, Field(description="Also gaps a later save answered.")] = False,
    limit: Annotated[int, Field(ge=1, le=1000)] = 50,
    offset: Offset = 0,
) -> Annotated[CallToolResult, GapsOut]:
    """What searches keep asking and the brain lacks, most frequent first. Once you know an answer,
    brain_save it (that closes the gap)."""
    found = (await run_core(state.runtime, lambda kb: kb.hygiene.gaps(include_closed=include_closed,
                                                                      limit=offset + limit)))[offset:]
    out = GapsOut(count=len(found), gaps=[GapOut(**gap) for gap in found])
    return result(state, _gaps_text, out, pages=Pages(("gaps",), offset, tool="brain_gaps"))


def _gaps_text(out: GapsOut) -> str:
    lines = [f"{g.count}x {g.query or '#' + g.query_hash}" + (f" (closed by {g.closed_by})" if g.closed_by else "")
             for g in out.gaps]
    return "\n".join(lines) or "No knowledge gaps recorded."


@tool("read", "Find contradictions")
async def brain_check(
    state: State,
    slug: Annotated[str | None, Field(max_length=500, description="Only pairs with this entry.")] = None,
    offset: Offset = 0,
) -> Annotated[CallToolResult, CheckOut]:
    """Entries that may contradict each other (a number, version, port, flag or negation differs).
    Use it after saving a fact or when two hits disagree."""
    pending = await run_core(state.runtime, lambda kb: kb.hygiene.pairs_to_compare(slug))
    done = await anyio.to_thread.run_sync(pending.compare)  # without the knowledge base: other calls go on
    out = CheckOut.model_validate({**done, "pairs": done["pairs"][offset:]})
    return result(state, _check_text, out, pages=Pages(("pairs",), offset, tool="brain_check"))


def _check_text(out: CheckOut) -> str:
    lines = [f"{out.count} possible contradictions among {out.checked} entries."]
    for pair in out.pairs:
        spans = "; ".join(f"{d.kind}: {d.a or '∅'} vs {d.b or '∅'}" for d in pair.differences)
        lines.append(f"- {pair.a} vs {pair.b} ({pair.reason}): {spans}")
    if out.notice:
        lines.append(f"({out.notice})")
    return "\n".join(lines)


@tool("write", "Rate a search hit", writes(destructive=False))
async def brain_feedback(
    state: State,
    slug: Slug,
    verdict: Annotated[Literal["useful", "wrong", "outdated"], Field(description=(
        "outdated: true once, not any more."))],
    query: Annotated[str | None, Field(max_length=2000, description=(
        "Default: the last search that returned it."))] = None,
) -> Annotated[CallToolResult, FeedbackOut]:
    """Rate a hit you relied on (useful) or found wrong or outdated (that flags it for review;
    also fix it with brain_update)."""
    done = await run_core(state.runtime, lambda kb: kb.hygiene.feedback(slug, verdict, query))
    out = FeedbackOut.model_validate({key: done.get(key) for key in FeedbackOut.model_fields})
    text = (f"Recorded {verdict} for {out.slug}." if out.recorded else f"Not recorded: {done.get('notice')}")
    if out.flagged:
        text += " Flagged for review: fix it with brain_update (or save the current fact) when you can."
    return result(state, text, out)


# --- admin: export and import ---------------------------------------------------------------------

@tool("admin", "Export the brain", writes(destructive=False, idempotent=True))
@signature_from(Selection, skip=EXPORT_SKIPS)
async def brain_export(
    state: State,
    file: Annotated[str | None, Field(max_length=4096, description=(
        "Write to this new absolute .jsonl path instead of returning the lines."))] = None,
    **selection: Any,
) -> Annotated[CallToolResult, ExportOut]:
    """Export the brain (or what the filters keep) as JSON lines, one note a line, for a backup or to
    move knowledge to another brain with brain_import.

    Signature rewritten by @signature_from: the SDK serves Selection's fields (but EXPORT_SKIPS) as keyword
    arguments.
    """

    def work(kb: KnowledgeBase) -> list[dict[str, Any]]:
        kb.reindex(embed=False)
        return kb.hygiene.export(Selection(**selection))

    records = await run_core(state.runtime, work)
    text = "".join(json.dumps(record, ensure_ascii=False) + "\n" for record in records)
    if file is None:
        shown = "".join(json.dumps(shown_all(record), ensure_ascii=False) + "\n" for record in records)
        out = ExportOut(count=len(records), jsonl=shown)  # for the model: secrets hidden (a file keeps them)
        said = f"Exported {len(records)} notes (in structuredContent.jsonl)."
        if size(said, out.model_dump(mode="json")) > state.runtime.config.max_result_chars - NOTE_ROOM:
            raise ToolError(f"the export is {len(text):,} characters, over the result limit of "
                            f"{state.runtime.config.max_result_chars:,} ({ENV_MAX_RESULT_CHARS}); pass `file` to "
                            "write it to a file")
        return result(state, said, out)
    target = Path(file).expanduser()
    if not target.is_absolute() or target.suffix != ".jsonl":
        raise ToolError(f"file must be an absolute path ending in .jsonl, got {file!r}")
    if not target.parent.is_dir():  # never a folder the agent made up: create_new would make it
        raise ToolError(f"{target.parent} is not a folder: brain_export writes into an existing one")
    if not await anyio.to_thread.run_sync(lambda: create_new(target, text)):
        raise ToolError(f"{target} exists: brain_export never overwrites a file; choose a new name")
    out = ExportOut(count=len(records), file=file)
    return result(state, f"Exported {len(records)} notes to {file}.", out)


@tool("admin", "Import notes", writes(destructive=False))
async def brain_import(
    state: State,
    file: Annotated[str, Field(min_length=1, max_length=4096, description="A pinky-brain export / brain_export file.")],
    root: Annotated[Literal["project", "global"] | None, Field(description=(
        "Put every note here instead of where it came from."))] = None,
) -> Annotated[CallToolResult, ImportOut]:
    """Import notes from an export file and index them. Never overwrites: the same text is skipped, a
    taken path gets a new name; bad records are refused by line (`errors`), the rest imported."""
    report = await run_core(state.runtime, lambda kb: kb.hygiene.import_file(file, root=root, embed=False),
                            exclusive=True)
    state.runtime.embed_soon()
    out = ImportOut(**report)
    text = (f"Imported {len(out.imported)} notes; {len(out.duplicates)} already there, {len(out.renamed)} renamed, "
            f"{len(out.errors)} refused.")
    text += "".join(f"\n{item['slug']} -> {item['new_slug']} ({item['why']})" for item in out.renamed)
    text += "".join(f"\nrefused: {line}" for line in out.errors[:20])
    return result(state, text, out, pages=Pages(("errors", "imported", "duplicates", "renamed", "redacted", "rescoped"),
                                                narrower="`pinky-brain import FILE --json` prints the whole report."))

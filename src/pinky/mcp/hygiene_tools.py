"""MCP tools that keep the brain true: tags, feedback, gaps, contradictions, export and import.

Thin adapters over `KnowledgeBase.hygiene`, registered in `pinky.mcp.tiers.TOOL_TIERS` like the others
(documentation/HYGIENE.md says what each mechanism does). No `from __future__ import annotations`:
the SDK reads these signatures at runtime.
"""

import json
from pathlib import Path
from typing import Annotated, Any, Literal

import anyio
from mcp.server.mcpserver.exceptions import ToolError
from mcp_types import CallToolResult
from pydantic import Field

from pinky.base.fileio import create_new
from pinky.base.locations import ENV_MAX_RESULT_CHARS
from pinky.base.operations import EXPORT_SKIPS, Selection
from pinky.base.shown import shown_all
from pinky.kb import KnowledgeBase
from pinky.mcp.budget import NOTE_ROOM, Pages, size
from pinky.mcp.common import Offset, Slug, State, result, run_core
from pinky.mcp.declared import takes
from pinky.mcp.models import (
    CheckOut,
    ExportOut,
    FeedbackOut,
    GapOut,
    GapsOut,
    ImportOut,
    TagOut,
    TagsOut,
)


async def brain_tags(state: State, offset: Offset = 0) -> Annotated[CallToolResult, TagsOut]:
    """Every tag with its count, most used first: reuse one when tagging instead of inventing a
    synonym."""
    found = await run_core(state.runtime, lambda kb: kb.hygiene.tags())
    out = TagsOut(count=len(found), tags=[TagOut(**item) for item in found[offset:]])
    return result(state, _tags_text, out, pages=Pages(("tags",), offset, tool="brain_tags"))


def _tags_text(out: TagsOut) -> str:
    return "\n".join(f"{item.count:>4}  {item.tag}" for item in out.tags) or "No tags yet."


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

@takes(Selection, skip=EXPORT_SKIPS)
async def brain_export(
    state: State,
    file: Annotated[str | None, Field(max_length=4096, description=(
        "Write to this new absolute .jsonl path instead of returning the lines."))] = None,
    **selection: Any,
) -> Annotated[CallToolResult, ExportOut]:
    """Export the brain (or what the filters keep) as JSON lines, one note a line, for a backup or to
    move knowledge to another brain with brain_import."""

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

"""brain_search in one place: the tool, its output model (the core's `SearchResult` and `Hit`, with what the
tool adds) and its text.

No `from __future__ import annotations`: the SDK and pydantic read these annotations at runtime.
"""

from collections.abc import Callable
from dataclasses import replace
from typing import Annotated, Any

from mcp_types import CallToolResult
from pydantic import Field

from pinky.errors import PinkyError
from pinky.kb import Hit, KnowledgeBase, SearchRequest, SearchResult
from pinky.mcp.budget import Pages
from pinky.mcp.common import Format, RankOffset, ResultOut, State, result, run_core, tool
from pinky.mcp.declared import result_model, signature_from
from pinky.mcp.text import one_line

COMPACT_TEXT_BUDGET = 8_000
FULL_TEXT_BUDGET = 80_000
FULL_BODY_CHARS = 20_000  # one hit's body in brain_search format='full'


class HitOut(result_model(Hit, skip=("parts",))):  # type: ignore[misc]  # a search hit's fields, from Hit
    body: str | None = Field(None, description="The whole entry (format='full' only).")


class SearchOut(result_model(SearchResult, skip=("hits",)), ResultOut):  # type: ignore[misc]  # mode, notice
    query: str
    count: int
    hits: list[HitOut]
    truncated: bool = Field(False, description="True when bodies were cut to fit the size budget.")


@tool("read", "Search the brain")
@signature_from(SearchRequest)
async def brain_search(
    state: State,
    offset: RankOffset = 0,
    format: Annotated[Format, Field(description="full: whole bodies instead of snippets.")] = "compact",
    **fields: Any,
) -> Annotated[CallToolResult, SearchOut]:
    """Search the project's and global memory (gotchas, patterns, decisions, guides, notes, diary).
    Use it first: before debugging an error (paste it), changing unfamiliar code or a design choice. Cite
    a hit's path; check a stale hit before relying on it.

    Signature rewritten by @signature_from: the SDK serves SearchRequest's fields as keyword arguments.
    """

    asked = SearchRequest(**fields)
    request = replace(asked, limit=min(100, offset + asked.limit), record_usage=True)

    def work(kb: KnowledgeBase) -> SearchOut:
        found_all = kb.search(request)
        found = found_all.hits[offset:]
        room = state.runtime.config.max_result_chars // 3  # whole bodies: once in the text, once structured
        bodies, truncated = ({}, False) if format != "full" else \
            full_bodies(lambda slug: kb.get(slug).body, [h.slug for h in found], room)
        hits = [HitOut(**hit.as_dict(), body=bodies.get(hit.slug)) for hit in found]
        return SearchOut(query=request.query, mode=found_all.mode, notice=found_all.notice, count=len(hits),
                         hits=hits, truncated=truncated)

    out = await run_core(state.runtime, work)
    return result(state, search_text, out, drop_none=("body", "why", "superseded_by", "valid_until"),
                  pages=Pages(("hits",), offset, tool="brain_search"))


def full_bodies(body_of: Callable[[str], str], slugs: list[str], budget: int) -> tuple[dict[str, str], bool]:
    """Whole bodies for brain_search format='full', at most FULL_BODY_CHARS each and `budget` in all (they
    go in both the text and structuredContent); True when one was cut. A hit gone meanwhile has none."""
    bodies: dict[str, str] = {}
    total, truncated = 0, False
    for slug in slugs:
        try:
            body = body_of(slug)
        except PinkyError:
            continue
        room = max(0, min(FULL_BODY_CHARS, budget - total))
        if len(body) > room:
            body, truncated = body[:room] + "\n…[truncated: read it whole with brain_get]", True
        bodies[slug] = body
        total += len(body)
    return bodies, truncated


def search_text(out: SearchOut) -> str:
    if not out.hits:
        lines = [f'No entries match "{one_line(out.query, 80)}".']
        if out.notice:
            lines.append(f"({out.notice})")
        lines.append("Try other words, drop filters, or save what you learn with brain_save.")
        return "\n".join(lines)
    lines = [f'{out.count} result(s) for "{one_line(out.query, 80)}" ({out.mode}):']
    if out.notice:
        lines.append(f"({out.notice})")
    used = 0
    budget = FULL_TEXT_BUDGET if any(h.body is not None for h in out.hits) else COMPACT_TEXT_BUDGET
    for n, hit in enumerate(out.hits, 1):
        where = f"{hit.path}:{hit.line}" if hit.line else hit.path
        text = hit.body.strip() if hit.body is not None else one_line(hit.snippet)
        notes = "".join([f"; STALE: unverified for {hit.age_days} days" if hit.stale else "",
                         f"; superseded by {hit.superseded_by}" if hit.superseded_by else ""])
        block = f"{n}. {hit.title} [{hit.type}] — {where}  (slug: {hit.slug}{notes})\n   {text}"
        if hit.why:
            block += f"\n   ({hit.why})"
        if used + len(block) > budget:
            lines.append(f"… {len(out.hits) - n + 1} more in structuredContent")
            break
        lines.append(block)
        used += len(block)
    return "\n".join(lines)

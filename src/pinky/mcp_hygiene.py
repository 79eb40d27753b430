"""MCP tools that keep the brain true: tags, feedback, gaps, contradictions, export and import.

Thin adapters over `KnowledgeBase.hygiene`, registered in `mcp_tools.TOOL_TIERS` like the others
(documentation/HYGIENE.md says what each mechanism does). No `from __future__ import annotations`:
the SDK reads these signatures at runtime.
"""

from typing import Annotated

from mcp_types import CallToolResult
from pydantic import BaseModel

from pinky.mcp_common import State, result, run_core


class TagOut(BaseModel):
    tag: str
    count: int


class TagsOut(BaseModel):
    count: int
    tags: list[TagOut]


async def brain_tags(state: State) -> Annotated[CallToolResult, TagsOut]:
    """The tag vocabulary: every tag with how many entries carry it, most used first. Use it before
    tagging a new entry, to reuse an existing tag instead of inventing a near-synonym."""
    found = await run_core(state.runtime, lambda kb: kb.hygiene.tags())
    out = TagsOut(count=len(found), tags=[TagOut(**item) for item in found])
    text = "\n".join(f"{item.count:>4}  {item.tag}" for item in out.tags) or "No tags yet."
    return result(text, out)

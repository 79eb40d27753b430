"""The brain_research MCP tool: a dossier on a topic for the calling agent to synthesise (pinky.research).

Registered in `mcp_tiers.TOOL_TIERS` (read tier). No `from __future__ import annotations`: the SDK reads
the signature at runtime.
"""

from typing import Annotated

from mcp_types import CallToolResult
from pydantic import Field

from pinky.base.validate import MAX_QUERY_CHARS
from pinky.mcp.budget import Pages
from pinky.mcp.common import State, result, run_core
from pinky.mcp.models import ResearchOut
from pinky.research import DEFAULT_TOKENS, MAX_TOKENS, MIN_TOKENS, dossier_text


async def brain_research(
    state: State,
    topic: Annotated[str, Field(min_length=1, max_length=MAX_QUERY_CHARS)],
    max_tokens: Annotated[int, Field(ge=MIN_TOKENS, le=MAX_TOKENS)] = DEFAULT_TOKENS,
) -> Annotated[CallToolResult, ResearchOut]:
    """A dossier on a topic for you to synthesise: best entries, links, contradictions, gaps, diary.
    Use it before a design decision or to summarise what is known."""
    found = await run_core(state.runtime, lambda kb: kb.research(topic, max_tokens=max_tokens))
    return result(state, lambda out: dossier_text(out.model_dump(mode="json")), ResearchOut.model_validate(found),
                  pages=Pages(
        ("entries", "links", "contradictions", "gaps", "diary"), narrower="Ask again with a smaller max_tokens."))

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
    topic: Annotated[str, Field(min_length=1, max_length=MAX_QUERY_CHARS, description=(
        f"What to research: a subsystem, an error, a question. At most {MAX_QUERY_CHARS:,} characters."))],
    max_tokens: Annotated[int, Field(ge=MIN_TOKENS, le=MAX_TOKENS, description=(
        f"Budget of the dossier, {MIN_TOKENS}-{MAX_TOKENS:,} tokens (about 4 characters each)."))] = DEFAULT_TOKENS,
) -> Annotated[CallToolResult, ResearchOut]:
    """Gather everything the brain holds about a topic into one dossier for you to synthesise: the best
    entries with an excerpt of each, their links and backlinks, open contradictions between them, open
    knowledge gaps about the topic, and recent diary lines that mention it, packed to max_tokens (`cut`
    says what did not fit). Use it before a design decision or when asked to summarise what is known;
    use brain_search for a quick lookup. No model runs on the server: the synthesis is yours."""
    found = await run_core(state.runtime, lambda kb: kb.research(topic, max_tokens=max_tokens))
    return result(state, lambda out: dossier_text(out.model_dump(mode="json")), ResearchOut.model_validate(found),
                  pages=Pages(
        ("entries", "links", "contradictions", "gaps", "diary"), narrower="Ask again with a smaller max_tokens."))

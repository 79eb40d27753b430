"""brain_research in one place: a dossier on a topic for the calling agent to synthesise (pinky.research), its
output model (`pinky.research` answers in a plain dict, so it is declared here) and its text (`dossier_text`).

No `from __future__ import annotations`: the SDK and pydantic read these annotations at runtime.
"""

from typing import Annotated, Any

from mcp_types import CallToolResult
from pydantic import BaseModel, ConfigDict, Field

from pinky.base.validate import MAX_QUERY_CHARS
from pinky.mcp.budget import Pages
from pinky.mcp.common import ResultOut, State, result, run_core, tool
from pinky.research import DEFAULT_TOKENS, MAX_TOKENS, MIN_TOKENS, dossier_text


class ResearchEntryOut(BaseModel):
    slug: str
    title: str
    type: str
    path: str = Field(description="The markdown file; cite it.")
    score: float
    tags: list[str]
    stale: bool
    excerpt: str = Field(description="The start of the body (whole when short).")
    excerpt_cut: bool = Field(False, description="True when the excerpt was shortened to fit the budget.")


class ResearchLinkOut(BaseModel):
    model_config = ConfigDict(serialize_by_alias=True, validate_by_name=True)

    source: str = Field(alias="from", description="The entry the link is written in.")
    to: str
    rel: str
    from_title: str
    to_title: str
    both_in_top: bool = Field(description="True when both ends are among the dossier's entries.")


class ResearchOut(ResultOut):
    topic: str
    max_tokens: int
    used_tokens: int = Field(description="Size of the packed sections, at about 4 characters a token.")
    mode: str = Field(description="What the search behind it ran: hybrid, or bm25 without vectors.")
    entries: list[ResearchEntryOut] = Field(description="The best entries about the topic, best first.")
    contradictions: list[dict[str, Any]] = Field(description=(
        "Open contradictions involving those entries: {a, b, reason, differences} (as brain_check)."))
    links: list[ResearchLinkOut] = Field(description="Links and backlinks of those entries.")
    gaps: list[dict[str, Any]] = Field(description=(
        "Open knowledge gaps made mostly of the topic's words: {query (null unless PINKY_LOG_QUERIES=1), "
        "count, last_seen}."))
    diary: list[dict[str, Any]] = Field(description=(
        "Diary lines of the last 90 days naming an entry or holding the topic's words: {date, time, kind, text}."))
    cut: dict[str, int] = Field(description=(
        "How many items of each section did not fit the budget; `excerpts`: entries kept with a shorter excerpt."))
    notice: str | None = None


@tool("read", "Research a topic")
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

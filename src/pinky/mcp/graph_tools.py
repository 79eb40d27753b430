"""The knowledge graph's options of the MCP tools: `brain_related` depth/rel/at, `brain_get` timeline.

Parameter types (their descriptions reach the client in the input schema), the core calls and
the readable text. The tools themselves stay in `mcp_tools`, their tier table's module.
No `from __future__ import annotations`: the SDK reads these annotations at runtime.
"""

from typing import Annotated, Any

from pydantic import Field

from pinky.graph.render import tree
from pinky.kb import KnowledgeBase
from pinky.mcp.models import RelatedOut, TimelineEventOut
from pinky.mcp.text import related_text as one_hop_text
from pinky.text.linkrefs import RELATIONS

Depth = Annotated[int, Field(ge=1, le=3, description="Links away, either way; above 1 adds `graph`.")]
Rels = Annotated[list[str] | None, Field(max_length=20, description=(
    f"Only these relations: {', '.join(RELATIONS)} or a project's own."))]
At = Annotated[str | None, Field(max_length=40, description="A date: the links that held then.")]
WithTimeline = Annotated[bool, Field(description="Add its history: changes, links, diary lines.")]


PAGED = ("links", "backlinks", "code", "graph.nodes", "graph.edges")  # what brain_related's `offset` pages
ONE_HOP = ("links", "backlinks", "code")
PAGE_LINKS = 500  # a page of brain_related holds at most this many of each one-hop list


def related(kb: KnowledgeBase, slug: str, depth: int, rels: list[str] | None, at: str | None,
            offset: int = 0) -> tuple[dict[str, Any], bool]:
    """One hop (links, backlinks, code) and, with depth > 1, the whole neighbourhood, each list from
    `offset` on and at most PAGE_LINKS long; and whether a list goes on beyond that (a hub note has
    thousands of backlinks)."""
    found = kb.graph.related(slug, rels=rels, at=at, limit=offset + PAGE_LINKS + 1)
    more = any(len(found[key]) > offset + PAGE_LINKS for key in ONE_HOP)
    found.update({key: found[key][offset:offset + PAGE_LINKS] for key in ONE_HOP})
    if depth > 1:
        walk = kb.graph.neighbourhood(slug, depth=depth, rels=rels, at=at)
        found["graph"] = {"nodes": walk["nodes"][offset:], "edges": walk["edges"][offset:],
                          "truncated": walk["truncated"]}
    return found, more


def related_text(out: RelatedOut) -> str:
    text = one_hop_text(out)
    if out.graph is None or not out.graph.nodes:
        return text
    data = out.graph.model_dump(mode="json")
    lines = tree({**data, "root": out.slug})
    return text + f"\nwithin {max(n.depth for n in out.graph.nodes)} links:\n" + "\n".join(lines)


def timeline_text(events: list[TimelineEventOut] | None) -> str:
    if events is None:
        return ""
    lines = [f"{e.date[:16].replace('T', ' ')}  {e.kind}: {e.text}" for e in events]
    return "\n\nTimeline:\n" + ("\n".join(lines) or "no history")

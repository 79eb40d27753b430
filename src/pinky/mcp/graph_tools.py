"""brain_related in one place: the tool, its arguments (depth, rel, at), its output model and its text.

The core's graph (`KnowledgeBase.graph`) answers in plain dicts, so the output model is declared here.
No `from __future__ import annotations`: the SDK and pydantic read these annotations at runtime.
"""

from typing import Annotated, Any

from mcp_types import CallToolResult
from pydantic import BaseModel, ConfigDict, Field

from pinky.graph.render import tree
from pinky.kb import KnowledgeBase
from pinky.mcp.budget import Pages
from pinky.mcp.common import Offset, ResultOut, Slug, State, result, run_core, tool
from pinky.text.linkrefs import RELATIONS

Depth = Annotated[int, Field(ge=1, le=3, description="Links away, either way; above 1 adds `graph`.")]
Rels = Annotated[list[str] | None, Field(max_length=20, description=(
    f"Only these relations: {', '.join(RELATIONS)} or a project's own."))]
At = Annotated[str | None, Field(max_length=40, description="A date: the links that held then.")]


class LinkHowOut(BaseModel):
    kind: str = Field("wiki", description="How it is written: wiki ([[…]]), md (a relative .md link), typed "
                      "(frontmatter links:), files, breadcrumb.")
    rel: str = Field("relates", description="The relation: relates, depends_on, supersedes, contradicts, caused_by, "
                     "fixed_by, or a project's own.")
    line: int | None = Field(None, description="Line of the note (or code file) the link is written on.")
    since: str | None = None
    until: str | None = Field(None, description="Set when the link was closed (it held until that day).")


class LinkOut(LinkHowOut):
    target: str = Field(description="The link as written.")
    slug: str | None = Field(None, description="The entry it resolves to; null when it names no entry (broken).")
    title: str | None = None
    path: str | None = None


class EntryRefOut(LinkHowOut):
    slug: str
    title: str
    path: str


class CodeRefOut(BaseModel):
    file: str
    line: int | None = None
    repo: str | None = None
    source: str = Field(description="frontmatter (files:) or breadcrumb (a `Brain: <slug>` comment in code).")


class NodeOut(BaseModel):
    id: str = Field(description="An entry's slug, or a code file's path.")
    kind: str = Field(description="entry or file.")
    depth: int = Field(description="How many links from the entry asked about.")
    title: str | None = None
    type: str | None = None
    path: str


class EdgeOut(LinkHowOut):
    model_config = ConfigDict(serialize_by_alias=True, validate_by_name=True)

    source: str = Field(alias="from", description="Node id the link is written in (a note, or code for a breadcrumb).")
    to: str = Field(description="Node id it points at.")


class GraphOut(BaseModel):
    nodes: list[NodeOut]
    edges: list[EdgeOut]
    truncated: bool = Field(description="True when the bounded walk (fan-out, node count) left links out.")


class RelatedOut(ResultOut):
    slug: str
    title: str
    path: str
    at: str | None = Field(None, description="The day whose links are shown (typed links hold from since to until).")
    links: list[LinkOut]
    backlinks: list[EntryRefOut]
    code: list[CodeRefOut]
    graph: GraphOut | None = Field(None, description="With depth > 1: every entry and code file within that "
                                   "many links, either way.")


@tool("read", "Related entries and code")
async def brain_related(state: State, slug: Slug, depth: Depth = 1, rel: Rels = None, at: At = None,
                        offset: Offset = 0) -> Annotated[CallToolResult, RelatedOut]:
    """An entry's links, backlinks and code files. Use it to explore around a hit, or to find the
    knowledge tied to a file."""
    found, more = await run_core(state.runtime, lambda kb: related(kb, slug, depth, rel, at, offset))
    out = RelatedOut(**found)
    return result(state, related_text, out, drop_none=("graph",),
                  pages=Pages(PAGED, offset, more=more, tool="brain_related"))


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


def one_hop_text(out: RelatedOut) -> str:
    lines = [f"{out.title} — {out.path} (slug: {out.slug})"]
    rel = lambda link: f" ({link.rel})" if link.kind == "typed" else ""  # noqa: E731
    lines.append("links: " + (", ".join((lk.slug or f"{lk.target} (unresolved)") + rel(lk) for lk in out.links)
                              or "none"))
    lines.append("backlinks: " + (", ".join(b.slug + rel(b) for b in out.backlinks) or "none"))
    lines.append("code: " + (", ".join(c.file + (f":{c.line}" if c.line else "") for c in out.code) or "none"))
    return "\n".join(lines)

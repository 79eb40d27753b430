"""The brain's MCP resources: every entry's summary, and one entry as markdown. The server binds them to the
runtime (a static resource cannot ask for the lifespan's state). The tools are in their families' modules
(pinky.mcp.tiers.FAMILIES).
"""

import json
from typing import Any

from mcp.server.mcpserver.exceptions import ResourceError

from pinky.base.shown import shown_all
from pinky.kb import KnowledgeBase
from pinky.mcp.common import run_core
from pinky.runtime.process import Runtime


async def read_entries(runtime: Runtime) -> str:
    """Every indexed entry: slug, title, type, scope and path (at most 5,000, newest first)."""

    def work(kb: KnowledgeBase) -> list[dict[str, Any]]:
        return [{**item, "uri": f"pinky://entry/{item['slug']}"} for item in kb.entry_summaries(5000)]

    return json.dumps(shown_all(await run_core(runtime, work, error=ResourceError)), ensure_ascii=False)


async def read_entry(runtime: Runtime, slug: str) -> str:
    """One entry as markdown (frontmatter + body), e.g. pinky://entry/gotcha/pg-pool-timeout."""
    from pinky.text.markdown import render

    found = await run_core(runtime, lambda kb: kb.get(slug), error=ResourceError)
    return render(shown_all(found.meta), found.body)  # the body is shown redacted already

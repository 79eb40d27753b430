"""Which tier of `pinky-mcp` brings which tool, gathered from the tools themselves: each tool function names its
tier, title and annotations where it is defined (`@tool` in `pinky.mcp.common`). `PINKY_TIER` picks the tier;
tiers are cumulative.

tools/list order: tier by tier, the FAMILIES below in this order, in each module the order its tools are
defined in. A new tool goes in its family's module (or a new module listed here).
"""

from __future__ import annotations

from types import ModuleType
from typing import get_args

from pinky.mcp import (
    admin_tools,
    browse_tools,
    entry_tools,
    graph_tools,
    hygiene_tools,
    research_tools,
    search_tools,
)
from pinky.mcp.common import SPEC_ATTRIBUTE, Tier, ToolSpec

FAMILIES: tuple[ModuleType, ...] = (search_tools, entry_tools, graph_tools, browse_tools, admin_tools, hygiene_tools,
                                    research_tools)
TIERS: tuple[str, ...] = get_args(Tier)  # read, write, admin: `write` serves the read tools too, `admin` all


def _gathered() -> dict[str, tuple[ToolSpec, ...]]:
    specs = [spec for module in FAMILIES for value in vars(module).values()  # a tool imported elsewhere: once
             if isinstance(spec := getattr(value, SPEC_ATTRIBUTE, None), ToolSpec)
             and spec.fn.__module__ == module.__name__]
    return {tier: tuple(spec for spec in specs if spec.tier == tier) for tier in TIERS}


TOOL_TIERS: dict[str, tuple[ToolSpec, ...]] = _gathered()


def tools_for(tier: str) -> list[ToolSpec]:
    """The tools a server at `tier` offers, in tools/list order."""
    if tier not in TOOL_TIERS:
        raise ValueError(f"unknown tier {tier!r}; use one of {', '.join(TIERS)}")
    specs: list[ToolSpec] = []
    for name in TIERS[: TIERS.index(tier) + 1]:
        specs += TOOL_TIERS[name]
    return specs


def tier_of(tool_name: str) -> str | None:
    """The lowest tier that offers `tool_name`; None for a name no tier has."""
    return next((tier for tier, specs in TOOL_TIERS.items() if any(s.name == tool_name for s in specs)), None)

"""Which tier of `pinky-mcp` brings which tool, with what tools/list shows of each besides its
signature and docstring (title, annotations). `PINKY_TIER` picks the tier; tiers are cumulative."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from mcp_types import CallToolResult, ToolAnnotations

from pinky.mcp import hygiene_tools as mcp_hygiene
from pinky.mcp import research_tools as mcp_research
from pinky.mcp.tools import (
    brain_briefing,
    brain_delete,
    brain_get,
    brain_list,
    brain_reindex,
    brain_related,
    brain_save,
    brain_search,
    brain_stats,
    brain_sync,
    brain_update,
)

READ_ONLY = ToolAnnotations(read_only_hint=True, destructive_hint=False, idempotent_hint=True, open_world_hint=False)


def _writes(*, destructive: bool, idempotent: bool = False, open_world: bool = False) -> ToolAnnotations:
    return ToolAnnotations(read_only_hint=False, destructive_hint=destructive, idempotent_hint=idempotent,
                           open_world_hint=open_world)


@dataclass(frozen=True)
class ToolSpec:
    """A tool function with what tools/list shows besides its signature and docstring."""

    fn: Callable[..., Awaitable[CallToolResult]]
    title: str
    annotations: ToolAnnotations

    @property
    def name(self) -> str:
        return self.fn.__name__


# Tiers are cumulative, in this order: `write` serves the read tools too, `admin` all of them.
TOOL_TIERS: dict[str, tuple[ToolSpec, ...]] = {
    "read": (
        ToolSpec(brain_search, "Search the brain", READ_ONLY),
        ToolSpec(brain_get, "Read an entry", READ_ONLY),
        ToolSpec(brain_related, "Related entries and code", READ_ONLY),
        ToolSpec(brain_briefing, "What changed lately", READ_ONLY),
        ToolSpec(brain_list, "List entries", READ_ONLY),
        ToolSpec(brain_stats, "Brain size and health", READ_ONLY),
        ToolSpec(mcp_hygiene.brain_tags, "Tag vocabulary", READ_ONLY),
        ToolSpec(mcp_hygiene.brain_gaps, "Knowledge gaps", READ_ONLY),
        ToolSpec(mcp_hygiene.brain_check, "Find contradictions", READ_ONLY),
        ToolSpec(mcp_research.brain_research, "Research a topic", READ_ONLY),
    ),
    "write": (
        ToolSpec(brain_save, "Save knowledge", _writes(destructive=False)),
        ToolSpec(brain_update, "Update an entry", _writes(destructive=True)),
        ToolSpec(brain_delete, "Archive an entry", _writes(destructive=True)),
        ToolSpec(mcp_hygiene.brain_feedback, "Rate a search hit", _writes(destructive=False)),
    ),
    "admin": (
        ToolSpec(brain_reindex, "Reindex the brain", _writes(destructive=False, idempotent=True)),
        ToolSpec(brain_sync, "Sync the global brain", _writes(destructive=False, open_world=True)),
        ToolSpec(mcp_hygiene.brain_export, "Export the brain", _writes(destructive=False, idempotent=True)),
        ToolSpec(mcp_hygiene.brain_import, "Import notes", _writes(destructive=False)),
    ),
}
TIERS = tuple(TOOL_TIERS)


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

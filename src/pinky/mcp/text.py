"""Text every tool family's renderer shares (`one_line`), and the messages for refused calls (an unknown tool,
one of a higher tier, bad arguments). Each tool's own text is written next to the tool, in its family's module.
No SDK import here.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from pinky.base.locations import ENV_TIER
from pinky.base.shown import plain


def one_line(text: str, limit: int = 240) -> str:
    flat = plain(" ".join(text.split()))
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


# --- refused calls ------------------------------------------------------------------------------


def unavailable_text(name: str, tier: str, needed: str) -> str:
    return (f"{name} is not available: this server runs with {ENV_TIER}={tier}; "
            f"it needs {ENV_TIER}={needed} or higher")


def unknown_tool_text(name: str, available: list[str]) -> str:
    return f"unknown tool {name[:100]!r}; available tools: {', '.join(available)}"


def invalid_arguments_text(tool: str, errors: Sequence[Mapping[str, Any]]) -> str:
    """One line naming each bad argument (pydantic's `errors()`), without echoing huge values."""
    parts = []
    for err in errors[:5]:
        where = ".".join(str(p) for p in err["loc"]) or "arguments"
        got = err.get("input")
        shown = "" if err["type"] == "missing" or isinstance(got, dict) else f" (got {_short_repr(got)})"
        parts.append(f"{where}: {err['msg']}{shown}")
    return f"invalid arguments for {tool}: {'; '.join(parts)}. Fix them and call again."


def _short_repr(value: Any) -> str:
    if isinstance(value, str) and len(value) > 40:
        return f"a string of {len(value):,} characters"
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."

"""The real Claude Code CLI for the opt-in integration tests: from PATH, or installed from npm."""

from __future__ import annotations

import json
from typing import Any

import pytest
from host_support import OFFLINE_ENV as HOST_OFFLINE_ENV
from host_support import PINNED, find_cli

CLAUDE_VERSION = PINNED["claude"][1]  # the version design/claude-code-plugin.md was checked against on Node 20
OFFLINE_ENV = HOST_OFFLINE_ENV["claude"]


def find_claude(request: pytest.FixtureRequest) -> str:
    """`claude` on PATH when it is the pinned version; or, with PINKY_TEST_CLAUDE=1 or PINKY_TEST_HOSTS=1,
    installed from the npm registry once into pytest's cache folder (reused by later runs); else the test is
    skipped. (Any `claude` on PATH was taken before: a machine's older release hid what the pinned one does.)"""
    return find_cli(request, "claude")


def tool_definitions(tools: list[dict[str, Any]], server: str = "pinky") -> list[dict[str, Any]]:
    """The `tools` entries Claude Code sends the model, in every request, for an MCP server's tools/list:
    `{name: mcp__<server>__<name>, description, input_schema}` (title, annotations and outputSchema stay
    behind). Checked against a logged request in tests/mcp/test_tool_definitions.py."""
    return [{"name": f"mcp__{server}__{tool['name']}", "description": tool.get("description", ""),
             "input_schema": tool["inputSchema"]} for tool in tools]


def definitions_chars(entries: list[dict[str, Any]]) -> int:
    """The characters those entries take in the request body (compact JSON, as Claude Code writes it)."""
    return sum(len(json.dumps(entry, ensure_ascii=False, separators=(",", ":"))) for entry in entries)

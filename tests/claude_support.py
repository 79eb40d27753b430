"""The real Claude Code CLI for the opt-in integration tests: from PATH, or installed from npm."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

CLAUDE_VERSION = "2.1.197"  # the version design/claude-code-plugin.md was checked against on Node 20
OFFLINE_ENV = {"DISABLE_TELEMETRY": "1", "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
               "DISABLE_AUTOUPDATER": "1", "DISABLE_ERROR_REPORTING": "1", "MCP_CONNECTION_NONBLOCKING": "0"}


def find_claude(request: pytest.FixtureRequest) -> str:
    """`claude` on PATH; or, with PINKY_TEST_CLAUDE=1, installed from the npm registry once into pytest's
    cache folder (reused by later runs); else the test is skipped."""
    found = shutil.which("claude")
    if found:
        return found
    if os.environ.get("PINKY_TEST_CLAUDE") != "1":
        pytest.skip("the claude CLI is not installed (set PINKY_TEST_CLAUDE=1 to install it from npm)")
    if shutil.which("npm") is None:
        pytest.skip("PINKY_TEST_CLAUDE=1 needs npm")
    prefix = Path(request.config.cache.mkdir(f"claude-code-{CLAUDE_VERSION}"))
    binary = prefix / "node_modules" / ".bin" / "claude"
    if not binary.exists():
        import fcntl

        with open(prefix / ".install.lock", "w") as lock:  # test processes run in parallel: one installs
            fcntl.flock(lock, fcntl.LOCK_EX)
            if not binary.exists():
                subprocess.run(["npm", "install", "--prefix", str(prefix), "--no-audit", "--no-fund",
                                f"@anthropic-ai/claude-code@{CLAUDE_VERSION}"], check=True, capture_output=True,
                               timeout=600)
    return str(binary)


def tool_definitions(tools: list[dict[str, Any]], server: str = "pinky") -> list[dict[str, Any]]:
    """The `tools` entries Claude Code sends the model, in every request, for an MCP server's tools/list:
    `{name: mcp__<server>__<name>, description, input_schema}` (title, annotations and outputSchema stay
    behind). Checked against a logged request in tests/mcp/test_tool_definitions.py."""
    return [{"name": f"mcp__{server}__{tool['name']}", "description": tool.get("description", ""),
             "input_schema": tool["inputSchema"]} for tool in tools]


def definitions_chars(entries: list[dict[str, Any]]) -> int:
    """The characters those entries take in the request body (compact JSON, as Claude Code writes it)."""
    return sum(len(json.dumps(entry, ensure_ascii=False, separators=(",", ":"))) for entry in entries)

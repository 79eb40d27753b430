"""The real Claude Code CLI for the opt-in integration tests: from PATH, or installed from npm."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

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
        subprocess.run(["npm", "install", "--prefix", str(prefix), "--no-audit", "--no-fund",
                        f"@anthropic-ai/claude-code@{CLAUDE_VERSION}"], check=True, capture_output=True, timeout=600)
    return str(binary)

"""What pinky's tools cost the agent: the tool definitions Claude Code sends the model in every request.

Claude Code turns each tool of an MCP server's tools/list into `{name: mcp__<server>__<tool>, description,
input_schema}` and sends them all in every request (claude_support.tool_definitions). The default tier's 14
tools are held to 10,000 characters of that JSON, under either name Claude Code gives the server (`pinky`
from a `.mcp.json`, `plugin_pinky_pinky` from the plugin). The detail the descriptions leave out is in
documentation/MCP.md. `python benchmarks/bench_tool_definitions.py` prints the figures.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from claude_support import OFFLINE_ENV, definitions_chars, find_claude, tool_definitions
from helpers import console_script
from mcp_helpers import RawServer

from pinky.mcp.common import with_cause
from pinky.mcp.sdk import make_tool
from pinky.mcp.tiers import tools_for

LIMIT = 10_000
SERVER_NAMES = ("pinky", "plugin_pinky_pinky")  # a project's .mcp.json; the plugin
STAND_IN = Path(__file__).resolve().parents[1] / "support" / "messages_stand_in.py"
CONSTRAINTS = ("maxLength", "minLength", "maximum", "minimum", "maxItems", "minItems", "pattern")


def listed_tools(root: Path) -> list[dict[str, Any]]:
    with RawServer(root) as server:
        server.initialize()
        return server.request("tools/list")["result"]["tools"]


def test_the_default_tiers_tool_definitions_fit_in_10000_characters(tmp_path: Path) -> None:
    tools = listed_tools(tmp_path)
    assert len(tools) == 14
    for name in SERVER_NAMES:
        entries = tool_definitions(tools, name)
        size = definitions_chars(entries)
        biggest = sorted(((definitions_chars([e]), e["name"]) for e in entries), reverse=True)[:3]
        assert size <= LIMIT, f"mcp__{name}__* tool definitions: {size:,} characters > {LIMIT:,}; largest {biggest}"


def test_every_tool_still_says_when_to_use_it(tmp_path: Path) -> None:
    for tool in listed_tools(tmp_path):
        assert 80 < len(tool["description"]) <= 300, (tool["name"], tool["description"])


@pytest.mark.parametrize("spec", tools_for("admin"), ids=lambda spec: spec.name)
def test_the_listed_schema_takes_the_same_arguments_as_the_tool(spec: Any) -> None:
    """Only verbosity left the schema: every argument, which are required, each one's type, enum and limits
    are as the function's signature says (arguments are still validated against the signature)."""
    tool = make_tool(with_cause(spec.fn), title=spec.title, annotations=spec.annotations)
    full = tool.fn_metadata.arg_model.model_json_schema(by_alias=True)
    lean = tool.parameters
    assert "title" not in lean and lean["type"] == "object"
    assert lean.get("required", []) == full.get("required", [])
    assert lean["properties"].keys() == full["properties"].keys()
    for name, declared in full["properties"].items():
        listed = lean["properties"][name]
        assert "title" not in listed and "anyOf" not in listed, (spec.name, name, listed)
        variants = [v for v in declared.get("anyOf", [declared]) if v != {"type": "null"}]
        assert len(variants) == 1, (spec.name, name)
        want = variants[0]
        assert listed["type"] == want["type"], (spec.name, name)
        assert listed.get("enum") == want.get("enum"), (spec.name, name)
        assert listed.get("items") == want.get("items"), (spec.name, name)
        assert {k: listed.get(k) for k in CONSTRAINTS} == {k: want.get(k) for k in CONSTRAINTS}, (spec.name, name)
        default = declared.get("default")
        if not (default is None or default is False or (type(default) is int and default == 0)):
            assert listed["default"] == default, (spec.name, name)  # only null, false and 0 go unsaid


def test_an_explicit_null_is_still_accepted(tmp_path: Path) -> None:
    """The schema leaves null out of optional arguments; a client that sends it anyway is still served."""
    with RawServer(tmp_path) as server:
        server.initialize()
        result = server.call("brain_search", query="pool", scope=None, tags=None, since=None, hypothetical=None)
    assert result.get("isError") is not True, result


@pytest.mark.integration
def test_a_logged_request_carries_exactly_these_definitions(tmp_path: Path, request: pytest.FixtureRequest) -> None:
    """The real Claude Code CLI against the stand-in Messages API: the `tools` entries of the server in the
    logged request are what tool_definitions() computes, so the figure above is the one the model pays."""
    claude = find_claude(request)
    home, project, logs = tmp_path / "home", tmp_path / "project", tmp_path / "logs"
    for folder in (home, project, logs):
        folder.mkdir()
    env = {key: value for key, value in os.environ.items() if not key.startswith(("PINKY_", "CLAUDE", "ANTHROPIC"))}
    env.update(OFFLINE_ENV, HOME=str(home), CLAUDE_CONFIG_DIR=str(home / ".claude"), ANTHROPIC_API_KEY="test")
    server_env = {"PINKY_HOME": str(home / ".pinky"), "PINKY_HASH_EMBED": "1"}
    config = {"mcpServers": {"pinky": {"type": "stdio", "command": console_script("pinky-mcp")[0], "args": [],
                                       "env": server_env}}}
    (tmp_path / "mcp.json").write_text(json.dumps(config))
    script = tmp_path / "script.json"
    script.write_text(json.dumps([{"tool": "brain_stats", "wait": 30, "input": {}}]))
    done = subprocess.run([sys.executable, str(STAND_IN), "run", str(logs), str(script), "--", claude, "-p", "stats",
                           "--output-format", "stream-json", "--verbose", "--strict-mcp-config", "--mcp-config",
                           str(tmp_path / "mcp.json"), "--allowedTools", "mcp__pinky__*,Bash(sleep:*)"],
                          cwd=project, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    bodies = [json.loads(p.read_text())["body"] for p in sorted(logs.glob("[0-9]*.json"))]
    # Claude Code 2.1.337 defers MCP tools: a request sends each with "defer_loading": true (the API keeps it out of
    # the model's context until a ToolSearch loads it), or only the ones loaded so far; the definitions themselves
    # are unchanged. Every definition sent, across the requests, by name:
    sent = {t["name"]: {k: v for k, v in t.items() if k != "defer_loading"} for body in bodies
            for t in body.get("tools") or [] if t["name"].startswith("mcp__pinky__")}
    logged = list(sent.values())

    server = RawServer(tmp_path, PINKY_HOME=str(home / ".pinky"))
    with server:
        server.initialize()
        tools = server.request("tools/list")["result"]["tools"]
    # Claude Code writes an ellipsis in an input schema as three dots; pinky's schemas hold none.
    computed = json.loads(json.dumps(tool_definitions(tools), ensure_ascii=False).replace("…", "..."))
    # Deferred (2.1.337): only the tools a ToolSearch loaded, or all of them marked defer_loading, depending on
    # whether the server was connected at the first request; each one sent is exactly its computed definition.
    by_name = {entry["name"]: entry for entry in computed}
    assert "mcp__pinky__brain_stats" in sent
    assert logged == [by_name[entry["name"]] for entry in logged]
    assert definitions_chars(computed) <= LIMIT

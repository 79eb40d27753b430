"""Gemini CLI, the real one, runs what `pinky-brain setup gemini --project` wrote (issue 36 item 2): portable
`sh -c` commands with no path of the machine that wrote them, the same the Gemini extension in packaging/gemini
uses. The server's tools are offered and the SessionStart hook's digest reaches the model."""

from __future__ import annotations

import json

import pytest
from host_support import brain_tools, find_cli, new_world
from host_worlds import GEMINI_ENV, KNOWN, NEEDS_SETUP, gemini_command, write_user_config

pytestmark = [pytest.mark.integration, pytest.mark.slow, pytest.mark.host_cli(6)]


@NEEDS_SETUP
def test_a_gemini_session_runs_what_setup_project_wrote(tmp_path_factory: pytest.TempPathFactory,
                                                        request: pytest.FixtureRequest) -> None:
    gemini = find_cli(request, "gemini")
    world = new_world(tmp_path_factory.mktemp("gemini-project"), ("gemini",), KNOWN)
    write_user_config(world, "gemini")
    done = world.pinky("setup", "gemini", "--project")
    assert done.returncode == 0, done.stdout + done.stderr
    written = (world.project / ".gemini" / "settings.json").read_text()
    assert str(world.root) not in written and "sh -c" in written
    session = world.session("project", [{"tool": "brain_search", "input": {"query": "deploy"}}],
                            gemini_command(gemini, "Search it."), GEMINI_ENV)
    assert session.returncode == 0, session.stderr[-3000:]
    assert session.main, session.stderr[-3000:]
    first = session.main[0]["body"]
    offered = sorted(d.get("name", "") for tool in first.get("tools") or [] for d in tool.get("functionDeclarations")
                     or [] if d.get("name", "").startswith("mcp_pinky_"))
    assert offered == sorted(f"mcp_pinky_{name}" for name in brain_tools()), (offered, session.stderr[-3000:])
    assert KNOWN[0] in json.dumps(first.get("contents"), ensure_ascii=False)

"""Gemini CLI, the real one, set up through the Claude Code plugin: it keeps its tools and hooks across a plugin
update, and its first session after setup, beside two CPU hogs, is offered the tools and shown the digest (issue 36
items 1 and 3, as tests/hosts/test_codex_plugin_update_e2e.py checks them for Codex)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from host_support import World, brain_tools, find_cli, new_world
from host_worlds import GEMINI_ENV, KNOWN, NEEDS_SETUP, SAVE, gemini_command, write_user_config
from mcp_helpers import slow_sdk_env
from test_codex_plugin_update_e2e import install_plugin
from test_plugin_runtime import linked_runtime, preparation
from test_plugin_updates import update, with_console_scripts

pytestmark = [pytest.mark.integration, pytest.mark.slow, pytest.mark.host_cli(5)]


def offered_and_shown(world: World, name: str) -> tuple[list[str], str]:
    """The brain tools the first request offered, and what it showed the model."""
    session = world.sessions[name]
    assert session.returncode == 0, session.stderr[-3000:]
    assert session.main, session.stderr[-3000:]
    first = session.main[0]["body"]
    tools = sorted(d.get("name", "") for tool in first.get("tools") or [] for d in tool.get("functionDeclarations")
                   or [] if d.get("name", "").startswith("mcp_pinky_"))
    return tools, json.dumps(first.get("contents"), ensure_ascii=False)


def expected() -> list[str]:
    return sorted(f"mcp_pinky_{name}" for name in brain_tools())


@NEEDS_SETUP
def test_gemini_keeps_tools_and_hooks_across_a_plugin_update(tmp_path_factory: pytest.TempPathFactory,
                                                             request: pytest.FixtureRequest) -> None:
    gemini = find_cli(request, "gemini")
    world = new_world(tmp_path_factory.mktemp("gemini-plugin-update"), ("gemini",), KNOWN)
    write_user_config(world, "gemini")
    copy, data, runtime_env = install_plugin(world)
    old = with_console_scripts(linked_runtime(runtime_env, copy))
    done = world.run([str(copy / "bin" / "pinky-brain"), "setup", "gemini"])
    assert done.returncode == 0, done.stdout + done.stderr
    written = (world.home / ".gemini" / "settings.json").read_text()
    assert str(data) not in written and str(world.home / ".local" / "bin" / "pinky-hooks") in written

    world.session("before", [{"tool": "brain_save", "input": SAVE}], gemini_command(gemini, "Save it."), GEMINI_ENV)
    tools, shown = offered_and_shown(world, "before")
    assert tools == expected() and KNOWN[0] in shown, shown[-2000:]

    update(copy)  # the plugin update: new content, so the next start needs (and here gets) a new runtime
    new = linked_runtime(runtime_env, copy)
    preparation.remove_unless_running(str(old))
    assert new != old and not old.exists()

    world.session("after", [{"tool": "brain_search", "input": {"query": "pool"}}],
                  gemini_command(gemini, "Search it."), GEMINI_ENV)
    tools, shown = offered_and_shown(world, "after")
    assert tools == expected(), world.sessions["after"].stderr[-3000:]
    assert KNOWN[0] in shown, shown[-2000:]  # the SessionStart hook ran: its digest reached the model


@NEEDS_SETUP
def test_the_first_gemini_session_after_setup_has_the_tools_beside_two_cpu_hogs(
        tmp_path_factory: pytest.TempPathFactory, request: pytest.FixtureRequest) -> None:
    """No MCP answers cached yet, two CPU hogs, and importing the MCP SDK takes 16 s: the tools and the digest
    are in the first request all the same."""
    gemini = find_cli(request, "gemini")
    world = new_world(tmp_path_factory.mktemp("gemini-first-busy"), ("gemini",), KNOWN)
    write_user_config(world, "gemini")
    done = world.pinky("setup", "gemini")
    assert done.returncode == 0, done.stdout + done.stderr
    assert not (world.home / ".pinky" / "cache" / "mcp").exists()  # a first start: nothing cached
    slow = slow_sdk_env(world.root, seconds=16)
    hogs = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(2)]
    try:
        world.session("first", [{"tool": "brain_search", "input": {"query": "deploy"}}],
                      gemini_command(gemini, "Search it."), {**GEMINI_ENV, **slow})
    finally:
        for hog in hogs:
            hog.kill()
            hog.wait()
    tools, shown = offered_and_shown(world, "first")
    assert tools == expected(), world.sessions["first"].stderr[-3000:]
    assert KNOWN[0] in shown and Path(slow["PINKY_TEST_SDK_MARKER"]).exists()  # the slow import did happen
